// The published history is checked before every build, as `emi validate` checks it (publish/validate-output.ts):
// a day file that is not JSON, has a row failing its schema, or a CSV twin that disagrees with it would otherwise
// be linked into the site as it is, and readers would download broken data from a site whose build said OK. The
// build is refused instead, naming the files and what to do, and the site served before stays served (nothing is
// switched). A history of 400 days holds thousands of files, so only the file versions not known to pass are read:
// those this process has checked or its own run has written are known (history/passed-versions.ts), and so are
// those an earlier build of the same site checked, kept in `history-passed.json` beside the built generations (a
// one-off `emi build`, or `emi generate --dist` run by a timer, reads only the files that changed since).
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { storeBeside } from '../publish/generations.ts';
import { makeFolders, PUBLIC } from '../publish/modes.ts';
import { checkLines, validateHistoryOutput } from '../publish/validate-output.ts';
import type { FileCheck } from '../publish/validate-output.ts';
import { rememberPassed } from '../history/passed-versions.ts';

/** Problems named in the refusal; `emi validate` lists them all. */
const NAMED = 3;
const RECORD_FILE = 'history-passed.json';

/** What each record holds as last read or written by this process, so an unchanged record is not written again. */
const records = new Map<string, string>();

/** The versions an earlier build recorded, made known to this process (once per record). */
async function loadRecord(record: string): Promise<void> {
  if (records.has(record)) return;
  const text = await readFile(record, 'utf8').catch(() => '');
  records.set(record, text);
  let files: unknown;
  try {
    files = (JSON.parse(text) as { files?: unknown }).files;
  } catch {
    return; // none yet, or unreadable: every file is checked, and the record written again
  }
  if (files === null || typeof files !== 'object') return;
  for (const [file, identity] of Object.entries(files)) {
    if (typeof identity === 'string') rememberPassed(file, identity);
  }
}

/** Records the versions that passed (a record that cannot be written only costs the next process a full check). */
async function saveRecord(record: string, checks: readonly FileCheck[]): Promise<void> {
  const files = Object.fromEntries(
    checks.flatMap((check) => (check.ok && check.identity ? [[check.file, check.identity]] : [])),
  );
  const text = `${JSON.stringify({ files })}\n`;
  if (records.get(record) === text) return;
  // A cache, not a record anyone relies on: written whole by rename, but not flushed to disk every build.
  const temp = `${record}.${process.pid}.tmp`;
  // The build's store, when made here first: public whatever the umask (nginx reads the builds in it).
  await makeFolders(dirname(record), PUBLIC.folder)
    .then(() => writeFile(temp, text))
    .then(() => rename(temp, record))
    .then(
      () => records.set(record, text),
      () => rm(temp, { force: true }),
    );
}

export interface HistoryCheckFolders {
  /** The published `api/` folder, resolved to the generation the build links from. */
  api: string;
  /** The published folder as the operator named it (--published, --out). */
  published: string;
  /** The built folder (dist/): the record is kept in its store of generations. */
  outDir: string;
}

const recordFor = (outDir: string): string => join(storeBeside(outDir), RECORD_FILE);

/**
 * Makes the versions an earlier build of `outDir` checked known before a run, so that the history files the run
 * rewrites from them are known to pass too (`emi generate --dist` run by a timer: one run per process).
 */
export const loadPassedRecord = (outDir: string): Promise<void> => loadRecord(recordFor(outDir));

/** Throws, naming the damaged files and what to do, unless the published history passes its check. */
export async function refuseDamagedHistory({ api, published, outDir }: HistoryCheckFolders): Promise<void> {
  const record = recordFor(outDir);
  await loadRecord(record);
  // validateHistoryOutput reads `<root>/api/history`: the resolved folder's parent, when it is named api.
  const root = basename(api) === 'api' ? dirname(api) : published;
  const checks = await validateHistoryOutput(root, { known: true });
  await saveRecord(record, checks);
  const failed = checks.filter((check) => !check.ok);
  if (failed.length === 0) return;
  const named = checkLines(failed.slice(0, NAMED)).map((line) => line.replace(/^FAIL /, ''));
  const more = failed.length > NAMED ? `; and ${failed.length - NAMED} more` : '';
  throw new Error(
    `refusing to build: ${failed.length} published history file(s) damaged in ${published}: ` +
      `${named.join('; ')}${more}. The site built before stays served. Run "emi validate ${published}" to ` +
      'list them; restore each from a backup, or move the damaged day (its .json and .csv) out of the ' +
      'published folder and run emi generate (it rewrites the index and latest files without it), then build again',
  );
}
