// All-or-nothing publishing by generations. A store folder holds complete generations side by side and a symlink
// `current` naming the one being served; the folders readers open (`site/api`, `paid/`, `dist/`, ...) are fixed
// symlinks through `current`. A new generation is written in full under a temporary name, renamed complete, and
// then served by one atomic step: a new `current` symlink renamed over the old one. A reader resolves each path
// through `current` once, so it sees the old generation or the new one, never a mix; a failure at any step before
// the switch leaves the old generation served and the half-written one removed.
//
//   var/published/current -> g-1763900000000-1a2b3c
//   var/published/g-1763900000000-1a2b3c/{api,arena,paid}/...
//   site/api -> ../var/published/current/api        paid -> var/published/current/paid
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { HISTORY_INDEX_FILE } from '../../schemas/history.ts';
import { stateFolder } from '../defaults.ts';
import { isSameOrInside } from '../folder-overlap.ts';
import { processIsAlive } from '../state/lock.ts';
import { linkTree } from '../site/link-tree.ts';
import { folderMaker } from './folders.ts';
import { makeFolders, PAID_FOLDERS, PUBLIC, setGenerationModes } from './modes.ts';

/** Generations kept: the one served and the one before it (a rollback target, and readers still busy with it). */
export const KEEP_GENERATIONS = 2;
export const CURRENT = 'current';

/** The file operations publishing uses; tests replace some of them to fail at a chosen step. */
export interface PublishFs {
  mkdir: typeof nodeFs.mkdir;
  open: typeof nodeFs.open;
  rename: typeof nodeFs.rename;
  symlink: typeof nodeFs.symlink;
  readlink: typeof nodeFs.readlink;
  lstat: typeof nodeFs.lstat;
  readdir: typeof nodeFs.readdir;
  rm: typeof nodeFs.rm;
  link: typeof nodeFs.link;
  copyFile: typeof nodeFs.copyFile;
}
export const realFs: PublishFs = nodeFs;

/** A served folder: `path` is made a symlink to `entry` inside the current generation ('' for the whole). */
export interface ServedLink {
  path: string;
  entry: string;
}

export interface Generation {
  /** Folder to write the new generation's files into. */
  readonly dir: string;
  /** The generation served when this one began (absolute), or null on a first run. */
  readonly previous: string | null;
  /**
   * Hard-links the previous generation's file, or files under a folder, into this one (history, arena files). When
   * the served generation's folder is gone or unreadable, the newest generation left is carried over instead (said
   * once on stderr); when none is left, it throws rather than let the history start again from nothing.
   */
  carryOver(path: string): Promise<number>;
  /** Writes `data` to `file` (relative to the generation), flushed to disk. */
  write(file: string, data: string): Promise<void>;
  /** Serves this generation: makes sure every link exists, then switches `current` in one rename. */
  commit(): Promise<void>;
  /** Goes back to the generation served before commit (used when a later step of the run fails). */
  rollback(): Promise<void>;
  /** Removes the unfinished generation; the old one stays served. */
  abort(): Promise<void>;
}

const GENERATION = /^g-(\d+)-[0-9a-f]+$/;
const LEGACY = /^legacy-(\d+)-[0-9a-f]+$/;
const IN_PROGRESS = /^tmp-(\d+)-[0-9a-f]+$/;
/** The fresh link of a switch under way, named with its process: `.current.<pid>.<hex>`. */
const SWITCHING = /^\.current\.(\d+)\.[0-9a-f]+$/;
const suffix = () => randomBytes(4).toString('hex');

/** The store used for a single folder served whole (dist/): `.dist.generations` beside it. */
export const storeBeside = (folder: string): string =>
  join(dirname(resolve(folder)), `.${basename(resolve(folder))}.generations`);

async function readCurrent(store: string, fs: PublishFs): Promise<string | null> {
  return fs.readlink(join(store, CURRENT)).catch(() => null);
}

/** Points `store/current` at `id` with one rename of a fresh symlink. */
async function switchTo(store: string, id: string, fs: PublishFs): Promise<void> {
  const next = join(store, `.${CURRENT}.${process.pid}.${suffix()}`);
  await fs.symlink(id, next);
  try {
    await fs.rename(next, join(store, CURRENT));
  } catch (error) {
    await fs.rm(next, { force: true });
    throw error;
  }
}

