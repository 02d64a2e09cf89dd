// Keeping the arena store recoverable: a daily online backup (SQLite's backup API, safe while the store is in use),
// an integrity check, and a repair that saves a damaged file aside, then restores the newest sound backup or starts
// fresh. What `emi arena repair` runs, and what a run's error message points to.
import { chmod, copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { stateFolder } from '../defaults.ts';
import { PUBLIC } from '../publish/modes.ts';
import { longPathMessage, longPathProblem } from './sqlite-open-error.ts';
import { storeAccessProblem } from './store-access.ts';
import type { ArenaStore } from './store.ts';

export const BACKUPS_KEPT = 7;
const BACKUP_NAME = /^arena-(\d{4}-\d{2}-\d{2})\.sqlite$/;

export const backupFolder = (storeFile: string): string => join(dirname(storeFile), 'backups');

/** SQLite's own words for a damaged, foreign or unreadable store file. */
export function isDamagedStoreError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return /^SQLITE_(CORRUPT|NOTADB|CANTOPEN)/.test(code);
}

/**
 * What a run says when it cannot use the store at all (it then publishes the market snapshots alone), or null when
 * the error is of another kind: a permission problem (not damage, so not for "emi arena repair"), or damage.
 */
export async function unusableStoreMessage(storeFile: string, error: unknown): Promise<string | null> {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^SQLITE_(CORRUPT|NOTADB|CANTOPEN|READONLY|PERM|AUTH)/.test(code))
    return null;
  // SQLite refuses a long path as it refuses a damaged file: said as what it is, never sent to a repair.
  const tooLong = longPathProblem(storeFile, error);
  if (tooLong !== null) return tooLong;
  const problem = storeAccessProblem(storeFile);
  if (problem !== null) {
    return (
      `the arena store ${storeFile} cannot be used: ${problem}: the market snapshots were published, the arena ` +
      `files kept as they were; give the user that runs emi read and write access to the store and its folder ` +
      `(a permission problem, not damage: do not run "emi arena repair" for it)`
    );
  }
  return isDamagedStoreError(error) ? damagedStoreMessage(storeFile, error) : null;
}

/** A run's failure in the arena store, in one line naming the file and, where it helps, what to do. */
export function storeFailure(storeFile: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error;
  const remedy = /^SQLITE_(BUSY|LOCKED)/.test(code)
    ? `another process holds it locked; the next run tries again (if this repeats, \`fuser ${storeFile}\` names that process)`
    : /^SQLITE_(FULL|IOERR)/.test(code)
      ? `check the free space on its file system (\`df ${dirname(storeFile)}\`)`
      : null;
  const cause = `${(error as Error).message}, ${code}`;
  return new Error(
    `the arena store ${storeFile} could not be used (${cause})${remedy ? `: ${remedy}` : ''}`,
    { cause: error },
  );
}

