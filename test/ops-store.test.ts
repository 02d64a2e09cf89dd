// A really corrupted arena store: the run fails with the remedy in one line, and `emi arena repair` saves the
// damaged file aside and restores the daily backup, after which runs publish again.
import { mkdtemp, open, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import type { PipelineOptions } from '../generator/pipeline.ts';
import { integrityOf } from '../generator/state/repair.ts';
import { runEmi } from './ops-cli.ts';

const AS_OF = Date.parse('2026-11-21T12:00:00Z');

async function corrupt(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.write(randomBytes(4096), 0, 4096, 0); // the header page: no longer an SQLite database
  } finally {
    await handle.close();
  }
}

describe('a corrupted arena store', () => {
  it('fails the run with the remedy, and emi arena repair restores the daily backup', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-store-'));
    const options: PipelineOptions = {
      outDir: join(dir, 'site'),
      paidDir: join(dir, 'paid'),
      stateDir: join(dir, 'var'),
      source: 'sim',
      seed: 42,
      asOf: AS_OF,
    };
    expect((await runPipeline(options)).status).toBe('ok');
    const backups = await readdir(join(dir, 'var/backups'));
    expect(backups).toEqual([expect.stringMatching(/^arena-\d{4}-\d{2}-\d{2}\.sqlite$/)]);
    const served = await readFile(join(dir, 'site/api/market-regime.php'), 'utf8');

    const store = join(dir, 'var/arena.sqlite');
    await corrupt(store);
    expect(integrityOf(store)).not.toBe('ok');
    const failed = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(
      /^the arena store .*arena\.sqlite is damaged \(.+\): run "emi arena repair" \(/,
    );
    expect(await readFile(join(dir, 'site/api/market-regime.php'), 'utf8')).toBe(served);

    const repair = await runEmi(dir, ['arena', 'repair']);
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stdout).toMatch(
      /was damaged .*saved it as arena\.sqlite\.damaged-.* and restored the backup arena-/,
    );
    expect((await readdir(join(dir, 'var'))).some((n) => n.startsWith('arena.sqlite.damaged-'))).toBe(true);
    expect(integrityOf(store)).toBe('ok');

    expect((await runPipeline({ ...options, asOf: AS_OF + 7_200_000 })).status).toBe('ok');
    const healthy = await runEmi(dir, ['arena', 'repair']);
    expect(healthy.stdout).toMatch(/integrity check ok, nothing to repair/);
  }, 240_000);
});
