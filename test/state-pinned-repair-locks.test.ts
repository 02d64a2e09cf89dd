// Pins the rules of the arena store's repair, run lock and run log that a mutation audit (05cc84f) found no test
// enforcing: each case below fails if one line of generator/state/repair.ts, lock.ts or run-log.ts is changed the
// way the audit did. They are published promises (README, "Keeping the arena store recoverable" and the run lock):
// `emi arena repair` restores the newest sound backup; a run lock is taken over only from a run known to be gone,
// and only its owner releases it; a run stopped by a signal is logged as failed, not left unfinished.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ArenaStoreBusyError, acquireRunLock, releaseRunLock, withRunLock } from '../generator/state/lock.ts';
import { backupFolder, dailyBackup, repairStore } from '../generator/state/repair.ts';
import { logUnpublishedRun, newestSteppedRunAt, pastAsOfProblem } from '../generator/state/run-log.ts';
import { openArenaStore } from '../generator/state/store.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { step, tempStorePath } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (store: ArenaStore) => (open.push(store), store);
afterEach(() => {
  for (const store of open.splice(0)) if (store.db.open) store.close();
});

const NOW = Date.parse('2026-11-26T12:00:00Z');

/** A small SQLite file whose one row says which file it is. */
function markedDatabase(file: string, mark: string): void {
  const db = new Database(file);
  db.exec('CREATE TABLE mark (value TEXT)');
  db.prepare('INSERT INTO mark VALUES (?)').run(mark);
  db.close();
}

const markOf = (file: string): string => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT value FROM mark').get() as { value: string }).value;
  } finally {
    db.close();
  }
};

/** A damaged store file (not a database at all) in a new folder, with a backups folder beside it. */
async function damagedStore(): Promise<{ file: string; backups: string }> {
  const file = tempStorePath();
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, 'this is not an SQLite database, it was torn by a crash'.repeat(100));
  const backups = backupFolder(file);
  await mkdir(backups, { recursive: true });
  return { file, backups };
}

describe('emi arena repair: which backup it restores', () => {
  // Mutant P5: the backups taken oldest first.
  it('the newest of two sound backups', async () => {
    const { file, backups } = await damagedStore();
    markedDatabase(join(backups, 'arena-2026-11-24.sqlite'), 'older');
    markedDatabase(join(backups, 'arena-2026-11-25.sqlite'), 'newer');
    const result = await repairStore(file, NOW);
    expect(result.action).toBe('restored');
    expect(result.backup).toBe(join(backups, 'arena-2026-11-25.sqlite'));
    expect(markOf(file)).toBe('newer');
  });

  // Mutant P6: a backup restored without its integrity checked.
  it('the older sound backup when the newest one is damaged too', async () => {
    const { file, backups } = await damagedStore();
    markedDatabase(join(backups, 'arena-2026-11-24.sqlite'), 'older');
    await writeFile(join(backups, 'arena-2026-11-25.sqlite'), 'a torn copy, not a database'.repeat(200));
    const result = await repairStore(file, NOW);
    expect(result.action).toBe('restored');
    expect(result.backup).toBe(join(backups, 'arena-2026-11-24.sqlite'));
    expect(markOf(file)).toBe('older');
  });

  // Mutant P4: the damaged store's -wal and -shm left beside the restored store (SQLite would replay that WAL into it).
  it('moves the damaged store’s -wal and -shm aside with it', async () => {
    const { file, backups } = await damagedStore();
    await writeFile(`${file}-wal`, 'the damaged store’s write-ahead log');
    await writeFile(`${file}-shm`, 'the damaged store’s shared memory');
    markedDatabase(join(backups, 'arena-2026-11-25.sqlite'), 'newer');
    const result = await repairStore(file, NOW);
    expect(result.savedAs).toBe(`${file}.damaged-2026-11-26T12-00-00-000Z`);
    expect(existsSync(`${result.savedAs}-wal`)).toBe(true);
    expect(existsSync(`${result.savedAs}-shm`)).toBe(true);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    expect(markOf(file)).toBe('newer');
  });
});

describe('the daily backup', () => {
  // Mutant P1: the backup keeps the run lock of the run that took it.
  it('taken by a run holding the run lock, carries no run lock', async () => {
    const store = track(openArenaStore(tempStorePath()));
    const taken = await withRunLock(store, 'the-run', () => dailyBackup(store, NOW));
    expect(taken).toBe(join(backupFolder(store.path), 'arena-2026-11-26.sqlite'));
    const copy = new Database(taken!, { readonly: true });
    try {
      expect(copy.prepare('SELECT COUNT(*) AS n FROM run_lock').get()).toEqual({ n: 0 });
    } finally {
      copy.close();
    }
  });
});