/** A path as a shell word: quoted only when it holds characters a shell would read. */
export const shellWord = (text: string): string =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The `emi arena repair` command that reaches this store. The bare command reads EMI_STATE_DIR, else ./var of the
 * folder it is typed in: it names the store only when the store is ./var of this working folder and EMI_STATE_DIR is
 * unset. Any other store (a run's --state, a unit's EMI_STATE_DIR, which the operator's shell may not have) is named
 * in full, as an absolute --state, so that the command repairs this store from any folder and never another one.
 */
export function repairCommand(storeFile: string, env: NodeJS.ProcessEnv = process.env): string {
  const folder = dirname(resolve(storeFile));
  const isDefault = !env.EMI_STATE_DIR?.trim() && folder === resolve(stateFolder({}));
  return isDefault ? 'emi arena repair' : `emi arena repair --state ${shellWord(folder)}`;
}

/** What to do about a damaged store, as runs and `emi arena status` say it. */
export const repairRemedy = (storeFile: string): string =>
  `run "${repairCommand(storeFile)}" (it saves the damaged file aside, then restores the newest daily backup or ` +
  'starts a fresh store)';

/** The one-line remedy shown when a run meets a damaged store. */
export const damagedStoreMessage = (storeFile: string, error: unknown): string =>
  `the arena store ${storeFile} is damaged (${(error as Error).message}): the market snapshots were published, ` +
  `the arena files kept as they were; ${repairRemedy(storeFile)}`;

/** Once a day (UTC), copies the store into backups/arena-YYYY-MM-DD.sqlite and keeps the last few. */
export async function dailyBackup(store: ArenaStore, now: number = Date.now()): Promise<string | null> {
  const folder = backupFolder(store.path);
  const target = join(folder, `arena-${new Date(now).toISOString().slice(0, 10)}.sqlite`);
  if (existsSync(target)) return null;
  await mkdir(folder, { recursive: true });
  // A half-written copy left by a run that was killed or met a full disk: SQLite would refuse to back up into it
  // ("file is not a database") on every run of that day. Runs hold the run lock here, so none is still writing one.
  for (const name of await readdir(folder)) {
    if (name.endsWith('.partial')) await rm(join(folder, name), { force: true });
  }
  const partial = `${target}.partial`;
  try {
    await store.db.backup(partial);
    // The backup is taken while this run holds the run lock: a restored copy must not carry it.
    const copy = new Database(partial);
    try {
      copy.prepare('DELETE FROM run_lock').run();
    } finally {
      copy.close();
    }
    await chmod(partial, PUBLIC.file); // as the store: written by its owner alone, read by others
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  const backups = (await readdir(folder)).filter((name) => BACKUP_NAME.test(name)).sort();
  for (const old of backups.slice(0, -BACKUPS_KEPT)) await rm(join(folder, old), { force: true });
  return target;
}

/** 'ok', or what SQLite found wrong with the file. */
export function integrityOf(file: string): string {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    const problems = rows.map((row) => row.integrity_check).filter((text) => text !== 'ok');
    return problems.length === 0 ? 'ok' : problems.slice(0, 3).join('; ');
  } catch (error) {
    return (error as Error).message;
  } finally {
    db?.close();
  }
}

/** Up to when a restored backup holds the store, by this machine's clock, and what says so. */
export interface BackupTime {
  at: number;
  /** 'records': its newest live run or vote (see newestRecordAt); 'file': its modification time (it holds neither). */
  from: 'records' | 'file';
}

export interface RepairResult {
  action: 'healthy' | 'restored' | 'fresh';
  /** Where the damaged file was saved (not for a healthy store). */
  savedAs: string | null;
  backup: string | null;
  /** For a restored backup: up to when it holds the store. */
  backupTime?: BackupTime;
  problem: string | null;
}

/**
 * The newest time a store records by this machine's clock, or null: a live run's (a simulated or replayed run records
 * its market time instead) or a vote's arrival, for votes added by hand (`emi arena vote`, `emi arena import`: their
 * arrival is the clock when they were written; a signed vote's is when its endpoint took it, which is no later).
 * A vote written after this time is not in the store: had it been, this time would be its own or a later one.
 */
function newestRecordAt(db: Database.Database): number | null {
  try {
    const row = db
      .prepare(
        `SELECT MAX(t) AS t FROM (
           SELECT MAX(finished_at_ms) AS t FROM run_log WHERE mode = 'live'
           UNION ALL SELECT MAX(voted_at_ms) FROM votes WHERE source = 'human' AND replayed = 0)`,
      )
      .get() as { t: number | null };
    return row.t;
  } catch {
    return null; // a store without these tables: its file's time says it instead
  }
}

/**
 * Checks a copy of a backup: 'ok' or what SQLite found wrong, and its newest record's time. Opened read and write (it
 * is this repair's own copy), so that closing it removes the -wal and -shm files SQLite makes beside it; the backup
 * itself is only ever read as bytes, so nothing is left beside it and it never changes.
 */
function checkCopy(file: string): { problem: string; newest: number | null } {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { fileMustExist: true });
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    const problems = rows.map((row) => row.integrity_check).filter((text) => text !== 'ok');
    if (problems.length > 0) return { problem: problems.slice(0, 3).join('; '), newest: null };
    return { problem: 'ok', newest: newestRecordAt(db) };
  } catch (error) {
    return { problem: (error as Error).message, newest: null };
  } finally {
    db?.close();
  }
}

