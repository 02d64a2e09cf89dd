// Who may read what a run writes, whatever the umask it runs under. mkdir's and open's modes are masked by the
// umask: a first run under `umask 077` (root's shell) made the generation stores 0700 for good, and nginx, another
// user, answered 403 for every page; a run under `umask 000` left the paid bodies 0666 in 0777 folders. So the
// modes are set explicitly once a folder or file exists, and only on what the run made: public by definition (the
// generation stores, the generations, the links' folders) is 0755/0644; private (the paid bodies, the SQLite
// stores) is the owner's alone, 0700/0600, which the paywall worker, run as the same user, still reads. A folder
// the operator made keeps its mode.
import { chmodSync, existsSync } from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';

export interface Modes {
  readonly folder: number;
  readonly file: number;
}

/** Read by anyone (nginx is another user), written by the owner alone. */
export const PUBLIC: Modes = { folder: 0o755, file: 0o644 };
/** The owner's alone: the paid bodies, the stores of votes, payments and credits. */
export const PRIVATE: Modes = { folder: 0o700, file: 0o600 };

/** The folders of the published store's generations that hold the paid bodies (`paid -> .../current/paid`). */
export const PAID_FOLDERS: readonly string[] = ['paid'];

/**
 * `mkdir -p` that gives each folder it creates `mode` (chmod: mkdir's own mode is masked by the umask); folders
 * that were there keep theirs.
 */
export async function makeFolders(
  folder: string,
  mode: number,
  mkdir: typeof nodeFs.mkdir = nodeFs.mkdir,
): Promise<void> {
  const first = await mkdir(folder, { recursive: true });
  if (first === undefined) return;
  const top = resolve(first);
  for (let made = resolve(folder); ; made = dirname(made)) {
    await nodeFs.chmod(made, mode);
    if (made === top || dirname(made) === made) return;
  }
}

/**
 * Sets `mode` on `path` unless it has it: most runs find every mode right, and pay one lstat per entry. A file
 * another user owns (carried over by a hard link from a generation an earlier run made as root, say) is left as it
 * is: only its owner may change it, and it was given its mode when it was made.
 */
async function ensureMode(path: string, mode: number): Promise<void> {
  const info = await nodeFs.lstat(path);
  if (info.isSymbolicLink() || (info.mode & 0o7777) === mode) return;
  if (process.getuid !== undefined && info.uid !== process.getuid()) return;
  await nodeFs.chmod(path, mode);
}

/**
 * Gives a generation the run built its modes before it is served: public throughout, private under the folders
 * named (relative to `root`). Symlinks are left alone (chmod would follow them out of the generation).
 */
export async function setGenerationModes(
  root: string,
  privateFolders: readonly string[] = [],
): Promise<void> {
  const isPrivate = (path: string): boolean =>
    privateFolders.some((folder) => path === folder || path.startsWith(`${folder}${sep}`));
  const entries = await nodeFs.readdir(root, { recursive: true, withFileTypes: true });
  await ensureMode(root, PUBLIC.folder);
  await Promise.all(
    entries.map((entry) => {
      if (!entry.isDirectory() && !entry.isFile()) return undefined;
      const path = join(entry.parentPath, entry.name);
      const modes = isPrivate(path.slice(root.length + 1)) ? PRIVATE : PUBLIC;
      return ensureMode(path, entry.isDirectory() ? modes.folder : modes.file);
    }),
  );
}

/**
 * Opens a private file (an SQLite store) with `open`, making it 0600 (or `mode`) when `open` created it: before anything else is
 * written, so that SQLite gives its WAL and shared-memory files the same mode. A file that was there keeps its own.
 */
export function openPrivately<T>(file: string, open: () => T, mode = PRIVATE.file): T {
  const existed = file === ':memory:' || existsSync(file);
  const opened = open();
  if (!existed && existsSync(file)) chmodSync(file, mode);
  return opened;
}