/**
 * The target of the relative symlink in `folder` that leads to `entry` through the store's `current`. A relative
 * link is followed from the folder it really sits in, so the folder and the store are resolved through any symlinks
 * first (`site -> srv/www` puts `site/api` in srv/www, whose `..` is srv, not the folder holding `site`); `current`
 * itself is kept in the target, so that the link follows every switch.
 */
async function relativeTarget(folder: string, store: string, entry: string): Promise<string> {
  const [realFolder, realStore] = await Promise.all([nodeFs.realpath(folder), nodeFs.realpath(store)]);
  return relative(realFolder, join(realStore, CURRENT, entry));
}

/** A path through its symlinks, or as given when it does not exist. */
const realOrGiven = (path: string): Promise<string> => nodeFs.realpath(path).catch(() => resolve(path));

/**
 * Why a real folder found where a link belongs must stay where it is, or null when it may be moved aside: it is the
 * working folder or holds it, or it holds the store or the state folder (moved, it would take the operator's
 * checkout, or the arena store and the generations themselves, with it). The commands refuse such folders before
 * anything is written (folder-overlap.ts); this is the last line, for any other way in.
 */
async function unmovableFolder(path: string, store: string): Promise<string | null> {
  const [folder, cwd, realStore, state] = await Promise.all([
    realOrGiven(path),
    realOrGiven(process.cwd()),
    realOrGiven(store),
    realOrGiven(stateFolder()),
  ]);
  if (isSameOrInside(cwd, folder)) return `is or holds the working folder ${cwd}`;
  if (isSameOrInside(realStore, folder)) return `holds the generations ${realStore}`;
  if (isSameOrInside(state, folder)) return `holds the state folder ${state}`;
  // Any run's state folder, not only the environment's: one given with --state is known by the files it keeps.
  const kept = await stateFileWithin(folder);
  if (kept !== null) return `holds a state folder's ${kept}`;
  return null;
}

/** The files only a state folder keeps (the arena store, the run records, the paywall's stores). */
const STATE_FILES: ReadonlySet<string> = new Set([
  'arena.sqlite',
  'last-run.json',
  'run-history.json',
  'arena-votes.sqlite',
  'payments.sqlite',
  'publishers.sqlite',
]);

/** The first state file found in `folder` or below it (a rare, one-off walk: only before a folder is moved). */
async function stateFileWithin(folder: string): Promise<string | null> {
  const entries = await nodeFs.readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  const found = entries.find((entry) => entry.isFile() && STATE_FILES.has(entry.name));
  return found ? join(found.parentPath, found.name) : null;
}

/**
 * Makes each `link.path` a symlink through `current`. Real folders found there (an older layout, or folders made
 * by hand) are moved into the store as one legacy generation, never deleted, and served until the switch; a folder
 * that holds the working folder, the store or the state folder is never moved (the run fails instead).
 */
async function ensureLinks(store: string, links: readonly ServedLink[], fs: PublishFs): Promise<void> {
  let legacy: string | null = null;
  let movedAny = false;
  for (const link of links) {
    const path = resolve(link.path);
    await makeFolders(dirname(path), PUBLIC.folder, fs.mkdir);
    const target = await relativeTarget(dirname(path), store, link.entry);
    const info = await fs.lstat(path).catch(() => null);
    if (info?.isSymbolicLink() && (await fs.readlink(path)) === target) continue;
    if (info?.isDirectory()) {
      const refusal = await unmovableFolder(path, store);
      if (refusal) {
        throw new Error(
          `${link.path} is a real folder where a link belongs, but it ${refusal}: not moved aside ` +
            '(give the command a folder of its own)',
        );
      }
      legacy ??= `legacy-${Date.now()}-${suffix()}`;
      // A folder served whole becomes the legacy generation itself; parts go below one shared legacy folder.
      if (link.entry) await fs.mkdir(join(store, legacy), { recursive: true });
      const kept = await keepRealFolder(path, join(store, legacy, link.entry), legacy, fs);
      if (kept) {
        movedAny = true;
        // Someone's own files (an older layout, a manual copy): kept, and the operator told where they went.
        console.error(
          `emi: ${link.path} was a real folder, not a link: moved it to ${kept} ` +
            '(kept, never removed by emi: delete it once you no longer need it)',
        );
        if ((await readCurrent(store, fs)) === null) await switchTo(store, legacy, fs);
      }
    }
    const temp = join(dirname(path), `.${basename(path)}.${suffix()}.link`);
    await fs.symlink(target, temp);
    try {
      await fs.rename(temp, path); // replaces a symlink or file atomically; fails on a folder
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }
  // Made for folders another run moved first: empty, so not someone's files.
  if (legacy !== null && !movedAny) await fs.rm(join(store, legacy), { recursive: true, force: true });
}

/**
 * Moves a real folder found where a link belongs to `kept` (the legacy generation), or beside it under a hidden name
 * when the store is on another file system; returns where it went, or null when another run moved it first (two
 * builds meeting the old layout at once: the folder is kept where that run put it, and what this run moved was
 * that run's link, the same as its own, so it goes).
 */
async function keepRealFolder(
  path: string,
  kept: string,
  legacy: string,
  fs: PublishFs,
): Promise<string | null> {
  try {
    await fs.rename(path, kept);
    if (!(await fs.lstat(kept)).isSymbolicLink()) return kept;
    await fs.rm(kept, { force: true });
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !(await fs.lstat(path).catch(() => null))?.isDirectory()) return null;
    if (code !== 'EXDEV') throw error;
    // Another file system than the store: kept beside, under a hidden name the build never copies.
    const beside = join(dirname(path), `.${basename(path)}.${legacy}`);
    await fs.rename(path, beside);
    return beside;
  }
}

