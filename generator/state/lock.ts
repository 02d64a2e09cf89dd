// One generator run at a time: a lock row taken in an IMMEDIATE transaction, so two processes racing for it are
// serialised by SQLite itself. The row names its owner (host, pid) and carries a heartbeat that the holder renews
// while it runs, so a lock left behind by a killed run is recognised and taken over at once: its process is gone
// (same host), or its heartbeat stopped.
import { readFileSync, unlinkSync } from 'node:fs';
import { open, readFile, rm, stat, utimes } from 'node:fs/promises';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { iso } from '../engines/clock.ts';
import { beginRun, markUnfinishedRuns, runDetail, settleRun } from './run-log.ts';
import type { ArenaStore } from './store.ts';

/** A lock whose heartbeat is older than this is abandoned (the holder renews it every HEARTBEAT_EVERY_MS). */
export const DEFAULT_LOCK_TTL_MS = 60_000;
export const HEARTBEAT_EVERY_MS = 5_000;

export class ArenaStoreBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArenaStoreBusyError';
  }
}

export interface LockOptions {
  /** Wall-clock source; injected so tests can hold time. */
  now?: () => number;
  /** How long a lock stays valid after its last heartbeat. */
  ttlMs?: number;
  /** Where the one-line takeover notice goes (default stderr). */
  notice?: (line: string) => void;
  /** Whether a process id is alive on this host; injectable for tests. */
  isAlive?: (pid: number) => boolean;
}

