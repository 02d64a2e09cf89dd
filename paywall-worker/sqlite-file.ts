// The paywall's money records on Node (the payment book, the publishers' credit ledger) in SQLite files that several
// processes may share: WAL, every commit flushed to disk (a settled payment or a consumed credit survives a power
// loss), and a writer that waits its turn instead of failing at once.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openPrivately } from '../generator/publish/modes.ts';
import { openSqliteFile } from '../generator/state/sqlite-open-error.ts';

export function openMoneyDatabase(file: string, schema: string): Database.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // A path too long for SQLite is said as such; a file made here is the worker's alone (0600), whatever the umask.
  const db = openPrivately(file, () => openSqliteFile(file, () => new Database(file)));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(schema);
  return db;
}
