// A really corrupted arena store: `emi generate` still publishes the market snapshots (the track record marked
// unavailable, the arena files kept as they were), says the remedy and exits non-zero; `emi arena repair` saves
// the damaged file aside and restores the daily backup, after which runs publish everything again.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { integrityOf } from '../generator/state/repair.ts';
import { validatePaidOutput, validatePublicOutput } from '../generator/publish/validate-output.ts';
import { corruptStore, runEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const generate = (asOf: string) =>
  ['generate', '--out', 'site', '--paid', 'paid', '--state', 'var', '--as-of', asOf] as string[];

const readJson = async <T>(dir: string, file: string): Promise<T> =>
  JSON.parse(await readFile(join(dir, file), 'utf8')) as T;

interface MainBrain {
  updated: string;
  status: string;
  public_performance: { status: string; note: string };
  brain: { limitations: string[] };
}

describe('a corrupted arena store', () => {
  it('publishes the market snapshots, exits non-zero with the remedy, and emi arena repair restores', async () => {
    const dir = await tempDir('emi-store-');
    const first = await runEmi(dir, generate('2026-11-21T12:00:00Z'));
    expect(first.code, first.stderr).toBe(0);
    expect(await readdir(join(dir, 'var/backups'))).toEqual([
      expect.stringMatching(/^arena-\d{4}-\d{2}-\d{2}\.sqlite$/),
    ]);
    const arenaBefore = await readFile(join(dir, 'site/api/human-consensus.php'), 'utf8');

    const store = join(dir, 'var/arena.sqlite');
    await corruptStore(store);
    expect(integrityOf(store)).not.toBe('ok');
    const damaged = await runEmi(dir, generate('2026-11-21T13:00:00Z'));
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(
      /^emi: the arena store .*arena\.sqlite is damaged \(.+\): the market snapshots were published, .*run "emi arena repair"/m,
    );
    // The market snapshots of this run are served, the track record marked unavailable with a limitation.
    const brain = await readJson<MainBrain>(dir, 'site/api/main-brain.php');
    expect(brain.updated).toBe('2026-11-21T13:00:00.000Z');
    expect(brain.status).toBe('degraded');
    expect(brain.public_performance.status).toBe('unavailable');
    expect(brain.brain.limitations).toContain(
      'Track record unavailable: the arena store could not be read this run.',
    );
    // The arena files are the last good ones, unchanged (their own times say they are late), and all valid.
    expect(await readFile(join(dir, 'site/api/human-consensus.php'), 'utf8')).toBe(arenaBefore);
    const checks = [
      ...(await validatePublicOutput(join(dir, 'site'))),
      ...(await validatePaidOutput(join(dir, 'paid'))),
    ];
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    const status = await readJson<{ status: string; last_run: { error: string } }>(dir, 'site/status.json');
    expect(status.status).toBe('degraded');
    expect(status.last_run.error).toMatch(/emi arena repair/);
    // The market history got this run's rows; the arena history did not.
    const regime = await readJson<{ rows: Array<{ run_at: string }> }>(
      dir,
      'site/api/history/market-regime/latest.json',
    );
    expect(regime.rows.map((r) => r.run_at)).toEqual([
      '2026-11-21T12:00:00.000Z',
      '2026-11-21T13:00:00.000Z',
    ]);
    const crowd = await readJson<{ rows: Array<{ run_at: string }> }>(
      dir,
      'site/api/history/human-consensus/latest.json',
    );
    expect(crowd.rows.map((r) => r.run_at)).toEqual(['2026-11-21T12:00:00.000Z']);

    const repair = await runEmi(dir, ['arena', 'repair']);
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stdout).toMatch(
      /was damaged .*saved it as arena\.sqlite\.damaged-.* and restored the backup arena-/,
    );
    expect((await readdir(join(dir, 'var'))).some((n) => n.startsWith('arena.sqlite.damaged-'))).toBe(true);
    expect(integrityOf(store)).toBe('ok');

    const healed = await runEmi(dir, generate('2026-11-21T14:00:00Z'));
    expect(healed.code, healed.stderr).toBe(0);
    expect((await readJson<MainBrain>(dir, 'site/api/main-brain.php')).public_performance.status).not.toBe(
      'unavailable',
    );
    expect(await readFile(join(dir, 'site/api/human-consensus.php'), 'utf8')).not.toBe(arenaBefore);
    const healthy = await runEmi(dir, ['arena', 'repair']);
    expect(healthy.stdout).toMatch(/integrity check ok, nothing to repair/);
  }, 240_000);
});