/** Throws unless every link leads to an existing file or folder (through `current`, once it is switched). */
async function assertLinksResolve(links: readonly ServedLink[]): Promise<void> {
  for (const link of links) {
    await nodeFs.stat(resolve(link.path)).catch((error: NodeJS.ErrnoException) => {
      throw new Error(
        `${link.path} does not lead to the published files after the switch (${error.code ?? error.message})`,
        { cause: error },
      );
    });
  }
}

/**
 * Removes unfinished generations of dead runs and all but the newest complete ones (the served one is kept). Legacy
 * generations (real folders found where a link belongs) are someone's own files: never removed.
 */
export async function cleanGenerations(store: string, fs: PublishFs = realFs): Promise<void> {
  const names = await fs.readdir(store).catch(() => [] as string[]);
  const current = await readCurrent(store, fs);
  const complete: Array<{ name: string; at: number }> = [];
  for (const name of names) {
    const progress = IN_PROGRESS.exec(name);
    if (progress && (Number(progress[1]) === process.pid || !processIsAlive(Number(progress[1])))) {
      await fs.rm(join(store, name), { recursive: true, force: true });
    }
    const done = GENERATION.exec(name);
    if (done && name !== current) complete.push({ name, at: Number(done[1]) });
    // Another run's switch may be under way (its link made, not yet renamed): only a dead run's link goes.
    const switching = SWITCHING.exec(name);
    if (name.startsWith(`.${CURRENT}.`) && !(switching && processIsAlive(Number(switching[1])))) {
      await fs.rm(join(store, name), { force: true });
    }
  }
  complete.sort((a, b) => b.at - a.at);
  for (const { name } of complete.slice(KEEP_GENERATIONS - 1)) {
    await fs.rm(join(store, name), { recursive: true, force: true });
  }
}

/** Background removals per store (absolute path), still under way. */
const tidying = new Map<string, Promise<void>>();

/**
 * Removes the generations a commit has superseded without holding up the run that served the new one: removing a
 * built site is hundreds of file operations that no reader waits for. The store's next generation begins only once
 * it is done, so at most one removal per store is ever under way, and a process stopped part-way leaves only
 * superseded folders, which that next generation removes.
 */
export function tidyInBackground(store: string, fs: PublishFs = realFs): void {
  store = resolve(store);
  const removal: Promise<void> = cleanGenerations(store, fs)
    .catch(() => undefined) // tidiness only: never fails a served generation
    .finally(() => {
      if (tidying.get(store) === removal) tidying.delete(store);
    });
  tidying.set(store, removal);
}

/** A path as an operator typed it: relative to the working folder when inside it. */
function shown(path: string): string {
  const inside = relative(process.cwd(), path);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
}

/** Why a generation folder cannot be read (its error code), or null when it can. */
async function unreadable(folder: string, fs: PublishFs): Promise<string | null> {
  return fs.readdir(folder).then(
    () => null,
    (error: NodeJS.ErrnoException) => error.code ?? error.message,
  );
}

/**
 * The generation to carry files over from: the served one (`previous`, a name in `store`), or, when its folder is
 * gone or unreadable, the newest complete or legacy generation left, said on stderr (the history lives in the
 * generations: starting without it would publish a history restarted from nothing). Throws when none is left.
 */
