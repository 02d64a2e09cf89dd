// `emi backup`: a consistent copy of a state folder while emi runs on it. The SQLite stores run in WAL mode, so a
// plain copy of their files misses what sits in the -wal file (the last sales, credits, votes); each store is copied
// with SQLite's online backup API instead, checked, and left as one self-contained file. The copy is written under a
// temporary name (beside DIR, or inside DIR when the operator made it) and moved into place only once complete, so a
// failed or interrupted backup never looks whole.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { PRIVATE } from '../publish/modes.ts';
import {
  backupNotes,
  CONFIG_COPY,
  CURRENT,
  NOTES_FILE,
  PUBLISHED,
  RECORD_FILES,
  STATE_COPY,
  type SkippedStore,
} from './backup-notes.ts';
import { reachedPath } from './backup-place.ts';

/** A generation's folder name in the published store (generations.ts). */
const GENERATION = /^(g|legacy)-\d+-[0-9a-f]+$/;

/** A store of the state folder: any `*.sqlite` at its top (arena, votes, payments, publishers, and any added later). */
export const isStoreName = (name: string): boolean => name.endsWith('.sqlite') && !name.startsWith('.');

/** A name at the top of a state folder, and whether it is a regular file (not a folder, link or socket). */
export interface StateEntry {
  name: string;
  isFile: boolean;
}

/**
 * The stores and run records among the entries at the top of a state folder, in a stable order. Only regular files:
 * a folder or link named `*.sqlite` (a backup someone wrote there, a link to another machine's store) is not a store.
 */
export function planBackup(entries: readonly StateEntry[]): { stores: string[]; records: string[] } {
  const files = entries.filter((entry) => entry.isFile).map((entry) => entry.name);
  return {
    stores: files.filter(isStoreName).sort(),
    records: RECORD_FILES.filter((name) => files.includes(name)),
  };
}

/** The top of a state folder, each entry seen without following links. */
async function stateEntries(state: string): Promise<StateEntry[]> {
  const names = await fs.readdir(state);
  return Promise.all(
    names.map(async (name) => ({
      name,
      isFile: (await fs.lstat(join(state, name)).catch(() => null))?.isFile() ?? false,
    })),
  );
}

/** One store copied. */
export interface StoreCopy {
  name: string;
  bytes: number;
}

/** A store that SQLite finds damaged: skipped, so that the other stores are still backed up. */
export class DamagedStoreError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'DamagedStoreError';
  }
}

/** SQLite's words for a store file it finds damaged or not a database (a store it cannot open may just be private). */
const isDamage = (error: unknown): boolean =>
  /^SQLITE_(CORRUPT|NOTADB)/.test((error as { code?: string }).code ?? '');

/** Pages per step: all of them. SQLite restarts a stepwise backup whenever another connection writes the store. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies one SQLite store with the online backup API in a single step (safe while another process writes it: the
 * step holds one read transaction, so the copy is of one moment, the WAL's committed pages included; a stepwise
 * copy started over at each write and never ended on a busy store), then makes the copy a single file: the arena's
 * run lock is cleared (a restored store must not carry the lock of a run on this machine), the journal mode set to
 * DELETE (the commands set WAL again when they open it), the integrity checked. The copy is 0600: the payment book
 * and the ledger are private, and the arena store is no one else's to read in a backup. Damage is thrown as
 * DamagedStoreError naming the store; any other failure of the copy names the copy (a full disk is the backup's).
 */
export async function copyStore(source: string, target: string): Promise<StoreCopy> {
  let db: Database.Database;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw isDamage(error) ? new DamagedStoreError((error as Error).message, { cause: error }) : error;
  }
  try {
    await db.backup(target, { progress: () => ALL_PAGES });
  } catch (error) {
    if (isDamage(error)) throw new DamagedStoreError((error as Error).message, { cause: error });
    throw new BackupError(target, error);
  } finally {
    db.close();
  }
  return about(target, async () => {
    await fs.chmod(target, PRIVATE.file);
    const problems = finishCopy(target);
    if (problems.length > 0)
      throw new DamagedStoreError(`integrity check of the copy: ${problems.slice(0, 3).join('; ')}`);
    const leftOver = ['-wal', '-shm'].filter((suffix) => existsSync(target + suffix));
    if (leftOver.length > 0) throw new Error(`the copy kept ${leftOver.join(' and ')} files beside it`);
    return { name: basename(target), bytes: (await fs.stat(target)).size };
  });
}

