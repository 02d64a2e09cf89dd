// The run log says how each generator run that reached the arena store ended. A run under the run lock (withRunLock)
// writes its row 'pending' in its arena step's transaction, and the lock settles it when the run ends: 'ok' when the
// run returned (its files were published), 'failed' with the cause when it threw or a signal stopped it. A row
// still 'pending' when the next run takes the lock belongs to a run that never came back (kill -9, a power loss, a
// store it could no longer write): that run marks it 'unfinished'. A step run without the lock (a library caller
// that publishes nothing the store knows of) writes 'ok' at once, as the log did before. A run that ends without
// publishing before it reached the store (stale: no price came in; or failed, e.g. stopped while collecting) gets a
// 'failed' row at its end (logUnpublishedRun): it too left the previous files in place.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { iso } from '../engines/clock.ts';
import { logRun } from './repo.ts';
import { RUN_OUTCOMES_FROM_KEY } from './migrations.ts';
import { openArenaStore, type ArenaStore } from './store.ts';

type Db = Database.Database;

/** The run holding the run lock on a store, in this process, and the run-log rows it wrote pending. */
interface ActiveRun {
  owner: string;
  pending: number[];
}

const active = new WeakMap<ArenaStore, ActiveRun>();

/** Called by withRunLock once it holds the lock: arena steps on this store now belong to `owner`'s run. */
export const beginRun = (store: ArenaStore, owner: string): void => {
  active.set(store, { owner, pending: [] });
};

/** The run in progress on this store in this process (under withRunLock), if any. */
export const activeRun = (store: ArenaStore): ActiveRun | undefined => active.get(store);

/** How a run ended, for settleRun. */
export type RunEnd = { status: 'ok' } | { status: 'failed'; detail: string };

/** One line of at most 500 characters: the run log keeps the cause, stderr the whole message. */
export const runDetail = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ').slice(0, 500);

/**
 * Settles the rows the store's active run wrote pending, and ends the run. Never throws: a store that can no
 * longer be written (a disk that filled) must not turn the run's own outcome into this error; it is said in one
 * line, and the next run marks the rows unfinished.
 */
export function settleRun(
  store: ArenaStore,
  end: RunEnd,
  notice: (line: string) => void = (line) => console.error(`emi: ${line}`),
): void {
  const run = active.get(store);
  active.delete(store);
  if (!run || run.pending.length === 0) return;
  const detail = end.status === 'ok' ? null : end.detail;
  try {
    if (!store.db.open) throw new Error('the store was closed before the run ended');
    const update = store.db.prepare(
      "UPDATE run_log SET status = ?, detail = ? WHERE id = ? AND status = 'pending'",
    );
    store.db
      .transaction(() => {
        for (const id of run.pending) update.run(end.status, detail, id);
      })
      .immediate();
  } catch (error) {
    const outcome = end.status === 'ok' ? 'published' : 'failed';
    notice(
      `the run log could not record that this run ${outcome} (${runDetail(error)}): ` +
        'the next run records it as unfinished',
    );
  }
}

/** A run that published nothing, for logUnpublishedRun. */
export interface UnpublishedRun {
  owner: string;
  mode: string;
  asOf: number;
  finishedAt: number;
  /** Why nothing was published: the run's error, a stale one's prefixed "stale: ". */
  detail: string;
}

/**
 * Logs `run`, which ended before it reached the store, 'failed' in the store at `storeFile`. Never throws: the
 * run's own outcome is recorded in last-run.json either way; a store that cannot take the row (damaged, a full
 * disk) is said in one line.
 */
export function logUnpublishedRun(
  storeFile: string,
  run: UnpublishedRun,
  notice: (line: string) => void = (line) => console.error(`emi: ${line}`),
): void {
  let store: ArenaStore | undefined;
  try {
    store = openArenaStore(storeFile);
    logRun(store.db, { ...run, detail: runDetail(run.detail), status: 'failed', arenaStep: false });
  } catch (error) {
    notice(
      `the run log could not record this run (${runDetail(error)}): it is not counted among the failed runs`,
    );
  } finally {
    store?.close();
  }
}

/** What an unfinished row says: the run never recorded how publishing ended. */
export const UNFINISHED_DETAIL =
  'the run ended before it recorded whether its files were published (killed, or the store could not be written ' +
  'then); its arena records were kept';

/**
 * Marks 'unfinished' the pending rows of runs other than `owner`'s; run by the run that takes the lock, in the
 * lock's transaction: no other run can still be publishing then. Returns how many.
 */
export const markUnfinishedRuns = (db: Db, owner: string, now: number): number =>
  db
    .prepare(
      `UPDATE run_log SET status = 'unfinished', detail = ? || ' (run ' || owner || ', found at ' || ? || ')'
       WHERE status = 'pending' AND owner != ?`,
    )
    .run(UNFINISHED_DETAIL, iso(now), owner).changes;