async function carryOverSource(
  store: string,
  previous: string | null,
  fs: PublishFs,
): Promise<string | null> {
  if (previous === null) return null;
  const served = join(store, previous);
  const problem = await unreadable(served, fs);
  if (problem === null) return served;
  const left = (await fs.readdir(store).catch(() => [] as string[]))
    .map((name) => ({ name, at: Number((GENERATION.exec(name) ?? LEGACY.exec(name))?.[1] ?? NaN) }))
    .filter(({ name, at }) => name !== previous && Number.isFinite(at))
    .sort((a, b) => b.at - a.at || b.name.localeCompare(a.name));
  for (const { name } of left) {
    const folder = join(store, name);
    if ((await unreadable(folder, fs)) !== null) continue;
    console.error(
      `emi: the served generation ${shown(served)} is gone (${problem}): carried the history and files over ` +
        `from ${shown(folder)}, the newest generation left; what only ${previous} held is lost ` +
        '(restore that folder from a backup to look for it)',
    );
    return folder;
  }
  throw new Error(
    `the served generation ${shown(served)} is gone (${problem}) and no other generation is left to carry the ` +
      `published history over from: restore it from a backup, or remove ${shown(join(store, CURRENT))} to ` +
      'start a new history',
  );
}

/**
 * The name of a new generation. Names order the generations for pruning: never behind the newest one, even after
 * the clock has gone back (else the generation served just before would be removed first, while readers may still
 * be in it).
 */
function nextGenerationName(names: readonly string[]): string {
  const newest = Math.max(0, ...names.map((name) => Number(GENERATION.exec(name)?.[1] ?? 0)));
  return `g-${String(Math.max(Date.now(), newest + 1)).padStart(13, '0')}-${suffix()}`;
}

/**
 * Why a copied `current` is not a complete generation, or null when it is. In a store that serves `api`, the
 * published one, every run and backfill writes the history's index (history/store.ts), so a generation without it is
 * an empty or unfinished copy: adopted, it would be carried over from and the history start again from nothing.
 * Other stores (a built site) carry no history, and anything in them is rebuilt.
 */
async function incompleteCopy(
  folder: string,
  links: readonly ServedLink[],
  fs: PublishFs,
): Promise<string | null> {
  if (!links.some((link) => link.entry === 'api')) return null;
  const index = await fs.lstat(join(folder, HISTORY_INDEX_FILE)).catch(() => null);
  return index?.isFile() ? null : `no ${HISTORY_INDEX_FILE}`;
}

/**
 * Makes a `current` that is a real folder a generation again. A copy of the state folder by a tool that follows
 * symlinks (`cp -rL`, `scp -r`, `rsync -rL`, a zip) turns the link into a copy of the generation it named: the
 * served files and the published history. Renamed to a generation name newer than every other (it was the one
 * served), it is listed, carried over from and pruned like any generation, and `current` becomes a link to it
 * again, so the switch that follows is the usual one. The fresh link is made first: `current` is missing only
 * between two renames, and a run that fails after this step leaves the store as a good run would. A folder that
 * holds no complete generation is refused, touching nothing, as a store with no generation left is.
 */
async function adoptCopiedCurrent(store: string, links: readonly ServedLink[], fs: PublishFs): Promise<void> {
  const current = join(store, CURRENT);
  if (!(await fs.lstat(current).catch(() => null))?.isDirectory()) return;
  const refusal = await unmovableFolder(current, store);
  if (refusal) {
    throw new Error(
      `${shown(current)} is a real folder, not a link, but it ${refusal}: not made a generation`,
    );
  }
  const missing = await incompleteCopy(current, links, fs);
  if (missing) {
    throw new Error(
      `${shown(current)} is a real folder, not a link, but holds no complete generation (${missing}: an empty ` +
        'or unfinished copy), so the published history cannot be carried over from it: restore it from a ' +
        `backup, or remove ${shown(current)} to start a new history`,
    );
  }
  const id = nextGenerationName(await fs.readdir(store));
  const adopted = join(store, id);
  const link = join(store, `.${CURRENT}.${process.pid}.${suffix()}`);
  await fs.symlink(id, link);
  try {
    const moved = await fs.rename(current, adopted).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false; // another run renamed it first, and makes the link itself
        throw error;
      },
    );
    if (!moved) return;
    // Another run made it a generation first, and `current` its link: that is what moved, so it is put back.
    if ((await fs.lstat(adopted)).isSymbolicLink()) return await fs.rename(adopted, current);
    await fs.rename(link, current).catch(async (error: unknown) => {
      await fs.rename(adopted, current).catch(() => undefined); // the folder back where it was: nothing lost
      throw error;
    });
  } finally {
    await fs.rm(link, { force: true });
  }
  console.error(
    `emi: ${shown(current)} was a real folder, not a link (the state folder was copied by a tool that follows ` +
      `symlinks): made it the generation ${id}, served and carried over as before, and ${CURRENT} a link to it`,
  );
}