/** Removes a file with its -wal and -shm. */
const removeWithSidecars = async (file: string): Promise<void> => {
  for (const suffix of ['', '-wal', '-shm']) await rm(file + suffix, { force: true });
};

/** The newest sound backup as the store file (through a checked copy), and up to when it holds the store; or null. */
async function restoreNewestBackup(
  storeFile: string,
): Promise<{ backup: string; backupTime: BackupTime } | null> {
  const folder = backupFolder(storeFile);
  const backups = existsSync(folder)
    ? (await readdir(folder))
        .filter((name) => BACKUP_NAME.test(name))
        .sort()
        .reverse()
    : [];
  const restoring = `${storeFile}.restoring`;
  for (const name of backups) {
    const backup = join(folder, name);
    await copyFile(backup, restoring);
    const checked = checkCopy(restoring);
    // Closing removed them; a copy SQLite could not open at all may still have left them.
    for (const suffix of ['-wal', '-shm']) await rm(restoring + suffix, { force: true });
    if (checked.problem !== 'ok') {
      await removeWithSidecars(restoring);
      continue;
    }
    const backupTime: BackupTime =
      checked.newest !== null
        ? { at: checked.newest, from: 'records' }
        : { at: (await stat(backup)).mtimeMs, from: 'file' };
    await rename(restoring, storeFile);
    return { backup, backupTime };
  }
  return null;
}

/** Checks the store; if damaged, moves it (and its WAL) aside, then restores the newest sound backup or starts fresh. */
export async function repairStore(storeFile: string, now: number = Date.now()): Promise<RepairResult> {
  const tooLong = longPathMessage(storeFile);
  if (tooLong !== null) throw new Error(tooLong); // no run could have made it: nothing to repair
  if (!existsSync(storeFile))
    return { action: 'fresh', savedAs: null, backup: null, problem: 'no store yet' };
  const problem = integrityOf(storeFile);
  if (problem === 'ok') return { action: 'healthy', savedAs: null, backup: null, problem: null };
  // A store this user cannot open cannot be checked: it may well be sound, so it is never moved aside for that.
  const denied = storeAccessProblem(storeFile);
  if (denied !== null) {
    throw new Error(
      `${storeFile} cannot be checked: ${denied}; it was left as it is (it may be sound): run the repair as ` +
        `the user that owns it, or give this user read and write access to it and its folder`,
    );
  }
  const savedAs = `${storeFile}.damaged-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  await rename(storeFile, savedAs);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(storeFile + suffix)) await rename(storeFile + suffix, savedAs + suffix);
  }
  const restored = await restoreNewestBackup(storeFile);
  if (restored !== null) return { action: 'restored', savedAs, ...restored, problem };
  return { action: 'fresh', savedAs, backup: null, problem };
}

/**
 * What a restored backup lacks. Votes added by hand after its time are not in it (see newestRecordAt). Signed votes
 * (POST /arena/vote) come back by themselves: the import position restored with it is the one of its time, so the
 * next run reads the vote store again from there (endpoint-votes.ts).
 */
export const backupLoss = ({ at, from }: BackupTime): string =>
  `it holds the store as of ${new Date(at).toISOString()} (${from === 'records' ? 'its newest live run or vote' : 'the time the file was written'}); ` +
  'votes added with "emi arena vote" or "emi arena import" after that are not in it and must be added again; ' +
  'signed votes (POST /arena/vote) received since are read again from the vote store by the next run';

export function describeRepair(storeFile: string, result: RepairResult): string {
  switch (result.action) {
    case 'healthy':
      return `${storeFile}: integrity check ok, nothing to repair`;
    case 'restored':
      return (
        `${storeFile} was damaged (${result.problem}); saved it as ${basename(result.savedAs ?? '')} ` +
        `and restored the backup ${basename(result.backup ?? '')}${result.backupTime ? `: ${backupLoss(result.backupTime)}` : ''}`
      );
    case 'fresh':
      return result.savedAs
        ? `${storeFile} was damaged (${result.problem}) and no sound backup exists; saved it as ` +
            `${basename(result.savedAs)}: the next run starts a fresh store`
        : `${storeFile} does not exist yet: the next run creates it`;
  }
}
