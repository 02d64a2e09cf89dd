// The run log's figures come from totals the store's triggers keep (migration 4), not from counting the whole log
// each run (half a million rows after a year of minute runs). These tests hold the totals to what counting every
// row says: through every way a row is written or settled, and for a store migrated with rows already in it.
import { afterEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import { logRun, type RunStatus } from '../generator/state/repo.ts';
import { markUnfinishedRuns, runCounts, type RunCounts } from '../generator/state/run-log.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import { MIGRATIONS } from '../generator/state/migrations.ts';
import { DROP_SCHEMA_5, tempStorePath } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

/** What counting every row says (the query runCounts ran before migration 4). */
const counted = (db: Database.Database, thisRun: number | null): Omit<RunCounts, 'okBeforeOutcomes'> => {
  const row = db
    .prepare(
      `SELECT COUNT(*) AS total,
         COALESCE(SUM(status = 'ok'), 0) AS ok,
         COALESCE(SUM(status = 'failed'), 0) AS failed,
         COALESCE(SUM(status = 'unfinished'), 0) AS unfinished,
         COALESCE(SUM(status = 'pending' AND id IS NOT ?), 0) AS pending,
         COALESCE(SUM(status = 'pending' AND id IS ?), 0) AS this_run,
         MAX(finished_at_ms) AS last_run,
         MAX(CASE WHEN status = 'ok' OR (status = 'pending' AND id IS ?) THEN finished_at_ms END) AS last_ok
       FROM run_log`,
    )
    .get(thisRun, thisRun, thisRun) as Record<string, number | null>;
  return {
    total: row.total ?? 0,
    ok: row.ok ?? 0,
    failed: row.failed ?? 0,
    unfinished: row.unfinished ?? 0,
    pending: row.pending ?? 0,
    thisRunPending: (row.this_run ?? 0) > 0,
    lastRunAt: row.last_run ?? null,
    lastOkAt: row.last_ok ?? null,
  };
};

const figures = (db: Database.Database, thisRun: number | null) => {
  const { okBeforeOutcomes: _, ...rest } = runCounts(db, thisRun);
  return rest;
};

/** A deterministic stream of numbers in [0, 1), so that a failure replays. */
const sequence = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

const log = (db: Database.Database, status: RunStatus, finishedAt: number): number =>
  logRun(db, {
    owner: `pid-${finishedAt}@host`,
    mode: 'simulated',
    asOf: finishedAt - 500,
    finishedAt,
    status,
    detail: status === 'failed' ? 'stale: no price came in' : null,
    arenaStep: status !== 'failed',
  });

describe('run-log totals', () => {
  it('match counting every row through inserts, settlements and runs marked unfinished', () => {
    const store = track(openArenaStore(tempStorePath()));
    const { db } = store;
    const random = sequence(7);
    const statuses: RunStatus[] = ['ok', 'failed', 'pending'];
    let clock = Date.UTC(2026, 10, 26);
    for (let i = 0; i < 400; i++) {
      // Clocks may go back (a replay, a corrected host clock): the last finish time is a maximum, not the newest row.
      clock += Math.floor(random() * 120_000) - 20_000;
      const roll = random();
      if (roll < 0.6) log(db, statuses[Math.floor(random() * statuses.length)] ?? 'ok', clock);
      else if (roll < 0.8) {
        const pending = db.prepare("SELECT id FROM run_log WHERE status = 'pending' LIMIT 1").get() as
          { id: number } | undefined;
        if (pending)
          db.prepare('UPDATE run_log SET status = ? WHERE id = ?').run(
            random() < 0.5 ? 'ok' : 'failed',
            pending.id,
          );
      } else if (roll < 0.85) markUnfinishedRuns(db, 'nobody', clock);
      const newestPending = db
        .prepare("SELECT MAX(id) AS id FROM run_log WHERE status = 'pending'")
        .get() as {
        id: number | null;
      };
      for (const thisRun of [null, newestPending.id, 999_999])
        expect(figures(db, thisRun), `step ${i}, this run ${thisRun}`).toEqual(counted(db, thisRun));
    }
    const final = runCounts(db);
    expect(final.total).toBeGreaterThan(200);
    expect(final.ok).toBeGreaterThan(0);
    expect(final.failed).toBeGreaterThan(0);
    expect(final.unfinished).toBeGreaterThan(0);
  });

  it('are seeded from the rows of a store migrated from schema 3', () => {
    const file = tempStorePath();
    const fresh = openArenaStore(file);
    // Back to schema 3 as its emi left it: no totals, no triggers; then rows written without them.
    fresh.db.exec(`
      DROP TRIGGER run_totals_insert;
      DROP TRIGGER run_totals_status;
      DROP TRIGGER run_totals_delete;
      DROP INDEX run_log_stepped;
      DROP TABLE run_totals;
      ${DROP_SCHEMA_5}
      DELETE FROM schema_migrations WHERE version >= 4;
    `);
    const t0 = Date.UTC(2026, 10, 1);
    for (let i = 0; i < 50; i++) log(fresh.db, i % 5 === 0 ? 'failed' : 'ok', t0 + i * 60_000);
    const stuck = log(fresh.db, 'pending', t0 + 50 * 60_000);
    fresh.db.prepare("UPDATE run_log SET status = 'unfinished' WHERE id = ?").run(stuck);
    const live = log(fresh.db, 'pending', t0 + 51 * 60_000);
    fresh.close();

    const store = track(openArenaStore(file));
    expect(store.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({
      v: MIGRATIONS.at(-1)?.version,
    });
    expect(runCounts(store.db, live)).toMatchObject({
      total: 52,
      ok: 40,
      failed: 10,
      unfinished: 1,
      pending: 0,
      thisRunPending: true,
      lastRunAt: t0 + 51 * 60_000,
      lastOkAt: t0 + 51 * 60_000,
    });
    // Rows written after the migration move the totals.
    store.db.prepare("UPDATE run_log SET status = 'ok' WHERE id = ?").run(live);
    log(store.db, 'failed', t0 + 52 * 60_000);
    expect(figures(store.db, null)).toEqual(counted(store.db, null));
    expect(runCounts(store.db)).toMatchObject({ total: 53, ok: 41, failed: 11, pending: 0 });
  });
});
