// SQLite refuses a database path longer than its limit (512 bytes, including the "-journal" it may add) with the
// same SQLITE_CANTOPEN it gives a damaged or unreadable file: a long --state was then called "damaged", and
// "emi arena repair" could not find the store it was told to repair. Every SQLite file opened from the state folder
// says it here instead, naming the file and its length.
import { resolve } from 'node:path';

/** SQLite's limit on a database path (its unix VFS's 512), in bytes, for the file it names with a suffix too. */
export const SQLITE_MAX_PATH_BYTES = 512;
/** The longest suffix SQLite adds to the database's path for a file of its own. */
const LONGEST_SUFFIX = '-journal';
/** The longest database path SQLite opens: 504 bytes (tried with better-sqlite3 12: 504 opens, 505 does not). */
export const SQLITE_LONGEST_PATH_BYTES = SQLITE_MAX_PATH_BYTES - Buffer.byteLength(LONGEST_SUFFIX);

/** The path's length in bytes when SQLite cannot take it (with its journal's suffix), or null. */
export function tooLongForSqlite(file: string): number | null {
  const bytes = Buffer.byteLength(resolve(file));
  return bytes > SQLITE_LONGEST_PATH_BYTES ? bytes : null;
}

/** Whether SQLite failed to open a file (never damage alone: a long path, a missing folder, no permission). */
const isCantOpen = (error: unknown): boolean =>
  /^SQLITE_CANTOPEN/.test(String((error as { code?: unknown }).code ?? ''));

/** What to say when SQLite could not open `file` because its path is too long, or null when that is not why. */
export function longPathProblem(file: string, error: unknown): string | null {
  return isCantOpen(error) ? longPathMessage(file) : null;
}

/** The one line for a path SQLite cannot take, or null when it can. */
export function longPathMessage(file: string): string | null {
  const bytes = tooLongForSqlite(file);
  if (bytes === null) return null;
  return (
    `the path ${resolve(file)} is ${bytes} bytes, longer than SQLite accepts (${SQLITE_LONGEST_PATH_BYTES}, ` +
    `as it adds "${LONGEST_SUFFIX}" within its limit of ${SQLITE_MAX_PATH_BYTES}): use a shorter --state (or ` +
    'EMI_STATE_DIR)'
  );
}

/** Opens a SQLite file with `open`; an open refused for the path's length is rethrown as that, in one line. */
export function openSqliteFile<T>(file: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    const problem = longPathProblem(file, error);
    if (problem === null) throw error;
    throw Object.assign(new Error(problem, { cause: error }), { code: 'EMI_SQLITE_PATH_TOO_LONG' });
  }
}
