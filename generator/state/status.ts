// `emi arena status` reads the arena store without changing it: it never creates a store where there is none (run
// from the wrong folder, it says so), never migrates one, and needs no write access to the state folder. A store it
// cannot read is named with what to do, as runs name it (repair.ts): damaged, run `emi arena repair` (with this
// store's --state when it is not ./var); a full disk, check the free space; another user's file, run it as that user.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { roundAt, roundInfo } from '../engines/arena/rounds.ts';
import { DEFAULT_LOCK_TTL_MS, describeHeldLock, holderAlive } from './lock.ts';
import { count, roundTally } from './repo.ts';
import { pendingRuns, runCounts } from './run-log.ts';
import { repairRemedy } from './repair.ts';
import { LATEST_SCHEMA_VERSION, migrate, versionOf, type ArenaStore } from './store.ts';

/** A status that cannot be shown, in one line (exit 1). */
export class StatusProblem extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StatusProblem';
  }
}

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
};
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const causeOf = (error: unknown): string => {
  const code = codeOf(error);
  return code ? `${messageOf(error)}, ${code}` : messageOf(error);
};

const thisUser = (): string => {
  const uid = process.getuid?.();
  return uid === undefined ? 'this user' : `this user (uid ${uid})`;
};

/** The store cannot be read, in one line naming the file and what to do. */
export function statusFailure(file: string, error: unknown): StatusProblem {
  if (error instanceof StatusProblem) return error;
  const code = codeOf(error);
  const problem = (text: string) => new StatusProblem(text, { cause: error });
  if (/^SQLITE_(NOTADB|CORRUPT)/.test(code)) {
    return problem(`the arena store ${file} is damaged (${messageOf(error)}): ${repairRemedy(file)}`);
  }
  if (/^SQLITE_(FULL|IOERR)/.test(code) || code === 'ENOSPC' || code === 'EIO') {
    return problem(
      `the arena store ${file} could not be read (${causeOf(error)}): check the free space on its file system ` +
        `(\`df ${dirname(file)}\`)`,
    );
  }
  if (/^SQLITE_(BUSY|LOCKED)/.test(code)) {
    return problem(
      `the arena store ${file} could not be read (${causeOf(error)}): another process holds it locked; try ` +
        `again (\`fuser ${file}\` names that process)`,
    );
  }
  if (code === 'EACCES' || code === 'EPERM' || /^SQLITE_(CANTOPEN|PERM|AUTH|READONLY)/.test(code)) {
    return problem(
      `the arena store ${file} could not be read (${causeOf(error)}): if ${thisUser()} may not read it, run ` +
        '`emi arena status` as the user that runs emi, or give this user read access to it and its folder',
    );
  }
  return problem(`the arena store ${file} could not be read (${causeOf(error)})`);
}

const noStoreMessage = (file: string): string =>
  `no arena store at ${resolve(file)}: no run has used this state folder (the first \`emi generate\` creates ` +
  'it); if runs keep theirs elsewhere, give their --state with --state (or set EMI_STATE_DIR to it) (nothing was ' +
  'created)';

/**
 * An `emi arena` command pointed at a state folder that does not exist (run from another folder than the runs, or
 * without their --state): said as such, with the remedy, rather than as a missing file deep inside it.
 */
export const noStateFolderMessage = (file: string): string =>
  `no state folder ${dirname(resolve(file))}: give the runs' --state with --state (or set EMI_STATE_DIR to it) ` +
  '(nothing was created)';

/**
 * A private in-memory database holding `bytes`, an SQLite file. Its header's WAL marker is set back to the rollback
 * journal: SQLite refuses to open an in-memory copy of a WAL-mode file as it is.
 */
function inMemoryCopy(bytes: Buffer): Database.Database {
  const copy = Buffer.from(bytes);
  if (copy.length >= 20 && copy[18] === 2 && copy[19] === 2) {
    copy[18] = 1;
    copy[19] = 1;
  }
  return new Database(copy);
}

const walHasContent = (file: string): boolean => {
  try {
    return statSync(`${file}-wal`).size > 0;
  } catch {
    return false;
  }
};

export interface StatusStore {
  /** The store as read: the file itself (read-only), or a copy in memory (see openStoreForStatus). */
  store: ArenaStore;
  /** The file's own schema version. */
  fileVersion: number;
  /** Lines for stderr: how the store was read when not as it is. */
  notes: string[];
}

/**
 * Opens the store read-only. Where SQLite cannot open it in place (a folder this user may not write, which a
 * WAL-mode reader needs for its shared-memory file; a full disk), and no write-ahead log holds anything the file
 * lacks, the file is read into memory instead. A store of an older schema is read through a migrated copy in memory,
 * the file left as it is.
 */
