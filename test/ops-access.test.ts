// The arena store belongs to another user (say, a first `sudo emi generate`, then the service's own user): that is a
// permission problem, not damage. The run says so and publishes the market snapshots; `emi arena repair` never moves
// a store it cannot read aside as damaged (it would restore an older backup over a sound store).
import { execFileSync } from 'node:child_process';
import { chmod, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { integrityOf } from '../generator/state/repair.ts';
import { canRunAsNobody, runEmi, runEmiAsNobody } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const switching = canRunAsNobody();
if (!switching) console.warn('ops-access: skipped, running a process as another user needs root and setpriv');

const generate = (asOf: string) =>
  ['generate', '--out', 'site', '--paid', 'paid', '--state', 'var', '--as-of', asOf] as string[];

/** A published folder whose arena store is root's own and private, everything else open to the service's user. */
async function publishedAsRoot(): Promise<{ dir: string; store: string }> {
  const dir = await tempDir('emi-access-');
  const first = await runEmi(dir, generate('2026-11-21T12:00:00Z'));
  expect(first.code, first.stderr).toBe(0);
  execFileSync('chmod', ['-R', 'a+rwX', dir]);
  const store = join(dir, 'var/arena.sqlite');
  await chmod(store, 0o600);
  return { dir, store };
}

describe.skipIf(!switching)('an arena store owned by another user', () => {
  it('is reported as a permission problem, and the market snapshots are still published', async () => {
    const { dir } = await publishedAsRoot();

    const run = await runEmiAsNobody(dir, generate('2026-11-21T13:00:00Z'));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /^emi: the arena store .*arena\.sqlite cannot be used: this user \(uid 65534\) may not read and write .*arena\.sqlite: the market snapshots were published/m,
    );
    expect(run.stderr).not.toMatch(/is damaged/);
    const regime = JSON.parse(await readFile(join(dir, 'site/api/market-regime.php'), 'utf8')) as {
      updated: string;
    };
    expect(regime.updated).toBe('2026-11-21T13:00:00.000Z');
    const status = JSON.parse(await readFile(join(dir, 'site/status.json'), 'utf8')) as {
      status: string;
      last_run: { error: string };
    };
    expect(status.status).toBe('degraded');
    expect(status.last_run.error).toMatch(/may not read and write/);
  }, 120_000);

  it('is never moved aside by emi arena repair as if it were damaged', async () => {
    const { dir, store } = await publishedAsRoot();
    const repair = await runEmiAsNobody(dir, ['arena', 'repair']);
    expect(repair.code).toBe(1);
    expect(repair.stderr).toMatch(
      /^emi arena: repair failed: .*arena\.sqlite cannot be checked: .*left as it is/m,
    );
    expect((await readdir(join(dir, 'var'))).filter((name) => name.includes('damaged'))).toEqual([]);
    expect(integrityOf(store)).toBe('ok');
  }, 120_000);
});
