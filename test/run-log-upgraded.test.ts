// Run-log rows an older emi wrote before the store recorded how runs ended (schema 3) said `ok` once the arena step
// ran, even for a run killed before its files switched in. They cannot be told apart from the rest by their
// contents, so the figures that count them say how many there are. The older store is made as an emi of schema 2
// left it: its run log without the arena_step column and its migration rows stopping at 2, then migrated by this
// code on the next run.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewindToSchema2 } from './arena-fixtures.ts';
import { generateArgs, runEmi } from './ops-cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-runlog-upgraded-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Statistics {
  developer_note: string;
  api_ecosystem: { generator_runs: { ok: number } };
}
const statistics = async (): Promise<Statistics> =>
  JSON.parse(await readFile(join(dir, 'site', 'api', 'statistics.php'), 'utf8')) as Statistics;

const generate = async (asOf: string) => {
  const run = await runEmi(dir, generateArgs(asOf));
  expect(run.code, run.stderr).toBe(0);
};

describe('ok runs logged before the store recorded whether files were published', { timeout: 60_000 }, () => {
  it('are counted and named in statistics.php and emi arena status; a store that always recorded it names none', async () => {
    await generate('2026-11-26T10:00:00Z');
    await generate('2026-11-26T10:01:00Z');
    expect((await statistics()).developer_note).not.toContain('logged before this store recorded');

    // Back to schema 2, as an older emi left the store: the old run log, ok rows meaning "the arena step ran".
    const store = new Database(join(dir, 'var', 'arena.sqlite'));
    rewindToSchema2(store, true);
    store.close();
    // `emi arena status` reads it through a migrated copy: the same count.
    const before = await runEmi(dir, ['arena', 'status'], { EMI_STATE_DIR: 'var' });
    expect(before.stdout).toMatch(
      /generator runs: 2 ok, 0 failed; 2 of the ok logged before the store recorded/,
    );

    await generate('2026-11-26T10:02:00Z');
    const upgraded = await statistics();
    expect(upgraded.api_ecosystem.generator_runs.ok).toBe(3);
    expect(upgraded.developer_note).toContain(
      '2 of the ok generator runs were logged before this store recorded whether a run',
    );
    const status = await runEmi(dir, ['arena', 'status'], { EMI_STATE_DIR: 'var' });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      /generator runs: 3 ok, 0 failed; 2 of the ok logged before the store recorded/,
    );
  });
});
