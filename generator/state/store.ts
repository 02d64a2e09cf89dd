// The arena store: one SQLite file in WAL mode, migrated on open.
import fs from 'node:fs';
import path from 'node:path';
import { createHmac, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { MIGRATIONS, RUN_OUTCOMES_FROM_KEY, RUN_OUTCOMES_VERSION } from './migrations.ts';
import { backupFolder } from './repair.ts';
import { PUBLIC, openPrivately } from '../publish/modes.ts';

export const DEFAULT_STORE_PATH = 'var/arena.sqlite';

export interface ArenaStore {
  readonly db: Database.Database;
  readonly path: string;
  close(): void;
}

/** The schema version this code writes: the last migration's. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

export const migrate = (db: Database.Database): void => {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const apply = db.transaction((m: (typeof MIGRATIONS)[number]) => {
    // Re-checked inside the write transaction: two processes opening a fresh store cannot both migrate.
    if (db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version)) return;
    db.exec(m.sql);
    if (m.version === RUN_OUTCOMES_VERSION) {
      db.prepare(
        'INSERT OR REPLACE INTO meta (key, value) SELECT ?, CAST(COALESCE(MAX(id), 0) AS TEXT) FROM run_log',
      ).run(RUN_OUTCOMES_FROM_KEY);
    }
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      m.version,
      m.name,
      new Date().toISOString(),
    );
  });
  for (const m of MIGRATIONS) apply.immediate(m);
};

/** The store's schema version: its last migration's (0 for a new file). */
export const versionOf = (db: Database.Database): number => {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'");
  if (!table.get()) return 0;
  return (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
};

/**
 * A store migrated by a newer emi: this code would write rows its tables no longer take, or take them without what
 * the newer code needs. Refused before anything is written, saying what to do; an older process still running
 * after an upgrade meets this until it is restarted.
 */
export const newerStoreMessage = (file: string, version: number): string =>
  `the arena store ${file} has schema version ${version}, written by a newer emi than this one (which knows ` +
  `versions up to ${LATEST_SCHEMA_VERSION}): restart what still runs the old code (emi up, emi schedule) so that it ` +
  'runs the new one, or run the newer emi; nothing was written to the store';

/** Opens (creating folders and file if needed) and migrates the store. */
export const openArenaStore = (file: string = DEFAULT_STORE_PATH): ArenaStore => {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // The votes' addresses and the run log are the operator's: 0600 when made here, whatever the umask.
  // Written by its owner alone; read by others (`emi arena status` as a monitoring user): it holds the published
  // track record and salted voter hashes, no secret.
  const db = openPrivately(file, () => new Database(file), PUBLIC.file);
  try {
    const version = versionOf(db);
    if (version > LATEST_SCHEMA_VERSION) throw new Error(newerStoreMessage(file, version));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL'); // durable enough in WAL mode: a power loss may drop the last commit only
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000'); // concurrent writers wait their turn instead of failing at once
    const kept =
      version > 0 && version < LATEST_SCHEMA_VERSION ? copyBeforeMigrating(db, file, version) : null;
    migrate(db);
    if (kept !== null) {
      console.error(
        `emi: the arena store ${file} was migrated from schema version ${version} to ${versionOf(db)}; an emi ` +
          `older than this one cannot run its cycles on it any more (${kept})`,
      );
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, path: file, close: () => db.close() };
};

export const schemaVersion = (store: ArenaStore): number => versionOf(store.db);

/**
 * Before a migration: a copy of the store at its old schema (backups/arena-schema-N.sqlite, kept once), so that the
 * release it came from can be run again on it. Says where it is, or why none was kept: the migration goes on either
 * way (it is one transaction per step, and the daily backups stay).
 */
function copyBeforeMigrating(db: Database.Database, file: string, version: number): string {
  const target = path.join(backupFolder(file), `arena-schema-${version}.sqlite`);
  if (fs.existsSync(target)) return `its copy from before is ${target}`;
  const partial = `${target}.${process.pid}.partial`; // two processes migrating at once each write their own
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    db.prepare('VACUUM INTO ?').run(partial);
    fs.renameSync(partial, target);
    return `a copy from before is ${target}`;
  } catch (error) {
    fs.rmSync(partial, { force: true });
    return `no copy from before could be kept: ${(error as Error).message}`;
  }
}

/**
 * The salt for voter hashes: EMI_VOTER_SALT when set, else a random one generated once and kept in the store.
 * Keep it stable: a changed salt makes a returning voter look new (duplicate detection is per hash).
 */
export const voterSalt = (store: ArenaStore, env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env.EMI_VOTER_SALT?.trim();
  if (fromEnv) return fromEnv;
  store.db
    .prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('voter_salt', ?)")
    .run(randomBytes(32).toString('hex'));
  return (store.db.prepare("SELECT value FROM meta WHERE key = 'voter_salt'").get() as { value: string })
    .value;
};

export const hashVoter = (salt: string, voter: string): string =>
  createHmac('sha256', salt).update(voter).digest('hex');
