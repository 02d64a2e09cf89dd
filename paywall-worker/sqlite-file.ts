// The paywall's money records on Node (the payment book, the publishers' credit ledger) in SQLite files that several
// processes may share: WAL, every commit flushed to disk (a settled payment or a consumed credit survives a power
// loss), and a writer that waits its turn instead of failing at once.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openPrivately } from '../generator/publish/modes.ts';
import { openSqliteFile } from '../generator/state/sqlite-open-error.ts';
import { openStoreChecked } from '../generator/state/store-access.ts';

/** Opens a store of money records; `what` names it in a refusal ("the payment book"). */
export function openMoneyDatabase(file: string, schema: string, what: string): Database.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // A path too long for SQLite is said as such; a file made here is the worker's alone (0600), whatever the umask.
  // Another user's file (a state folder restored by `sudo cp`) is said as such, naming the file, this user and
  // what to do, not as SQLite's bare "unable to open database file".
  return openStoreChecked(what, file, () => {
    const db = openPrivately(file, () => openSqliteFile(file, () => new Database(file)));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      db.exec(schema);
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  });
}