/** A unique owner name for this process's run: host, pid and a random suffix. */
export const runOwner = (): string => `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** Host and pid of an owner made by runOwner; null for any other name (tests, older versions). */
export function parseOwner(owner: string): { host: string; pid: number } | null {
  const match = /^(.+):(\d+):[0-9a-f]{8}$/.exec(owner);
  return match ? { host: match[1]!, pid: Number(match[2]) } : null;
}

/**
 * The state letter of a process from Linux's /proc/<pid>/stat ("R", "S", "Z"...), or null where it cannot be read
 * (another system, or no such process). The command name in parentheses may hold spaces and ')': the state is the
 * first field after the last ')'.
 */
export function linuxProcessState(pid: number): string | null {
  if (process.platform !== 'linux') return null;
  const stat = readProcStat(pid);
  if (stat === null) return null;
  return /\)\s+(\S)/.exec(stat.slice(stat.lastIndexOf(')')))?.[1] ?? null;
}

function readProcStat(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
}

/** Zombie (exited, not yet reaped by its parent) and dead: the process will never renew or release a lock. */
const EXITED_STATES: ReadonlySet<string> = new Set(['Z', 'X', 'x']);

export function processIsAlive(pid: number): boolean {
  // kill(pid, 0) succeeds on a zombie: a crashed run whose parent has not reaped it would hold its lock until the
  // heartbeat ran out. Linux says which state the process is in.
  const state = linuxProcessState(pid);
  if (state !== null && EXITED_STATES.has(state)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, but someone else's
  }
}

interface LockRow {
  owner: string;
  acquired_at_ms: number;
  expires_at_ms: number;
}

/** Why a held lock may be taken over, or null when its holder is (as far as we can tell) still running. */
function abandonment(held: LockRow, now: number, isAlive: (pid: number) => boolean): string | null {
  const parsed = parseOwner(held.owner);
  if (parsed && parsed.host === os.hostname() && parsed.pid !== process.pid && !isAlive(parsed.pid)) {
    return `its process ${parsed.pid} is gone`;
  }
  if (held.expires_at_ms <= now) return `its heartbeat stopped at ${iso(held.expires_at_ms)}`;
  return null;
}

function describeOwner(owner: string): string {
  const parsed = parseOwner(owner);
  return parsed ? `pid ${parsed.pid} on ${parsed.host}` : owner;
}

/**
 * A held run lock in words, for `emi arena status`: its holder, its heartbeat, and whether the next run takes it
 * over (on the same terms as acquireRunLock) or the holder is still running.
 */
export function describeHeldLock(
  owner: string,
  expiresAtMs: number,
  now: number,
  isAlive: (pid: number) => boolean = processIsAlive,
): string {
  const held = `held by ${describeOwner(owner)}, heartbeat valid until ${iso(expiresAtMs)}`;
  const reason = abandonment({ owner, acquired_at_ms: 0, expires_at_ms: expiresAtMs }, now, isAlive);
  if (reason !== null) return `${held}: ${reason}; the next run takes it over`;
  const parsed = parseOwner(owner);
  return parsed && parsed.host !== os.hostname()
    ? `${held}: a run on another host (its process cannot be checked from here)`
    : `${held}: a run in progress`;
}

/** Whether the lock's holder is still running, as far as this host can tell (see abandonment). */
export const holderAlive = (
  owner: string,
  expiresAtMs: number,
  now: number,
  isAlive: (pid: number) => boolean = processIsAlive,
): boolean => abandonment({ owner, acquired_at_ms: 0, expires_at_ms: expiresAtMs }, now, isAlive) === null;

const storeBusy = (held: LockRow): ArenaStoreBusyError =>
  new ArenaStoreBusyError(
    `another generator run (${held.owner}) holds the arena store lock since ${iso(held.acquired_at_ms)}; ` +
      `try again after it finishes (${describeOwner(held.owner)}, heartbeat valid until ${iso(held.expires_at_ms)})`,
  );

export const acquireRunLock = (store: ArenaStore, owner: string, opts: LockOptions = {}): void => {
  const now = (opts.now ?? Date.now)();
  const ttl = opts.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  let tookOver: string | null = null;
  const take = store.db.transaction(() => {
    const held = store.db
      .prepare('SELECT owner, acquired_at_ms, expires_at_ms FROM run_lock WHERE id = 1')
      .get() as LockRow | undefined;
    if (held && held.owner !== owner) {
      const reason = abandonment(held, now, opts.isAlive ?? processIsAlive);
      if (reason === null) throw storeBusy(held);
      tookOver = `took over the run lock of ${describeOwner(held.owner)}: ${reason}`;
    }
    // No other run can be publishing now: a run-log row still pending is a run that never came back.
    markUnfinishedRuns(store.db, owner, now);
    store.db
      .prepare(
        `INSERT INTO run_lock (id, owner, acquired_at_ms, expires_at_ms) VALUES (1, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, acquired_at_ms = excluded.acquired_at_ms,
           expires_at_ms = excluded.expires_at_ms`,
      )
      .run(owner, now, now + ttl);
  });
  take.immediate();
  if (tookOver) (opts.notice ?? ((line: string) => console.error(`emi: ${line}`)))(tookOver);
};

/** Renews the heartbeat; false if the lock is no longer ours (taken over after our heartbeat stopped). */
export const renewRunLock = (store: ArenaStore, owner: string, opts: LockOptions = {}): boolean => {
  const now = (opts.now ?? Date.now)();
  const ttl = opts.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  return (
    store.db.prepare('UPDATE run_lock SET expires_at_ms = ? WHERE id = 1 AND owner = ?').run(now + ttl, owner)
      .changes === 1
  );
};

export const releaseRunLock = (store: ArenaStore, owner: string): void => {
  store.db.prepare('DELETE FROM run_lock WHERE id = 1 AND owner = ?').run(owner);
};

/**
 * While nobody else manages shutdown (a one-off `emi generate`), SIGINT and SIGTERM release the lock before the
 * process ends the way the signal asks. Under `emi up` / `emi schedule` their own handler lets the run finish.
 */
function releaseOnSignals(release: (signal?: NodeJS.Signals) => void): () => void {
  const signals = (['SIGINT', 'SIGTERM'] as const).filter((s) => process.listenerCount(s) === 0);
  const handler = (signal: NodeJS.Signals) => {
    release(signal);
    for (const s of signals) process.removeListener(s, handler);
    process.kill(process.pid, signal);
  };
  for (const s of signals) process.on(s, handler);
  return () => {
    for (const s of signals) process.removeListener(s, handler);
  };
}

/**
 * Runs fn while holding the store's run lock; refuses with ArenaStoreBusyError if another live run holds it. The
 * run-log rows an arena step writes meanwhile (pending) are settled before the lock is released: 'ok' when fn
 * returns (the run published), 'failed' with the cause when it throws or SIGINT/SIGTERM stops it (run-log.ts).
 */
export const withRunLock = async <T>(
  store: ArenaStore,
  owner: string,
  fn: () => T | Promise<T>,
  opts: LockOptions = {},
): Promise<T> => {
  acquireRunLock(store, owner, opts);
  beginRun(store, owner);
  let released = false;
  const release = (signal?: NodeJS.Signals) => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    // Settled first, while the lock is ours: a row left pending under a free lock would read as a dead run's.
    if (signal) settleRun(store, { status: 'failed', detail: `stopped by ${signal} before it finished` });
    try {
      if (store.db.open) releaseRunLock(store, owner);
    } catch (error) {
      // A store that can no longer be written (a disk that filled during the run) must not turn the run's own
      // outcome, a published generation maybe, into this error: the next run takes the lock over.
      console.error(
        `emi: the run lock could not be released (${(error as Error).message}): the next run takes it over`,
      );
    }
  };
  const heartbeat = setInterval(() => {
    if (store.db.open) renewRunLock(store, owner, opts);
  }, HEARTBEAT_EVERY_MS);
  heartbeat.unref();
  return holdWhile(release, async () => {
    let value: T;
    try {
      value = await fn();
    } catch (error) {
      settleRun(store, { status: 'failed', detail: runDetail(error) });
      throw error;
    }
    settleRun(store, { status: 'ok' });
    return value;
  });
};

/** Runs `fn` holding a lock: released when it ends, or on SIGINT/SIGTERM (given to `release`) on the way out. */
async function holdWhile<T>(
  release: (signal?: NodeJS.Signals) => void,
  fn: () => T | Promise<T>,
): Promise<T> {
  const stopWatching = releaseOnSignals(release);
  try {
    return await fn();
  } finally {
    stopWatching();
    release();
  }
}

/** How long a takeover marker may stand before it counts as left by a killed claimant (it is held for milliseconds). */
const TAKEOVER_MARKER_TTL_MS = 5_000;

/** Creates `marker` exclusively, waiting while another claimant holds it; one left by a killed claimant is removed. */
async function holdMarker(marker: string): Promise<void> {
  for (;;) {
    try {
      await (await open(marker, 'wx')).close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const since = (await stat(marker).catch(() => null))?.mtimeMs;
    if (since !== undefined && Date.now() - since > TAKEOVER_MARKER_TTL_MS) await rm(marker, { force: true });
    else await sleep(20);
  }
}

/**
 * Replaces a lock file whose holder is gone, one claimant at a time. Removing the file and creating one's own are two
 * steps: a claimant that read the old lock just before another replaced it would remove the new holder's lock. So
 * both steps run under an exclusive `<file>.takeover` marker, and the file is read again there (`stillStale`). False
 * when it is no longer stale (taken over, or released, meanwhile) or someone else created it first: read it again.
 */
export async function takeOverStaleLock(
  file: string,
  stillStale: () => Promise<boolean>,
  create: () => Promise<void>,
): Promise<boolean> {
  const marker = `${file}.takeover`;
  await holdMarker(marker);
  try {
    if (!(await stillStale())) return false;
    await rm(file, { force: true });
    await create();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(marker, { force: true });
  }
}

/**
 * The run lock when the arena store itself cannot be opened (damaged): a file holding the same owner name,
 * created exclusively, its modification time the heartbeat. Taken over on the same terms as the store's lock.
 */
export async function withFileRunLock<T>(
  file: string,
  owner: string,
  fn: () => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  const ttl = opts.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  const take = async () => {
    const handle = await open(file, 'wx');
    await handle.writeFile(owner);
    await handle.close();
  };
  /** The lock file's holder and why it may be taken over (null: still running); null when there is no file. */
  const readHeld = async (): Promise<{ owner: string; reason: string | null } | null> => {
    const beat = (await stat(file).catch(() => null))?.mtimeMs;
    if (beat === undefined) return null;
    const held = await readFile(file, 'utf8').catch(() => '');
    const row = { owner: held, acquired_at_ms: beat, expires_at_ms: beat + ttl };
    return {
      owner: held,
      reason: abandonment(row, (opts.now ?? Date.now)(), opts.isAlive ?? processIsAlive),
    };
  };
  for (;;) {
    try {
      await take();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await readHeld();
    if (held === null) continue; // released meanwhile
    if (held.reason === null) {
      throw new ArenaStoreBusyError(
        `another generator run (${describeOwner(held.owner)}) holds the run lock ${file}; try again after it finishes`,
      );
    }
    const stillStale = async () => {
      const now = await readHeld();
      return now !== null && now.owner === held.owner && now.reason !== null;
    };
    if (await takeOverStaleLock(file, stillStale, take)) {
      (opts.notice ?? ((line: string) => console.error(`emi: ${line}`)))(
        `took over the run lock of ${describeOwner(held.owner)}: ${held.reason}`,
      );
      break;
    }
  }
  const heartbeat = setInterval(() => {
    const at = new Date();
    void utimes(file, at, at).catch(() => undefined);
  }, HEARTBEAT_EVERY_MS);
  heartbeat.unref();
  const release = () => {
    clearInterval(heartbeat);
    try {
      if (readFileSync(file, 'utf8') === owner) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  return holdWhile(release, fn);
}

/**
 * Runs fn holding the run lock inside the store `file` when the store opens, as well as any other lock the caller
 * holds: a damaged store may still open, and runs then lock it there, not in run.lock (see withFileRunLock). A store
 * too damaged to write its lock row has no run writing it either, unless one took the lock before: its row is read
 * and a live holder refused. A store that does not open (or is not there) has no run in it: fn runs as it is.
 */
export async function withStoreRunLockIfItOpens<T>(
  file: string,
  owner: string,
  fn: () => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    db.prepare('SELECT owner FROM run_lock WHERE id = 1').get();
  } catch {
    db?.close();
    return fn();
  }
  const opened = db;
  const store: ArenaStore = { db: opened, path: file, close: () => opened.close() };
  let started = false;
  try {
    return await withRunLock(
      store,
      owner,
      () => {
        started = true;
        return fn();
      },
      opts,
    );
  } catch (error) {
    if (started || error instanceof ArenaStoreBusyError) throw error;
    refuseWhileHeld(store, owner, opts);
    return await fn();
  } finally {
    if (opened.open) opened.close();
  }
}

/** Throws ArenaStoreBusyError while another live run holds the store's lock row; an unreadable row holds nothing. */
function refuseWhileHeld(store: ArenaStore, owner: string, opts: LockOptions): void {
  let held: LockRow | undefined;
  try {
    held = store.db
      .prepare('SELECT owner, acquired_at_ms, expires_at_ms FROM run_lock WHERE id = 1')
      .get() as LockRow | undefined;
  } catch {
    return;
  }
  const now = (opts.now ?? Date.now)();
  if (held && held.owner !== owner && abandonment(held, now, opts.isAlive ?? processIsAlive) === null) {
    throw storeBusy(held);
  }
}