/** Resolves once every background removal has finished. */
export async function generationsTidied(): Promise<void> {
  await Promise.all(tidying.values());
}

/**
 * Starts a generation in `store` that will be served through `links`. Its files are made readable by others when it
 * is served, but those under `privateFolders` (the paid bodies) its owner's alone (modes.ts).
 */
export async function beginGeneration(
  store: string,
  links: readonly ServedLink[],
  fs: PublishFs = realFs,
  privateFolders: readonly string[] = PAID_FOLDERS,
): Promise<Generation> {
  store = resolve(store);
  await tidying.get(store);
  await makeFolders(store, PUBLIC.folder, fs.mkdir);
  // Before pruning, which would otherwise take `current` for no generation and remove the copied ones.
  await adoptCopiedCurrent(store, links, fs);
  await cleanGenerations(store, fs);
  const id = nextGenerationName(await fs.readdir(store));
  const building = join(store, `tmp-${process.pid}-${suffix()}`);
  await fs.mkdir(building);
  const previous = await readCurrent(store, fs);
  const previousDir = previous === null ? null : join(store, previous);
  // Looked for on the first carry-over only: a build that carries nothing over never needs the served folder.
  let carrySource: Promise<string | null> | null = null;
  let state: 'open' | 'committed' | 'done' = 'open';
  const makeFolder = folderMaker(async (folder) => {
    await fs.mkdir(folder, { recursive: true });
  });

  const generation: Generation = {
    dir: building,
    previous: previousDir,
    async carryOver(path) {
      carrySource ??= carryOverSource(store, previous, fs);
      const from = await carrySource;
      if (from === null) return 0;
      const info = await fs.lstat(join(from, path)).catch(() => null);
      if (!info?.isFile()) return linkTree(join(from, path), join(building, path), fs);
      await makeFolder(dirname(join(building, path)));
      await fs.link(join(from, path), join(building, path));
      return 1;
    },
    async write(file, data) {
      const target = join(building, file);
      await makeFolder(dirname(target));
      const handle = await fs.open(target, 'wx');
      try {
        await handle.writeFile(data, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
    },
    async commit() {
      if (state !== 'open') throw new Error('generation already finished');
      for (const link of links) await fs.mkdir(join(building, link.entry), { recursive: true });
      // Whatever the umask the files were written under: nginx (another user) reads the public ones.
      await setGenerationModes(building, privateFolders);
      await fs.rename(building, join(store, id));
      await ensureLinks(store, links, fs);
      await switchTo(store, id, fs);
      state = 'committed';
      // A link that leads nowhere would serve nothing while the run reports success: back to the previous one.
      try {
        await assertLinksResolve(links);
      } catch (error) {
        await generation.rollback().catch(() => undefined);
        throw error;
      }
    },
    async rollback() {
      if (state !== 'committed') return;
      state = 'done';
      if (previous) await switchTo(store, previous, fs);
      await fs.rm(join(store, id), { recursive: true, force: true });
    },
    async abort() {
      if (state !== 'open') return;
      state = 'done';
      await fs.rm(building, { recursive: true, force: true });
      await fs.rm(join(store, id), { recursive: true, force: true });
    },
  };
  return generation;
}

/** Builds a generation with `fill` and serves it; nothing changes for readers if anything fails. */
export async function publishGeneration(
  store: string,
  links: readonly ServedLink[],
  fill: (generation: Generation) => Promise<void>,
  fs: PublishFs = realFs,
  privateFolders: readonly string[] = PAID_FOLDERS,
): Promise<Generation> {
  const generation = await beginGeneration(store, links, fs, privateFolders);
  try {
    await fill(generation);
    await generation.commit();
  } catch (error) {
    await generation.abort().catch(() => undefined);
    throw error;
  }
  tidyInBackground(store, fs);
  return generation;
}
