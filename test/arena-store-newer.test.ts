// An upgrade leaves the previous release running (`emi up`, `emi schedule`) beside a store that a run of the new
// code has migrated. That old process must say what happened and write nothing, not fail on a raw SQLite
// constraint: here "the old code" is this code, and "the newer store" one whose schema is a version ahead of it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../generator/state/store.ts';
import { errorLines, generateArgs, runEmi } from './ops-cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-store-newer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const runLogRows = (file: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM run_log').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('a store migrated by a newer emi', { timeout: 60_000 }, () => {
  it('is refused by `emi generate` in one line saying to restart on the new code; nothing is written to it', async () => {
    const first = await runEmi(dir, generateArgs('2026-11-26T10:00:00Z'));
    expect(first.code, first.stderr).toBe(0);
    const store = join(dir, 'var', 'arena.sqlite');
    const newer = new Database(store);
    newer
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
      .run(LATEST_SCHEMA_VERSION + 1, 'from a newer emi', '2026-11-26T10:30:00Z');
    newer.close();
    const rowsBefore = runLogRows(store);

    const run = await runEmi(dir, generateArgs('2026-11-26T11:00:00Z'));
    expect(run.code).not.toBe(0);
    const lines = errorLines(run);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`schema version ${LATEST_SCHEMA_VERSION + 1}, written by a newer emi`);
    expect(lines[0]).toContain('restart what still runs the old code');
    expect(runLogRows(store)).toBe(rowsBefore);
    const status = JSON.parse(await readFile(join(dir, 'site', 'status.json'), 'utf8')) as {
      status: string;
      last_run: { error: string | null };
    };
    expect(status.status).toBe('failed');
    expect(status.last_run.error).toContain('written by a newer emi');

    // `emi arena status` still reads it, and says why runs refuse it.
    const shown = await runEmi(dir, ['arena', 'status'], { EMI_STATE_DIR: 'var' });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      `(schema version ${LATEST_SCHEMA_VERSION + 1}, written by a newer emi: this one knows versions up to ${LATEST_SCHEMA_VERSION}`,
    );
  });
});
