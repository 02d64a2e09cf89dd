// What the arena store's backups and repair do when something was left half-done or cannot be read.
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupFolder, dailyBackup, integrityOf } from '../generator/state/repair.ts';
import { withRunLock } from '../generator/state/lock.ts';
import { openArenaStore } from '../generator/state/store.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { tempStorePath } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) if (store.db.open) store.close();
});

describe('the daily backup', () => {
  it('is taken even when a killed run left a half-written copy of the same day', async () => {
    const store = openArenaStore(tempStorePath());
    open.push(store);
    const now = Date.parse('2026-11-21T12:00:00Z');
    const folder = backupFolder(store.path);
    await dailyBackup(store, now - 86_400_000);
    // What a run killed (or a disk that filled) during the backup leaves behind.
    await writeFile(join(folder, 'arena-2026-11-21.sqlite.partial'), randomBytes(8192));
    const taken = await dailyBackup(store, now);
    expect(taken).toBe(join(folder, 'arena-2026-11-21.sqlite'));
    expect((await readdir(folder)).sort()).toEqual(['arena-2026-11-20.sqlite', 'arena-2026-11-21.sqlite']);
    expect(integrityOf(taken!)).toBe('ok');
  });
});

describe('the run lock', () => {
  it('a lock that cannot be released (a full disk) never turns the run it guarded into a failure', async () => {
    const store = openArenaStore(tempStorePath());
    open.push(store);
    const ran = await withRunLock(store, 'run-a', () => {
      // What a disk that filled during the run does to the release: SQLite can no longer write.
      store.db.pragma('query_only = ON');
      return 'published';
    });
    expect(ran).toBe('published');
  });
});
