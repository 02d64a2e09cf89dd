// Where `emi backup` may write: DIR as the file system reaches it (through symlinks), never inside the state folder
// or the published folders a run writes or prunes, and new or empty; and what a killed backup left beside or inside
// it.
import * as fs from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { isSameOrInside } from '../folder-overlap.ts';
import { storeBeside } from '../publish/generations.ts';
import { processIsAlive } from './lock.ts';

/**
 * A path as the file system will reach it: the deepest existing ancestor through its symlinks, and the rest as given.
 * So `site/api/bk` is seen inside the served generation (site/api is a link there), and `var-link/bk` in the state.
 */
export async function reachedPath(path: string): Promise<string> {
  let existing = resolve(path);
  const rest: string[] = [];
  for (;;) {
    const real = await fs.realpath(existing).catch(() => null);
    if (real !== null) return join(real, ...rest);
    if (dirname(existing) === existing) return resolve(path);
    rest.unshift(basename(existing));
    existing = dirname(existing);
  }
}

/**
 * The folders a backup must not be written into, each with how the refusal names it: the state folder (a run or
 * the next backup reads and prunes it, and a restore moves it away), the published folders a run writes (the working
 * folder's site, paid and dist, which links turn into the state folder's generations, and the build's generations
 * beside dist), all through their symlinks. `emi backup` takes no --out, --paid or --dist: a published folder
 * elsewhere is a link into the state folder (paid, site/api) or beside a `.NAME.generations` store (dist), which
 * backupPlaceProblem refuses by itself.
 */
export async function guardedFolders(
  state: string,
  cwd: string,
): Promise<Array<{ path: string; what: string }>> {
  const named = [
    { path: state, what: `the state folder ${state}` },
    { path: join(cwd, 'site'), what: `the published folder ${join(cwd, 'site')}` },
    { path: join(cwd, 'paid'), what: `the paid folder ${join(cwd, 'paid')}` },
    { path: join(cwd, 'dist'), what: `the build output ${join(cwd, 'dist')}` },
    {
      path: storeBeside(join(cwd, 'dist')),
      what: `the build's generations ${storeBeside(join(cwd, 'dist'))}`,
    },
  ];
  return Promise.all(named.map(async ({ path, what }) => ({ path: await reachedPath(path), what })));
}

/** A generation store a run keeps beside a folder it serves whole (`.dist.generations`). */
const GENERATION_STORE = /^\..+\.generations$/;

/**
 * Why DIR must not hold a backup because of where it is (inside the state folder or a published folder, through any
 * symlink), or null. Pure: `reached` is DIR as the file system reaches it (reachedPath), `guarded` from
 * guardedFolders.
 */
export function backupPlaceProblem(
  dir: string,
  reached: string,
  guarded: ReadonlyArray<{ path: string; what: string }>,
): string | null {
  const inside = guarded.find((folder) => isSameOrInside(reached, folder.path));
  const where =
    inside?.what ??
    (reached.split(sep).some((part) => GENERATION_STORE.test(part))
      ? 'a generation store a run prunes'
      : null);
  if (where === null) return null;
  const path = reached === resolve(dir) ? dir : `${dir} (${reached})`;
  return `${path} is ${inside && reached === inside.path ? '' : 'inside '}${where}: a run or a restore would remove or publish it; name a folder outside the state folder and the published folders`;
}

/** A temporary of a backup: `DIR.tmp-<pid>-<hex>` beside DIR, or `.tmp-<pid>-<hex>` inside it. */
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const temporaryName = (dirName: string | null): RegExp =>
  new RegExp(`^${dirName === null ? '' : escapeRegExp(dirName)}\\.tmp-(\\d+)-[0-9a-f]+$`);

/** The names among `names` that are temporaries (of `dirName`, or inside DIR when null) of processes gone. */
export function staleTemporaries(
  names: readonly string[],
  dirName: string | null,
  isAlive: (pid: number) => boolean = processIsAlive,
): string[] {
  const pattern = temporaryName(dirName);
  return names.filter((name) => {
    const pid = pattern.exec(name)?.[1];
    return pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid));
  });
}

/**
 * Removes what a backup into `dir` killed before it could clean up left behind (SIGKILL, power loss): its
 * temporaries beside DIR and inside it, when their process is gone. A live one (another backup running) is kept.
 */
export async function removeStaleTemporaries(dir: string): Promise<void> {
  const real = await reachedPath(dir);
  const places: Array<[string, string | null]> = [
    [dirname(real), basename(real)],
    [real, null],
  ];
  for (const [folder, dirName] of places) {
    const names = await fs.readdir(folder).catch(() => [] as string[]);
    for (const name of staleTemporaries(names, dirName)) {
      await fs.rm(join(folder, name), { recursive: true, force: true });
    }
  }
}

/** Why DIR cannot take a backup (it holds something, or is not a folder), or null when it is free or empty. */
export async function targetProblem(dir: string): Promise<string | null> {
  const link = await fs.lstat(dir).catch(() => null);
  const info = await fs.stat(dir).catch(() => null);
  if (link !== null && info === null) return `${dir} is a link to nothing: name a new or empty folder`;
  if (info === null) return null;
  if (!info.isDirectory()) return `${dir} is not a folder: name a new or empty folder`;
  const entries = await fs.readdir(dir);
  return entries.length === 0
    ? null
    : `${dir} is not empty (${entries.length} entries): name a new or empty folder (a backup is never mixed with other files)`;
}
