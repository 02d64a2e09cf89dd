// Whether this process may read and write a SQLite store of the state folder (the arena store, the vote store, the
// payment book, the publishers' credit ledger). A state folder restored by another user (`sudo cp`: root's files,
// 0600) makes SQLite say only "unable to open database file" or "attempt to write a readonly database", as it says
// for a damaged file: every store says instead, in one line, which file, which user and what to do.
import { accessSync, constants, existsSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';

/** SQLite's codes for a file it could not open or write (a permission refusal among other causes). */
const REFUSED_OPEN = /^SQLITE_(CANTOPEN|READONLY|PERM|AUTH)/;

/** Why this user may not use `path` so (the error code: EACCES, EROFS, ...), or null when it may. */
const refusalOf = (path: string, mode: number): string | null => {
  try {
    accessSync(path, mode);
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EACCES';
  }
};

const thisUser = (): string => {
  const uid = process.getuid?.();
  return uid === undefined ? 'this user' : `this user (uid ${uid})`;
};

/** How a problem says the file system is read-only (the remedy is then a mount, not a chown). */
const READ_ONLY = 'is on a read-only file system';

/** What keeps this user from writing `path`: a read-only file system, or its rights. */
const deniedText = (path: string, code: string, verb: string): string =>
  code === 'EROFS' ? `${path} ${READ_ONLY}` : `${thisUser()} may not ${verb} ${path}`;

/** Why this user may not read and write the store's own files (the file, its WAL and shared memory), or null. */
function deniedFile(storeFile: string): string | null {
  for (const file of [storeFile, `${storeFile}-wal`, `${storeFile}-shm`]) {
    const code = existsSync(file) ? refusalOf(file, constants.R_OK | constants.W_OK) : null;
    if (code !== null) return deniedText(file, code, 'read and write');
  }
  return null;
}

/**
 * Why this process may not read and write the store (another user's file, a read-only file, folder or file system),
 * or null. SQLite reports such a file as it reports a damaged one (SQLITE_CANTOPEN, SQLITE_READONLY), but moving it
 * aside as damaged would throw away a sound store.
 */
export function storeAccessProblem(storeFile: string): string | null {
  const denied = deniedFile(storeFile);
  if (denied !== null) return denied;
  const folder = dirname(storeFile);
  const code = refusalOf(folder, constants.W_OK | constants.X_OK);
  return code === null ? null : deniedText(folder, code, 'write in');
}

/** Who to give the files to: this user's name, or its uid when it has none (a container's user). */
function chownTarget(): string {
  try {
    return os.userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'USER');
  }
}

/** What to do about a store this user may not use because of `problem` (storeAccessProblem's words). */
export const storeAccessRemedy = (storeFile: string, problem: string): string =>
  problem.endsWith(READ_ONLY)
    ? 'mount it read-write, or give emi a state folder on a writable one: not damage'
    : 'give the user that runs emi read and write access to the file and its folder ' +
      `(e.g. chown -R ${chownTarget()} ${dirname(storeFile)}): a permission problem, not damage`;

/** The one line for `what` (e.g. "the arena store") at `storeFile` that this user may not use because of `problem`. */
export const storeAccessMessage = (what: string, storeFile: string, problem: string): string =>
  `${what} ${storeFile} cannot be used: ${problem}: ${storeAccessRemedy(storeFile, problem)}`;

/** A store this user may not use, said in one line (the message); `cause` keeps SQLite's own error when there is one. */
export class StoreAccessError extends Error {
  readonly code = 'EMI_STORE_ACCESS';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreAccessError';
  }
}

/**
 * Opens and readies a store with `open` (which may write: a schema, a pragma). A store file this user may not read
 * and write is refused before SQLite opens it (SQLite would open another user's readable file read-only, and fail
 * only at the first write, a vote or a payment later on); a refusal by SQLite that comes from this user's rights on
 * the file or its folder is rethrown as the same one line. Any other error is rethrown as it is.
 */
export function openStoreChecked<T>(what: string, storeFile: string, open: () => T): T {
  const denied = deniedFile(storeFile);
  if (denied !== null) throw new StoreAccessError(storeAccessMessage(what, storeFile, denied));
  try {
    return open();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string' || !REFUSED_OPEN.test(code)) throw error;
    const problem = storeAccessProblem(storeFile);
    if (problem === null) throw error;
    throw new StoreAccessError(storeAccessMessage(what, storeFile, problem), { cause: error });
  }
}