describe('the run lock', () => {
  const heldBy = (store: ArenaStore, owner: string, expiresAt: number) =>
    store.db
      .prepare('INSERT INTO run_lock (id, owner, acquired_at_ms, expires_at_ms) VALUES (1, ?, ?, ?)')
      .run(owner, expiresAt - 60_000, expiresAt);
  const holder = (store: ArenaStore) =>
    (store.db.prepare('SELECT owner FROM run_lock WHERE id = 1').get() as { owner: string } | undefined)
      ?.owner;

  // Mutant L1: a lock of another host taken over because a process of that pid is not alive here.
  it('of a run on another host, heartbeat still valid, is not taken over (its process cannot be checked here)', () => {
    const store = track(openArenaStore(tempStorePath()));
    heldBy(store, 'otherhost.invalid:12345:abcdef12', NOW + 30_000);
    const notices: string[] = [];
    expect(() =>
      acquireRunLock(store, 'this-run', {
        now: () => NOW,
        isAlive: () => false,
        notice: (l) => notices.push(l),
      }),
    ).toThrow(ArenaStoreBusyError);
    expect(holder(store)).toBe('otherhost.invalid:12345:abcdef12');
    expect(notices).toEqual([]);
  });

  // Mutant L5: release deletes the lock whoever holds it.
  it('released by a run whose lock was taken over, stays with the run that took it over', () => {
    const store = track(openArenaStore(tempStorePath()));
    acquireRunLock(store, 'run-a', { now: () => NOW, ttlMs: 1_000 });
    acquireRunLock(store, 'run-b', { now: () => NOW + 5_000, ttlMs: 60_000, notice: () => undefined });
    expect(holder(store)).toBe('run-b');
    releaseRunLock(store, 'run-a');
    expect(holder(store)).toBe('run-b');
    releaseRunLock(store, 'run-b');
    expect(holder(store)).toBeUndefined();
  });

  // Mutant L6: a run stopped by SIGTERM releases the lock without settling its run-log row (left pending, later
  // counted "unfinished" instead of "failed").
  it('a run stopped by SIGTERM is logged failed, "stopped by SIGTERM", and its lock released', async () => {
    const file = tempStorePath();
    const script = `
      const { openArenaStore } = await import(${JSON.stringify(resolve('generator/state/store.ts'))});
      const { withRunLock } = await import(${JSON.stringify(resolve('generator/state/lock.ts'))});
      const { runArenaStep } = await import(${JSON.stringify(resolve('generator/state/step.ts'))});
      const { TRACKED_ASSETS } = await import(${JSON.stringify(resolve('schemas/common.ts'))});
      const store = openArenaStore(${JSON.stringify(file)});
      const asOf = ${NOW};
      setInterval(() => {}, 1000);
      await withRunLock(store, 'the-run', async () => {
        runArenaStep({
          store,
          asOf,
          clock: { asOf, generatedAt: asOf, nextUpdateDue: asOf + 60000 },
          mode: 'simulated',
          seed: 7,
          brainCalls: TRACKED_ASSETS.map((asset) => ({ asset, bias: 'bullish', confidence: 60, price: 100 })),
          prices: Object.fromEntries(TRACKED_ASSETS.map((asset) => [asset, 100])),
        });
        console.log('stepped');
        await new Promise(() => {});
      });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    let output = '';
    const ended = new Promise<NodeJS.Signals | null>((resolvePromise) =>
      child.once('close', (_code, signal) => resolvePromise(signal)),
    );
    try {
      await new Promise<void>((resolvePromise, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('stepped')) resolvePromise();
        });
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        void ended.then(() => reject(new Error(`the run ended before its arena step: ${output}`)));
      });
      child.kill('SIGTERM');
      expect(await ended).toBe('SIGTERM');
    } finally {
      child.kill('SIGKILL');
      await ended;
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT owner, status, detail FROM run_log').all()).toEqual([
        { owner: 'the-run', status: 'failed', detail: 'stopped by SIGTERM before it finished' },
      ]);
      expect(db.prepare('SELECT COUNT(*) AS n FROM run_lock').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  }, 60_000);
});

describe('a replay of the past (--as-of before the newest run)', () => {
  // Mutant RL6: every run on record counted, also one that never reached the arena.
  it('is not blocked by a later run that failed before its arena step', () => {
    const store = track(openArenaStore(tempStorePath()));
    const stepped = Date.parse('2026-11-26T12:01:00Z');
    step(store, stepped);
    const file = store.path;
    store.close();
    // A later run that published nothing (no price came in) and never stepped the arena.
    logUnpublishedRun(file, {
      owner: 'a-stale-run',
      mode: 'simulated',
      asOf: Date.parse('2026-11-26T23:01:00Z'),
      finishedAt: Date.parse('2026-11-26T23:01:30Z'),
      detail: 'stale: no price came in',
    });
    const reopened = track(openArenaStore(file));
    expect(newestSteppedRunAt(reopened.db)).toBe(stepped);
    reopened.close();
    expect(pastAsOfProblem(file, Date.parse('2026-11-26T21:05:00Z'))).toBeNull();
    expect(pastAsOfProblem(file, Date.parse('2026-11-26T12:00:00Z'))).toMatch(
      /^the run would describe 2026-11-26T12:00:00\.000Z, before the newest run on record in .* \(2026-11-26T12:01:00\.000Z\)/,
    );
  });
});