/** Clears the copy's run lock, makes it one file and returns what its integrity check finds wrong (none: sound). */
function finishCopy(target: string): string[] {
  const copy = new Database(target, { fileMustExist: true });
  try {
    const hasRunLock = copy
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_lock'")
      .get();
    if (hasRunLock) copy.prepare('DELETE FROM run_lock').run();
    copy.pragma('journal_mode = DELETE');
    const rows = copy.pragma('integrity_check') as Array<{ integrity_check: string }>;
    return rows.map((row) => row.integrity_check).filter((text) => text !== 'ok');
  } catch (error) {
    if (isDamage(error)) return [(error as Error).message];
    throw error;
  } finally {
    copy.close();
  }
}

/**
 * Copies the served generation (`published/current`) as the real folder it names, and a `current` link to it, so
 * that the copied state folder is laid out as a run leaves one. A run may switch `current` and prune the old
 * generation while it is copied: then the new one is copied instead (once). Null when nothing is published yet.
 */
export async function copyServedGeneration(state: string, targetState: string): Promise<string | null> {
  const store = join(state, PUBLISHED);
  for (let attempt = 0; ; attempt++) {
    const id = await fs.readlink(join(store, CURRENT)).catch(() => null);
    if (id === null) return null;
    if (!GENERATION.test(id)) throw new Error(`${join(store, CURRENT)} names ${id}, not a generation`);
    const target = join(targetState, PUBLISHED);
    await fs.rm(target, { recursive: true, force: true });
    await fs.mkdir(target, { recursive: true });
    try {
      await fs.cp(join(store, id), join(target, id), {
        recursive: true,
        preserveTimestamps: true,
        verbatimSymlinks: true,
        errorOnExist: true,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && attempt === 0) continue;
      throw error;
    }
    await fs.symlink(id, join(target, CURRENT));
    return id;
  }
}

export interface BackupOptions {
  dir: string;
  state: string;
  config?: string;
  version: string;
  now?: () => Date;
  /** Said once per store as it is copied. */
  onStore?: (copy: StoreCopy) => void;
  /** Said once per damaged store left out (`file`: the store in the state folder). */
  onSkipped?: (store: SkippedStore, file: string) => void;
}

export interface BackupResult {
  dir: string;
  stores: StoreCopy[];
  /** Damaged stores left out (the backup is then incomplete: the command exits 1). */
  skipped: SkippedStore[];
  records: string[];
  generation: string | null;
}

/** A failure said as one line naming the file and its cause. */
export class BackupError extends Error {
  constructor(file: string, cause: unknown) {
    super(`${file}: ${(cause as Error).message ?? String(cause)}`, { cause });
    this.name = 'BackupError';
  }
}

/** Runs `step` and names `file` in any failure. */
async function about<T>(file: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof BackupError || error instanceof DamagedStoreError
      ? error
      : new BackupError(file, error);
  }
}

/**
 * Where the backup is written before it is complete: inside DIR when it exists (a folder the operator made, a link
 * to one, a mount point: on DIR's own file system, and DIR itself is never removed), else beside it.
 */
