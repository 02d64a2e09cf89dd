// `emi backup`: a consistent copy of a state folder while emi runs on it. The SQLite stores run in WAL mode, so a
// plain copy of their files misses what sits in the -wal file (the last sales, credits, votes); each store is copied
// with SQLite's online backup API instead, checked, and left as one self-contained file. The copy is written under a
// temporary name beside DIR and renamed into place only once complete, so a failed backup never looks whole.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { PRIVATE } from '../publish/modes.ts';
import { shellWord } from './repair.ts';

/** The folder of DIR holding the state folder's copy: a restore is `cp -a DIR/state <state folder>`. */
export const STATE_COPY = 'state';
/** The configuration file's copy in DIR. */
export const CONFIG_COPY = 'emi.config.json';
export const NOTES_FILE = 'BACKUP.txt';
/** The run records copied beside the stores (small JSON files, written whole by a rename). */
export const RECORD_FILES: readonly string[] = ['last-run.json', 'run-history.json'];
/** The published store in the state folder (pipeline.ts publishedStore) and its link to the served generation. */
const PUBLISHED = 'published';
const CURRENT = 'current';
const GENERATION = /^(g|legacy)-\d+-[0-9a-f]+$/;

/** A store of the state folder: any `*.sqlite` at its top (arena, votes, payments, publishers, and any added later). */
export const isStoreName = (name: string): boolean => name.endsWith('.sqlite') && !name.startsWith('.');

/** The stores and run records among the names at the top of a state folder, in a stable order. */
export function planBackup(names: readonly string[]): { stores: string[]; records: string[] } {
  return {
    stores: names.filter(isStoreName).sort(),
    records: RECORD_FILES.filter((name) => names.includes(name)),
  };
}

/** Why DIR cannot take a backup (it holds something, or is not a folder), or null when it is free or empty. */
export async function targetProblem(dir: string): Promise<string | null> {
  const info = await fs.stat(dir).catch(() => null);
  if (info === null) return null;
  if (!info.isDirectory()) return `${dir} is not a folder: name a new or empty folder`;
  const entries = await fs.readdir(dir);
  return entries.length === 0
    ? null
    : `${dir} is not empty (${entries.length} entries): name a new or empty folder (a backup is never mixed with other files)`;
}

/** One store copied. */
export interface StoreCopy {
  name: string;
  bytes: number;
}

/**
 * Copies one SQLite store with the online backup API (safe while another process writes it: the copy is of one
 * moment, the WAL's committed pages included), then makes the copy a single file: the arena's run lock is cleared
 * (a restored store must not carry the lock of a run on this machine), the journal mode set to DELETE (the commands
 * set WAL again when they open it), the integrity checked. The copy is 0600: the payment book and the ledger are
 * private, and the arena store is no one else's to read in a backup.
 */
export async function copyStore(source: string, target: string): Promise<StoreCopy> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    await db.backup(target);
  } finally {
    db.close();
  }
  await fs.chmod(target, PRIVATE.file);
  const copy = new Database(target, { fileMustExist: true });
  try {
    const hasRunLock = copy
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_lock'")
      .get();
    if (hasRunLock) copy.prepare('DELETE FROM run_lock').run();
    copy.pragma('journal_mode = DELETE');
    const rows = copy.pragma('integrity_check') as Array<{ integrity_check: string }>;
    const problems = rows.map((row) => row.integrity_check).filter((text) => text !== 'ok');
    if (problems.length > 0)
      throw new Error(`integrity check of the copy: ${problems.slice(0, 3).join('; ')}`);
  } finally {
    copy.close();
  }
  const leftOver = ['-wal', '-shm'].filter((suffix) => existsSync(target + suffix));
  if (leftOver.length > 0) throw new Error(`the copy kept ${leftOver.join(' and ')} files beside it`);
  return { name: basename(target), bytes: (await fs.stat(target)).size };
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

/** What BACKUP.txt says: enough to know what the folder is and to restore it without reading the code. */
export interface BackupNotes {
  at: Date;
  host: string;
  version: string;
  state: string;
  stores: readonly StoreCopy[];
  records: readonly string[];
  generation: string | null;
  config: string | null;
  /** The backup folder, as the restore commands name it. */
  dir: string;
}

const STORE_ROLES: Readonly<Record<string, string>> = {
  'arena.sqlite': 'the arena: rounds, brain calls, votes, outcomes, lessons, the run log',
  'arena-votes.sqlite': 'the wallet-signed arena votes the paywall took, for the next run to import',
  'payments.sqlite': 'the payment book: settled payments, so that a buyer resending one gets the file again',
  'publishers.sqlite': "the publishers' credit ledger: credits, reservations, grants, sales",
};

