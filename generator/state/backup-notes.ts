// What a backup folder holds and what its BACKUP.txt says: when, from where, by which emi, what each file is, and
// how to restore it without reading the code.
import { join } from 'node:path';
import type { StoreCopy } from './backup.ts';
import { shellWord } from './repair.ts';

/** The folder of DIR holding the state folder's copy: a restore is `cp -a DIR/state <state folder>`. */
export const STATE_COPY = 'state';
/** The configuration file's copy in DIR. */
export const CONFIG_COPY = 'emi.config.json';
export const NOTES_FILE = 'BACKUP.txt';
/** The run records copied beside the stores (small JSON files, written whole by a rename). */
export const RECORD_FILES: readonly string[] = ['last-run.json', 'run-history.json'];
/** The published store in the state folder (pipeline.ts publishedStore) and its link to the served generation. */
export const PUBLISHED = 'published';
export const CURRENT = 'current';

/** A store left out of the backup because SQLite found it damaged. */
export interface SkippedStore {
  name: string;
  cause: string;
}

/** What to do about a damaged store: `emi arena repair` for the arena store, an earlier backup for the others. */
export const repairAdvice = (name: string): string =>
  name === 'arena.sqlite'
    ? 'run `emi arena repair` (it restores the newest sound daily copy), then back up again'
    : 'restore it from an earlier backup (its state/' + name + '), then back up again';

/** What BACKUP.txt says: enough to know what the folder is and to restore it without reading the code. */
export interface BackupNotes {
  at: Date;
  host: string;
  version: string;
  state: string;
  stores: readonly StoreCopy[];
  /** Damaged stores left out, each with SQLite's words. */
  skipped?: readonly SkippedStore[];
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
  const skippedLines = (notes.skipped ?? []).flatMap((store) => [
    `  NOT BACKED UP: ${store.name} is damaged (${store.cause}); ${repairAdvice(store.name)}`,
  ]);
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
    ...skippedLines,
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