/** The run log in figures. `thisRun`: the row of the run asking (pending while it publishes), counted apart. */
export interface RunCounts {
  total: number;
  ok: number;
  failed: number;
  unfinished: number;
  /** Pending rows other than thisRun: runs still publishing, or dead ones no run has marked yet. */
  pending: number;
  /** Whether thisRun is a pending row. */
  thisRunPending: boolean;
  lastRunAt: number | null;
  /** The newest ok row's time; thisRun's when it is pending (it counts once its files land). */
  lastOkAt: number | null;
  /**
   * Of the ok rows, those logged before the store recorded how runs ended (RUN_OUTCOMES_VERSION): then a row was ok
   * once its arena step ran, so a run killed before its files switched in may be among them.
   */
  okBeforeOutcomes: number;
}

/** The highest run-log id an older emi wrote (see RUN_OUTCOMES_FROM_KEY); 0 when none, or nobody can tell. */
const lastIdBeforeOutcomes = (db: Db): number => {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(RUN_OUTCOMES_FROM_KEY) as
    { value: string } | undefined;
  return row ? Number(row.value) : 0;
};

/**
 * Read from the totals the store's triggers keep (migration 4) and the few pending rows: never a scan of the whole
 * log, which holds half a million rows after a year of runs a minute apart.
 */
export function runCounts(db: Db, thisRun: number | null = null): RunCounts {
  const totals = db
    .prepare('SELECT status, runs, last_finished_at_ms AS last FROM run_totals')
    .all() as Array<{
    status: string;
    runs: number;
    last: number | null;
  }>;
  const runs = (status: string): number => totals.find((t) => t.status === status)?.runs ?? 0;
  const lastOf = (times: Array<number | null | undefined>): number | null =>
    times.reduce<number | null>((max, t) => (t != null && (max === null || t > max) ? t : max), null);
  const pending = db
    .prepare("SELECT id, finished_at_ms AS finished FROM run_log WHERE status = 'pending'")
    .all() as Array<{ id: number; finished: number }>;
  const thisRunRow = pending.find((row) => row.id === thisRun);
  const okBeforeOutcomes = db
    .prepare("SELECT COUNT(*) AS n FROM run_log WHERE id <= ? AND status = 'ok'")
    .get(lastIdBeforeOutcomes(db)) as { n: number };
  return {
    total: totals.reduce((sum, t) => sum + t.runs, 0),
    ok: runs('ok'),
    failed: runs('failed'),
    unfinished: runs('unfinished'),
    pending: pending.length - (thisRunRow ? 1 : 0),
    thisRunPending: thisRunRow !== undefined,
    lastRunAt: lastOf(totals.map((t) => t.last)),
    lastOkAt: lastOf([totals.find((t) => t.status === 'ok')?.last, thisRunRow?.finished]),
    okBeforeOutcomes: okBeforeOutcomes.n,
  };
}

/** The pending rows' owners (for `emi arena status`: a live run's, or a dead one's). */
export const pendingRuns = (db: Db): Array<{ id: number; owner: string }> =>
  db.prepare("SELECT id, owner FROM run_log WHERE status = 'pending' ORDER BY id").all() as Array<{
    id: number;
    owner: string;
  }>;

/**
 * The as-of time of the newest run whose arena step wrote records to the store (run_log.arena_step; every row of a
 * store older than that column), or null when none did. Read through the run_log_stepped index.
 */
export function newestSteppedRunAt(db: Db): number | null {
  const newest = (sql: string) => (db.prepare(sql).get() as { at: number | null }).at;
  try {
    return newest('SELECT MAX(as_of_ms) AS at FROM run_log WHERE arena_step = 1');
  } catch {
    return newest('SELECT MAX(as_of_ms) AS at FROM run_log');
  }
}

/**
 * Why a run describing `asOf` may not run on the store at `storeFile`, or null. The store holds what every run
 * recorded up to its own time, and the published arena figures (totals, latest call, last lesson) are read from all
 * of it: a run dated before the newest one would publish records from after its own time, and record calls and
 * outcomes after the fact. Read only; a store that is missing or cannot be read is no reason (the run says why).
 */
export function pastAsOfProblem(storeFile: string, asOf: number): string | null {
  if (!existsSync(storeFile)) return null;
  let newest: number | null;
  try {
    const db = new Database(storeFile, { readonly: true, fileMustExist: true });
    try {
      newest = newestSteppedRunAt(db);
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
  if (newest === null || asOf >= newest) return null;
  return (
    `the run would describe ${iso(asOf)}, before the newest run on record in ${storeFile} ` +
    `(${iso(newest)}): its arena files would count records made after its own time; to replay the past, give ` +
    'a fresh --state folder'
  );
}