const RECORD_ROLES: Readonly<Record<string, string>> = {
  'last-run.json': "the last run's report (emi arena status reads it)",
  'run-history.json': "the recent runs' outcomes (the status page's run history)",
};

/** BACKUP.txt: when, from where, by which emi, what each file is, and how to restore. Pure. */
export function backupNotes(notes: BackupNotes): string {
  const storeLines = notes.stores.map(
    (store) =>
      `  ${STATE_COPY}/${store.name} (${store.bytes} bytes): ${STORE_ROLES[store.name] ?? 'an SQLite store'}`,
  );
  const recordLines = notes.records.map(
    (name) => `  ${STATE_COPY}/${name}: ${RECORD_ROLES[name] ?? 'a run record'}`,
  );
  const generationLine = notes.generation
    ? [
        `  ${STATE_COPY}/${PUBLISHED}/${notes.generation}/ and ${STATE_COPY}/${PUBLISHED}/current -> it: the served generation`,
      ]
    : ['  (nothing published yet: the first run after the restore publishes)'];
  const configLines = notes.config
    ? [`  ${CONFIG_COPY}: the configuration file ${notes.config}`]
    : ['  (no configuration file: none was given with --config or EMI_CONFIG)'];
  const state = notes.state;
  return [
    'emi backup',
    `taken: ${notes.at.toISOString()}`,
    `host: ${notes.host}`,
    `emi version: ${notes.version}`,
    `state folder: ${state}`,
    '',
    'Files:',
    ...storeLines,
    ...recordLines,
    ...generationLine,
    ...configLines,
    '',
    "Each store was copied with SQLite's online backup API while emi ran, checked (PRAGMA integrity_check: ok) and",
    'is one self-contained file (no -wal or -shm beside it). Not copied: lock and claim files, temporary files, the',
    "arena's daily copies (backups/: the restored machine makes its own), older generations.",
    '',
    'Restore (emi stopped, e.g. `systemctl stop emi` or Ctrl-C; then start it again):',
    `  mv ${shellWord(state)} ${shellWord(`${state}.before-restore`)}`,
    `  cp -a ${shellWord(join(notes.dir, STATE_COPY))} ${shellWord(state)}`,
    ...(notes.config
      ? [`  and the configuration: cp ${shellWord(join(notes.dir, CONFIG_COPY))} ${shellWord(notes.config)}`]
      : []),
    '(on another machine, or at another path, name the two folders as they are there). Never copy a state folder',
    "with cp -r, cp -rL or scp -r: a running emi's last sales, credits and votes sit in the stores' -wal files, which",
    'such a copy misses or mixes, and -L or scp turns the published/current link into a second copy.',
    '',
  ].join('\n');
}

export interface BackupOptions {
  dir: string;
  state: string;
  config?: string;
  version: string;
  now?: () => Date;
  /** Said once per store as it is copied. */
  onStore?: (copy: StoreCopy) => void;
}

export interface BackupResult {
  dir: string;
  stores: StoreCopy[];
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
    throw error instanceof BackupError ? error : new BackupError(file, error);
  }
}

/**
 * Backs up `state` into `dir` (checked beforehand with targetProblem): DIR.tmp-… beside it first, renamed into
 * place when complete, removed on any failure.
 */
export async function backupState(options: BackupOptions): Promise<BackupResult> {
  const state = resolve(options.state);
  const dir = resolve(options.dir);
  const names = await about(state, () => fs.readdir(state));
  const { stores, records } = planBackup(names);
  const temporary = join(
    dirname(dir),
    `${basename(dir)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  await about(temporary, async () => {
    await fs.mkdir(join(temporary, STATE_COPY), { recursive: true });
    await fs.chmod(temporary, PRIVATE.folder);
    await fs.chmod(join(temporary, STATE_COPY), PRIVATE.folder);
  });
  try {
    const copies: StoreCopy[] = [];
    for (const name of stores) {
      const copy = await about(join(state, name), () =>
        copyStore(join(state, name), join(temporary, STATE_COPY, name)),
      );
      copies.push(copy);
      options.onStore?.(copy);
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
      records,
      generation,
      config,
      dir,
    });
    await about(join(temporary, NOTES_FILE), async () => {
      await fs.writeFile(join(temporary, NOTES_FILE), notes, { mode: PRIVATE.file });
      await fs.chmod(join(temporary, NOTES_FILE), PRIVATE.file);
    });
    await about(dir, async () => {
      // An empty DIR the operator made is replaced (rmdir fails, and nothing is lost, if something came into it).
      if (existsSync(dir)) await fs.rmdir(dir);
      await fs.rename(temporary, dir);
    });
    return { dir, stores: copies, records, generation };
  } catch (error) {
    await fs.rm(temporary, { recursive: true, force: true });
    throw error;
  }
}