function temporaryFor(realDir: string, dirExists: boolean): string {
  const tag = `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  return dirExists ? join(realDir, tag) : join(dirname(realDir), `${basename(realDir)}${tag}`);
}

/**
 * Removes the unfinished backup when SIGINT or SIGTERM arrives, then ends the way the signal asks (exit 130 or
 * 143). Returns the function that removes the handlers. Synchronous: the process ends right after.
 */
function cleanUpOnSignal(leftovers: () => string[]): () => void {
  const handler = (signal: NodeJS.Signals): void => {
    for (const path of leftovers()) rmSync(path, { recursive: true, force: true });
    removeHandlers();
    process.kill(process.pid, signal);
  };
  const onInt = (): void => handler('SIGINT');
  const onTerm = (): void => handler('SIGTERM');
  const removeHandlers = (): void => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return removeHandlers;
}

/** Moves the finished backup into DIR: renamed in one step, or, when DIR exists, entry by entry, BACKUP.txt last. */
async function moveIntoPlace(
  temporary: string,
  realDir: string,
  dirExists: boolean,
  moved: string[],
): Promise<void> {
  if (!dirExists) {
    await fs.rename(temporary, realDir);
    return;
  }
  const names = (await fs.readdir(temporary)).sort(
    (a, b) => Number(a === NOTES_FILE) - Number(b === NOTES_FILE),
  );
  for (const name of names) {
    await fs.rename(join(temporary, name), join(realDir, name));
    moved.push(join(realDir, name));
  }
  await fs.rmdir(temporary);
  await fs.chmod(realDir, PRIVATE.folder);
}

/**
 * Backs up `state` into `dir` (checked beforehand with targetProblem and backupPlaceProblem): written under a
 * temporary name first (temporaryFor), moved into place when complete, removed on any failure and on SIGINT or
 * SIGTERM. A damaged store is left out and said in the result and in BACKUP.txt; the others are still backed up.
 */
export async function backupState(options: BackupOptions): Promise<BackupResult> {
  const state = resolve(options.state);
  const dir = resolve(options.dir);
  const realDir = await reachedPath(dir);
  const dirExists = existsSync(realDir);
  const { stores, records } = planBackup(await about(state, () => stateEntries(state)));
  const temporary = temporaryFor(realDir, dirExists);
  const moved: string[] = [];
  const removeHandlers = cleanUpOnSignal(() => [temporary, ...moved]);
  try {
    await about(temporary, async () => {
      await fs.mkdir(join(temporary, STATE_COPY), { recursive: true });
      await fs.chmod(temporary, PRIVATE.folder);
      await fs.chmod(join(temporary, STATE_COPY), PRIVATE.folder);
    });
    const copies: StoreCopy[] = [];
    const skipped: SkippedStore[] = [];
    for (const name of stores) {
      const target = join(temporary, STATE_COPY, name);
      try {
        const copy = await about(join(state, name), () => copyStore(join(state, name), target));
        copies.push(copy);
        options.onStore?.(copy);
      } catch (error) {
        if (!(error instanceof DamagedStoreError)) throw error;
        await fs.rm(target, { force: true });
        skipped.push({ name, cause: error.message });
        options.onSkipped?.({ name, cause: error.message }, join(state, name));
      }
    }
    for (const name of records) {
      await about(join(state, name), () => fs.copyFile(join(state, name), join(temporary, STATE_COPY, name)));
    }
    const generation = await about(join(state, PUBLISHED, CURRENT), () =>
      copyServedGeneration(state, join(temporary, STATE_COPY)),
    );
    const config = options.config ? resolve(options.config) : null;
    if (config) {
      const target = join(temporary, CONFIG_COPY);
      await about(config, async () => {
        await fs.copyFile(config, target);
        await fs.chmod(target, PRIVATE.file);
      });
    }
    const notes = backupNotes({
      at: (options.now ?? (() => new Date()))(),
      host: os.hostname(),
      version: options.version,
      state,
      stores: copies,
      skipped,
      records,
      generation,
      config,
      dir,
    });
    await about(join(temporary, NOTES_FILE), async () => {
      await fs.writeFile(join(temporary, NOTES_FILE), notes, { mode: PRIVATE.file });
      await fs.chmod(join(temporary, NOTES_FILE), PRIVATE.file);
    });
    await about(dir, () => moveIntoPlace(temporary, realDir, dirExists, moved));
    return { dir, stores: copies, skipped, records, generation };
  } catch (error) {
    for (const path of [temporary, ...moved]) await fs.rm(path, { recursive: true, force: true });
    throw error;
  } finally {
    removeHandlers();
  }
}
