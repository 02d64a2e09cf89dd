// One generator run at a time: a lock row (owner + expiry) taken in an IMMEDIATE transaction, so two processes
// racing for it are serialised by SQLite itself. An expired lock (a crashed run) is taken over.
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { iso } from '../engines/clock.ts';
import type { ArenaStore } from './store.ts';

export const DEFAULT_LOCK_TTL_MS = 10 * 60_000;

export class ArenaStoreBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArenaStoreBusyError';
  }
}

export interface LockOptions {
  /** Wall-clock source; injected so tests can hold time. */
  now?: () => number;
  /** How long a lock stays valid without being released; a run longer than this could be overtaken. */
  ttlMs?: number;
}

/** A unique owner name for this process's run: host, pid and a random suffix. */
export const runOwner = (): string => `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

interface LockRow {
  owner: string;
  acquired_at_ms: number;
  expires_at_ms: number;
}

export const acquireRunLock = (store: ArenaStore, owner: string, opts: LockOptions = {}): void => {
  const now = (opts.now ?? Date.now)();
  const ttl = opts.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  const take = store.db.transaction(() => {
    const held = store.db
      .prepare('SELECT owner, acquired_at_ms, expires_at_ms FROM run_lock WHERE id = 1')
      .get() as LockRow | undefined;
    if (held && held.owner !== owner && held.expires_at_ms > now) {
      throw new ArenaStoreBusyError(
        `another generator run (${held.owner}) holds the arena store lock since ${iso(held.acquired_at_ms)}; ` +
          `try again after it finishes (the lock expires at ${iso(held.expires_at_ms)})`,
      );
    }
    store.db
      .prepare(
        `INSERT INTO run_lock (id, owner, acquired_at_ms, expires_at_ms) VALUES (1, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, acquired_at_ms = excluded.acquired_at_ms,
           expires_at_ms = excluded.expires_at_ms`,
      )
      .run(owner, now, now + ttl);
  });
  take.immediate();
};

export const releaseRunLock = (store: ArenaStore, owner: string): void => {
  store.db.prepare('DELETE FROM run_lock WHERE id = 1 AND owner = ?').run(owner);
};

/** Runs fn while holding the store's run lock; refuses with ArenaStoreBusyError if another run holds it. */
export const withRunLock = async <T>(
  store: ArenaStore,
  owner: string,
  fn: () => T | Promise<T>,
  opts: LockOptions = {},
): Promise<T> => {
  acquireRunLock(store, owner, opts);
  try {
    return await fn();
  } finally {
    releaseRunLock(store, owner);
  }
};

/** Whether a process with this pid exists (EPERM: it exists but belongs to another user). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