export function openStoreForStatus(file: string): StatusStore {
  if (!existsSync(file)) throw new StatusProblem(noStoreMessage(file));
  const notes: string[] = [];
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    versionOf(db); // reads the file: a damaged one fails here
  } catch (error) {
    db?.close();
    db = null;
    if (/^SQLITE_(NOTADB|CORRUPT|BUSY|LOCKED)/.test(codeOf(error)) || walHasContent(file)) {
      throw statusFailure(file, error);
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (readError) {
      throw statusFailure(file, readError);
    }
    try {
      db = inMemoryCopy(bytes);
      versionOf(db);
    } catch (copyError) {
      db?.close();
      throw statusFailure(file, /^SQLITE_(NOTADB|CORRUPT)/.test(codeOf(copyError)) ? copyError : error);
    }
    if (/^SQLITE_(FULL|IOERR)/.test(codeOf(error))) {
      notes.push(
        `the arena store ${file} could not be opened in place (${causeOf(error)}): check the free space on its ` +
          `file system (\`df ${dirname(file)}\`); shown from a copy read into memory`,
      );
    }
  }
  let reader = db;
  const fileVersion = versionOf(reader);
  if (fileVersion < LATEST_SCHEMA_VERSION) {
    const migrated = inMemoryCopy(reader.serialize());
    reader.close();
    migrate(migrated);
    reader = migrated;
  }
  return { store: { db: reader, path: file, close: () => reader.close() }, fileVersion, notes };
}

/** "simulated 13, replay 2": calls per recorded data mode (unknown: recorded before the store kept it). */
const callsByMode = (store: ArenaStore): string => {
  const rows = store.db
    .prepare(
      `SELECT COALESCE(data_mode, 'unknown') AS mode, COUNT(*) AS n FROM brain_predictions
       GROUP BY data_mode ORDER BY data_mode IS NULL, data_mode`,
    )
    .all() as Array<{ mode: string; n: number }>;
  return rows.length === 0 ? 'no data mode yet' : rows.map((r) => `${r.mode} ${r.n}`).join(', ');
};

interface LockRow {
  owner: string;
  expires_at_ms: number;
}

/**
 * The run log in one line. A pending row is a run in progress while its owner holds the lock and runs; any other
 * is a run that never came back (the next run marks it unfinished): counted so now.
 */
function runsLine(store: ArenaStore, lock: LockRow | undefined, now: number): string {
  const counts = runCounts(store.db);
  const live = (owner: string) =>
    lock !== undefined && lock.owner === owner && holderAlive(lock.owner, lock.expires_at_ms, now);
  const pending = pendingRuns(store.db);
  const inProgress = pending.filter((run) => live(run.owner)).length;
  const unfinished = counts.unfinished + pending.length - inProgress;
  const failed = counts.failed + unfinished;
  const their = unfinished === 1 ? 'its' : 'their';
  return (
    `generator runs: ${counts.ok} ok, ${failed} failed` +
    (unfinished > 0
      ? ` (${unfinished} of them unfinished: ended before recording whether ${their} files were published, ` +
        'e.g. killed)'
      : '') +
    (inProgress > 0 ? `; ${inProgress} in progress` : '') +
    (counts.okBeforeOutcomes > 0
      ? `; ${counts.okBeforeOutcomes} of the ok logged before the store recorded whether files were published ` +
        '(schema 3): ok there means the arena step ran'
      : '')
  );
}

/** The file run lock (taken when the store cannot be opened), when one is there. */
function fileLockLine(file: string, now: number): string | null {
  const lockFile = join(dirname(file), 'run.lock');
  try {
    const owner = readFileSync(lockFile, 'utf8');
    const beat = statSync(lockFile).mtimeMs;
    return `file run lock ${lockFile}: ${describeHeldLock(owner, beat + DEFAULT_LOCK_TTL_MS, now)}`;
  } catch {
    return null;
  }
}

export function statusLines(opened: StatusStore, now: number): string[] {
  const { store, fileVersion } = opened;
  const round = roundAt(now);
  const info = roundInfo(round, now);
  const tally = roundTally(store.db, round.id);
  const n = (sql: string) => count(store.db, sql);
  const lock = store.db.prepare('SELECT owner, expires_at_ms FROM run_lock WHERE id = 1').get() as
    LockRow | undefined;
  const version =
    fileVersion < LATEST_SCHEMA_VERSION
      ? `schema version ${fileVersion}; the next run migrates it to ${LATEST_SCHEMA_VERSION}`
      : fileVersion > LATEST_SCHEMA_VERSION
        ? `schema version ${fileVersion}, written by a newer emi: this one knows versions up to ` +
          `${LATEST_SCHEMA_VERSION}, so its runs refuse the store and what follows may be incomplete`
        : `schema version ${fileVersion}`;
  const fileLock = fileLockLine(store.path, now);
  return [
    `store: ${store.path} (${version})`,
    `open round: ${info.round_id} ${info.start} to ${info.end}, ${info.timer} left`,
    `votes in this round: ${tally.human} human, ${tally.synthetic} synthetic`,
    `brain calls: ${n('SELECT COUNT(*) AS n FROM brain_predictions')} ` +
      `(${n('SELECT COUNT(*) AS n FROM brain_predictions WHERE replayed = 1')} replayed; ${callsByMode(store)})`,
    `outcomes: ${n("SELECT COUNT(*) AS n FROM outcomes WHERE status = 'resolved'")} resolved, ` +
      `${n("SELECT COUNT(*) AS n FROM outcomes WHERE status = 'voided'")} voided; ` +
      `lessons: ${n('SELECT COUNT(*) AS n FROM lessons')}`,
    runsLine(store, lock, now),
    lock ? `run lock: ${describeHeldLock(lock.owner, lock.expires_at_ms, now)}` : 'run lock: free',
    ...(fileLock ? [fileLock] : []),
  ];
}
