// Appends run rows to the published history: `api/history/<resource>/<YYYY-MM-DD>.json` (one UTC day, with a CSV
// twin), `latest.json`/`latest.csv` (the last rows across days) and `api/history/index.json`. A day is over once a
// later day has a file: its file never changes again (a backfill may still create a day that has none, but none
// before a final day whose rows begin mid-day: that day's missing hours could never be filled, so the new rows would
// stand apart behind a hole), so a host may cache a finished day for a long time. The history's own newest day, not
// the wall clock, closes days and counts retention, so replaying a past period behaves as it did live; but only a
// day that has begun by the wall clock counts: a row for a later day (a run with a future as-of) is refused and makes
// no file, and a day file made by a clock that ran ahead closes no day, counts for no retention and stays out of
// `latest.*` until its day begins (it is kept, listed in the index, and named in the result), so it never makes the
// true current day unwritable nor removes its past. Every file is replaced atomically.
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { EDUCATIONAL_NOTICE } from '../../schemas/common.ts';
import {
  BASE_COLUMNS,
  DEFAULT_RETENTION_DAYS,
  HISTORY_INDEX_FILE,
  HISTORY_RESOURCE_IDS,
  HISTORY_RESOURCES,
  HistoryDayFile,
  LATEST_ROWS,
  historyDir,
  historyRowSchema,
} from '../../schemas/history.ts';
import type {
  HistoryIndexFile,
  HistoryLatestFile,
  HistoryResourceId,
  HistoryRow,
} from '../../schemas/history.ts';
import { writeFileAtomic } from '../publish/atomic-write.ts';
import { allSettledOrThrow } from '../publish/settled.ts';
import { csvRecord, toCsv } from './csv.ts';
import { fileIdentity } from '../publish/file-identity.ts';
import { folderMaker } from '../publish/folders.ts';
import type { MakeFolder } from '../publish/folders.ts';
import { knownRows, rememberRows } from './day-rows-cache.ts';
import { knownPassed, rememberPassed } from './passed-versions.ts';

export interface HistoryStoreOptions {
  /** Public site root (the generator's `--out`): files land in `api/history/` below it. */
  root: string;
  /** Days of day files kept; older ones are deleted. Default 400. */
  retentionDays?: number;
  /**
   * Wall clock (ms), never a run's as-of: rows for a day that has not begun by it are refused, and day files of
   * such days close no day and count for no retention. Default: `Date.now()`.
   */
  now?: number;
  /** The run's own time (its `generated_at`), written as the index's `updated_utc`. Default: `now`. */
  updatedAt?: number;
  /**
   * Fill gaps only (a backfill): a row whose time is already on record is kept out, never replaces it. A live run
   * at the top of an hour has the time a backfill row of that hour has. Default: a row replaces one of its time
   * (a run repeated at the same as-of). Nor does a backfill write days before a final day whose rows begin mid-day
   * (the hours missing there could never be filled): they are refused as a `hole`.
   */
  gapsOnly?: boolean;
}

/**
 * Why a row was kept out, in the kinds an operator tells apart: `on-record` (a backfill's time already has a row),
 * `final-day` (its day is over and its file final), `hole` (a backfill's row for a day before a final day whose rows
 * begin mid-day), `retention` (older than the retention window), `ahead` (its day has not begun by the clock),
 * `damaged` (its day file is damaged), `invalid` (it fails its row schema).
 */
export type RefusalKind = 'on-record' | 'final-day' | 'hole' | 'retention' | 'ahead' | 'damaged' | 'invalid';

export interface RefusedRow {
  resource: HistoryResourceId;
  run_at: string;
  kind: RefusalKind;
  reason: string;
}

export interface AppendResult {
  appended: number;
  refused: RefusedRow[];
  /** Day files deleted by retention, as `<resource>/<date>`. */
  removed: string[];
  /**
   * Day files of days that have not begun by the wall clock (a clock that ran ahead wrote them), as
   * `<resource>/<date>`: kept, but closing no day and counting for no retention until their day begins.
   */
  ahead: string[];
}

const DAY_MS = 86_400_000;
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.json$/;
const dayOf = (iso: string): string => iso.slice(0, 10);
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const columnsOf = (id: HistoryResourceId): string[] => [
  ...BASE_COLUMNS.map((c) => c.name),
  ...HISTORY_RESOURCES[id].columns.map((c) => c.name),
];

/** Reads `EMI_HISTORY_RETENTION_DAYS` (a positive integer of days), or the default. */
export function retentionFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.EMI_HISTORY_RETENTION_DAYS;
  if (raw === undefined || raw === '') return DEFAULT_RETENTION_DAYS;
  if (!/^[1-9][0-9]*$/.test(raw)) {
    throw new Error(`EMI_HISTORY_RETENTION_DAYS must be a positive integer of days: ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** The dates of the day files of one resource, oldest first. */
export async function listDays(root: string, id: HistoryResourceId): Promise<string[]> {
  const names = await readdir(join(root, historyDir(id))).catch(() => [] as string[]);
  return names
    .map((name) => DAY_FILE.exec(name)?.[1])
    .filter((day): day is string => day !== undefined)
    .sort();
}

/** A day file's path in the site, as the history check names it. */
const dayPath = (id: HistoryResourceId, day: string): string => `${historyDir(id)}/${day}.json`;
const dayFile = (root: string, id: HistoryResourceId, day: string): string => join(root, dayPath(id, day));

/** A day file's rows; `null` when the file exists but is damaged (it is then left untouched). */
export async function readDayRows(
  root: string,
  id: HistoryResourceId,
  day: string,
): Promise<HistoryRow[] | null> {
  return (await readDay(root, id, day)).rows;
}

/**
 * A day file of `id` as the store reads it: each row by its resource's row schema, so that a damaged row is never
 * carried into the files a run writes (the latest files, or the day's next version). Made once per resource.
 */
const dayFileSchemas = new Map<HistoryResourceId, z.ZodType<{ rows: unknown[] }>>();
function dayFileSchema(id: HistoryResourceId): z.ZodType<{ rows: unknown[] }> {
  let schema = dayFileSchemas.get(id);
  if (!schema) {
    // Any notice: the rows are what the store keeps and checks; the notice is rewritten with the file. A file another
    // release wrote (a notice it knew) is appended to, never taken for damaged and left without the run's row.
    schema = HistoryDayFile.extend({
      educational_notice: z.string(),
      rows: z.array(historyRowSchema(HISTORY_RESOURCES[id])),
    });
    dayFileSchemas.set(id, schema);
  }
  return schema;
}

/**
 * A day file's rows and whether they are sound: the file is absent, or its version is known to pass the history
 * check (passed-versions.ts), so that what is written from them passes it too.
 */
async function readDay(
  root: string,
  id: HistoryResourceId,
  day: string,
): Promise<{ rows: HistoryRow[] | null; sound: boolean }> {
  const file = dayFile(root, id, day);
  const info = await stat(file).catch(() => null);
  if (!info) return { rows: [], sound: true };
  const sound = knownPassed(dayPath(id, day), fileIdentity(info));
  const known = knownRows(fileIdentity(info));
  if (known) return { rows: known, sound };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { rows: [], sound: false };
  }
  try {
    const parsed = dayFileSchema(id).safeParse(JSON.parse(text));
    if (!parsed.success) return { rows: null, sound: false };
    const rows = parsed.data.rows as HistoryRow[];
    rememberRows(fileIdentity(info), rows);
    return { rows: [...rows], sound };
  } catch {
    return { rows: null, sound: false };
  }
}

function dayBody(id: HistoryResourceId, date: string, rows: readonly HistoryRow[]): HistoryDayFile {
  return {
    resource: id,
    source_path: HISTORY_RESOURCES[id].sourcePath,
    educational_notice: EDUCATIONAL_NOTICE,
    columns: columnsOf(id),
    date,
    rows: [...rows],
  };
}

/**
 * CSV records and JSON texts kept per row object. A day file gains one row per run but is written whole every time
 * (never in place: earlier generations share the file), and a long-running process keeps a day's row objects
 * between runs (day-rows-cache.ts), so each row is formatted once rather than once a run (1 440 times by the end
 * of a day at the default cadence: formatting the day files' JSON was a fifth of such a cycle, CPU profile).
 */
const csvRecords = new WeakMap<object, { columns: string; record: string }>();
function csvOfRows(columns: readonly string[], rows: readonly HistoryRow[]): string {
  const key = columns.join(',');
  return toCsv(columns, rows, (row) => {
    const kept = csvRecords.get(row);
    if (kept?.columns === key) return kept.record;
    const record = csvRecord(columns, row);
    csvRecords.set(row, { columns: key, record });
    return record;
  });
}

/** A row as `pretty` prints it inside a file's `rows` (four spaces in), in UTF-8, once per row object. */
const jsonBytes = new WeakMap<object, Buffer>();
function rowJson(row: object): Buffer {
  let bytes = jsonBytes.get(row);
  if (bytes === undefined) {
    bytes = Buffer.from(`    ${JSON.stringify(row, null, 2).replaceAll('\n', '\n    ')}`);
    jsonBytes.set(row, bytes);
  }
  return bytes;
}

const ROW_SEPARATOR = Buffer.from(',\n');

/**
 * `pretty(body)` in UTF-8, byte for byte, for a body whose last field is `rows`, from the rows' kept bytes: joining
 * buffers copies each row once, where a string built from kept texts still had to be flattened and encoded.
 */
export function prettyWithRows(body: { rows: readonly object[] }): Buffer {
  if (body.rows.length === 0) return Buffer.from(pretty(body));
  const { rows, ...head } = body;
  const start = JSON.stringify({ ...head, rows: [] }, null, 2); // ends with `"rows": []\n}`
  const parts: Buffer[] = [Buffer.from(`${start.slice(0, -'[]\n}'.length)}[\n`), rowJson(rows[0]!)];
  for (const row of rows.slice(1)) parts.push(ROW_SEPARATOR, rowJson(row));
  parts.push(Buffer.from('\n  ]\n}\n'));
  return Buffer.concat(parts);
}

/**
 * Writes a JSON file and its CSV twin. `sound`: every row is known to pass its schema (checked on the way in, or
 * read from versions known to pass), so the pair passes the history check as written and is remembered so
 * (passed-versions.ts): the build after this run need not read it again.
 */
async function writePair(
  root: string,
  id: HistoryResourceId,
  name: string,
  body: { rows: HistoryRow[] | object[] },
  { makeFolder, sound }: { makeFolder: MakeFolder; sound: boolean },
) {
  const dir = join(root, historyDir(id));
  const files = [`${name}.json`, `${name}.csv`];
  await allSettledOrThrow([
    writeFileAtomic(join(dir, `${name}.json`), prettyWithRows(body), makeFolder),
    writeFileAtomic(
      join(dir, `${name}.csv`),
      csvOfRows(columnsOf(id), body.rows as HistoryRow[]),
      makeFolder,
    ),
  ]);
  if (!sound) return;
  for (const file of files) {
    const info = await stat(join(dir, file)).catch(() => null);
    if (info) rememberPassed(`${historyDir(id)}/${file}`, fileIdentity(info));
  }
}

/**
 * Appends rows to one day (replacing a row of the same run time: re-running an as-of does not duplicate it).
 * Returns the day's rows as written, or the refusals when the day was left alone.
 */
async function appendDay(
  root: string,
  id: HistoryResourceId,
  day: string,
  rows: readonly HistoryRow[],
  closed: boolean,
  gapsOnly: boolean,
  makeFolder: MakeFolder,
): Promise<{ written: HistoryRow[] | null; refused: RefusedRow[]; sound: boolean }> {
  const refusal = (kind: RefusalKind, reason: string) => (row: HistoryRow) =>
    refusedRow(id, row, kind, reason);
  const refuse = (kind: RefusalKind, reason: string) => ({
    written: null,
    refused: rows.map(refusal(kind, reason)),
    sound: false,
  });
  const { rows: existing, sound } = await readDay(root, id, day);
  if (existing === null) return refuse('damaged', `the day file ${day}.json is damaged; left as it is`);
  if (closed && existing.length > 0)
    return refuse('final-day', `the day ${day} is over and its file is final`);
  const onRecord = new Set(existing.map((row) => row.run_at));
  const kept = gapsOnly ? rows.filter((row) => onRecord.has(row.run_at)) : [];
  const added = gapsOnly ? rows.filter((row) => !onRecord.has(row.run_at)) : rows;
  const refused = kept.map(refusal('on-record', 'a row for this time is already on record; kept'));
  if (added.length === 0) return { written: null, refused, sound: false };
  const fresh = new Set(added.map((row) => row.run_at));
  const merged = [...existing.filter((row) => !fresh.has(row.run_at)), ...added].sort((a, b) =>
    a.run_at.localeCompare(b.run_at),
  );
  // The added rows passed their schema (appendResource) and lie on this day: the file is as sound as the rows it had.
  await writePair(root, id, day, dayBody(id, day, merged), { makeFolder, sound });
  const info = await stat(dayFile(root, id, day)).catch(() => null);
  if (info) rememberRows(fileIdentity(info), merged);
  return { written: merged, refused, sound };
}

/**
 * The last `LATEST_ROWS` rows, from the newest day files backwards (days just written are not read again). Sound
 * when every day it takes rows from is (`soundWritten`: the days just written that are).
 */
async function writeLatest(
  root: string,
  id: HistoryResourceId,
  days: readonly string[],
  written: ReadonlyMap<string, HistoryRow[]>,
  { makeFolder, soundWritten }: { makeFolder: MakeFolder; soundWritten: ReadonlySet<string> },
): Promise<void> {
  const rows: HistoryRow[] = [];
  let sound = true;
  for (const day of [...days].reverse()) {
    if (rows.length >= LATEST_ROWS) break;
    const kept = written.get(day);
    if (kept) sound &&= soundWritten.has(day);
    const read = kept ? null : await readDay(root, id, day);
    if (read) sound &&= read.sound && read.rows !== null;
    rows.unshift(...(kept ?? read?.rows ?? []));
  }
  const body: HistoryLatestFile = {
    resource: id,
    source_path: HISTORY_RESOURCES[id].sourcePath,
    educational_notice: EDUCATIONAL_NOTICE,
    columns: columnsOf(id),
    max_rows: LATEST_ROWS,
    rows: rows.slice(-LATEST_ROWS),
  };
  await writePair(root, id, 'latest', body, { makeFolder, sound });
}

const refusedRow = (
  resource: HistoryResourceId,
  row: HistoryRow,
  kind: RefusalKind,
  reason: string,
): RefusedRow => ({ resource, run_at: row.run_at, kind, reason });

/** The start of the UTC hour of an ISO time, as the store writes times (`…T14:00:00.000Z`). */
const hourOf = (iso: string): string => `${iso.slice(0, 13)}:00:00.000Z`;

/**
 * The hole a backfill's rows would stand behind, if any: the earliest final day among `days` (the days the rows
 * reach, oldest first), when some of its incoming hours come before the hour of its first row (the history began
 * mid-day there, e.g. with live runs). Those hours can never be filled, so rows for earlier days would be separated
 * from the rest of the history by them. Only that day's leading gap counts: hours missing in the middle of a final
 * day (failed runs) leave the days before it joined to it, and a later final day's gap lies behind it anyway.
 */
async function holeBeforeFinalDay(
  root: string,
  id: HistoryResourceId,
  days: ReadonlyArray<readonly [string, readonly HistoryRow[]]>,
  isFinal: (day: string) => boolean,
): Promise<{ day: string; begins: string } | null> {
  const reached = days.find(([day]) => isFinal(day));
  if (!reached) return null;
  const [day, incoming] = reached;
  const { rows } = await readDay(root, id, day);
  // A damaged file's hours are unknown: it is refused on its own and blocks nothing.
  const begins = rows?.map((row) => row.run_at).sort()[0];
  if (begins === undefined) return null;
  const leading = incoming.some((row) => row.run_at < hourOf(begins));
  return leading ? { day, begins } : null;
}

const holeReason = ({ day, begins }: { day: string; begins: string }) =>
  `the history of the final day ${day} begins at ${begins}; earlier rows would leave a hole before it ` +
  '(a final day file never changes)';

const oldestKeptAfter = (newestDay: string, retentionDays: number) =>
  utcDay(Date.parse(`${newestDay}T00:00:00.000Z`) - retentionDays * DAY_MS);

/**
 * Deletes the day files (of `days`, oldest first) older than `retentionDays` before the newest one that has begun
 * by the wall clock (`today`): a day file of a clock that ran ahead never removes the past.
 */
async function applyRetention(
  root: string,
  id: HistoryResourceId,
  days: readonly string[],
  retentionDays: number,
  today: string,
): Promise<{ kept: string[]; removed: string[] }> {
  const newest = days.filter((day) => day <= today).at(-1);
  if (!newest) return { kept: [...days], removed: [] };
  const oldestKept = oldestKeptAfter(newest, retentionDays);
  const removed: string[] = [];
  for (const day of days.filter((d) => d < oldestKept)) {
    const dir = join(root, historyDir(id));
    await rm(join(dir, `${day}.json`), { force: true });
    await rm(join(dir, `${day}.csv`), { force: true });
    removed.push(`${id}/${day}`);
  }
  return { kept: days.filter((d) => d >= oldestKept), removed };
}

export async function buildIndex(
  root: string,
  retentionDays: number,
  now: number,
  /** The day files per resource, when the caller already knows them (otherwise read from the folders). */
  known: Partial<Record<HistoryResourceId, readonly string[]>> = {},
): Promise<HistoryIndexFile> {
  const resources = await Promise.all(
    HISTORY_RESOURCE_IDS.map(async (id) => {
      const spec = HISTORY_RESOURCES[id];
      const days = [...(known[id] ?? (await listDays(root, id)))];
      const dir = `/${historyDir(id)}`;
      return {
        resource: id,
        title: spec.title,
        source_path: spec.sourcePath,
        columns: [...BASE_COLUMNS, ...spec.columns].map((c) => ({ ...c })),
        first_date: days[0] ?? null,
        last_date: days.at(-1) ?? null,
        days,
        latest_json: `${dir}/latest.json`,
        latest_csv: `${dir}/latest.csv`,
        day_json: `${dir}/{date}.json`,
        day_csv: `${dir}/{date}.csv`,
        row_schema: `/schemas/history-${id}-row.json`,
      };
    }),
  );
  return {
    educational_notice: EDUCATIONAL_NOTICE,
    updated_utc: new Date(now).toISOString().replace(/\.\d{3}Z$/, '.000Z'),
    retention_days: retentionDays,
    latest_rows: LATEST_ROWS,
    cache_note:
      'A day file is final once a later day has a file (then cache it for long; a run or a backfill may still add rows to a day until then); latest.* and index.json change every run.',
    resources,
  };
}

/** One resource's part of appendHistory, with the day files it leaves (oldest first). */
async function appendResource(
  root: string,
  id: HistoryResourceId,
  rows: readonly HistoryRow[],
  { today, retentionDays, gapsOnly }: { today: string; retentionDays: number; gapsOnly: boolean },
  makeFolder: MakeFolder,
): Promise<AppendResult & { days: string[] }> {
  const result: AppendResult = { appended: 0, refused: [], removed: [], ahead: [] };
  const schema = historyRowSchema(HISTORY_RESOURCES[id]);
  const existingDays = await listDays(root, id);
  // Only a day that has begun closes the days before it (see the top of this file).
  const lastExisting = existingDays.filter((day) => day <= today).at(-1) ?? '';
  const incoming = rows.map((row) => dayOf(row.run_at)).filter((day) => day <= today);
  const newest = [lastExisting, ...incoming].filter(Boolean).sort().at(-1) ?? today;
  const oldestKept = oldestKeptAfter(newest, retentionDays);
  const byDay = new Map<string, HistoryRow[]>();
  for (const row of rows) {
    const checked = schema.safeParse(row);
    const day = dayOf(row.run_at);
    if (!checked.success) {
      result.refused.push(refusedRow(id, row, 'invalid', checked.error.issues[0]?.message ?? ''));
    } else if (day > today) {
      result.refused.push(
        refusedRow(
          id,
          row,
          'ahead',
          `the day ${day} has not begun by this machine's clock (${today}): ` +
            'a run ahead of the clock keeps no history row',
        ),
      );
    } else if (day < oldestKept) {
      result.refused.push(refusedRow(id, row, 'retention', 'older than the retention window'));
    } else {
      byDay.set(day, [...(byDay.get(day) ?? []), row]);
    }
  }
  const isFinal = (day: string) => day < lastExisting && existingDays.includes(day);
  const days = [...byDay].sort(([a], [b]) => a.localeCompare(b));
  // A backfill fills gaps: never with rows that a hole it cannot fill would cut off from the rest of the history.
  const hole = gapsOnly ? await holeBeforeFinalDay(root, id, days, isFinal) : null;
  const written = new Map<string, HistoryRow[]>();
  const soundWritten = new Set<string>();
  for (const [day, dayRows] of days) {
    if (hole && day < hole.day) {
      result.refused.push(...dayRows.map((row) => refusedRow(id, row, 'hole', holeReason(hole))));
      continue;
    }
    const outcome = await appendDay(root, id, day, dayRows, isFinal(day), gapsOnly, makeFolder);
    if (outcome.written) written.set(day, outcome.written);
    if (outcome.written && outcome.sound) soundWritten.add(day);
    result.refused.push(...outcome.refused);
    result.appended += dayRows.length - outcome.refused.length;
  }
  const present = [...new Set([...existingDays, ...written.keys()])].sort();
  const { kept, removed } = await applyRetention(root, id, present, retentionDays, today);
  result.removed.push(...removed);
  result.ahead.push(...kept.filter((day) => day > today).map((day) => `${id}/${day}`));
  // The latest rows are those up to the wall clock: a row of a day to come would stand as the newest for days.
  const begun = kept.filter((day) => day <= today);
  await writeLatest(root, id, begun, written, { makeFolder, soundWritten });
  return { ...result, days: kept };
}

/**
 * Appends each resource's rows (a run gives one per resource; a backfill many), then refreshes `latest.*`,
 * applies retention and rewrites the index. Rows failing their schema are refused, never written. Resources live
 * in separate folders, so they are updated side by side.
 */
export async function appendHistory(
  rowsByResource: Partial<Record<HistoryResourceId, readonly HistoryRow[]>>,
  options: HistoryStoreOptions,
): Promise<AppendResult> {
  const now = options.now ?? Date.now();
  const retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
  const policy = { today: utcDay(now), retentionDays, gapsOnly: options.gapsOnly ?? false };
  // Each folder is made once: the day's and latest files of a resource share one.
  const makeFolder = folderMaker();
  const perResource = await allSettledOrThrow(
    HISTORY_RESOURCE_IDS.map((id) =>
      appendResource(options.root, id, rowsByResource[id] ?? [], policy, makeFolder),
    ),
  );
  const result: AppendResult = { appended: 0, refused: [], removed: [], ahead: [] };
  for (const one of perResource) {
    result.appended += one.appended;
    result.refused.push(...one.refused);
    result.removed.push(...one.removed);
    result.ahead.push(...one.ahead);
  }
  const days = Object.fromEntries(HISTORY_RESOURCE_IDS.map((id, i) => [id, perResource[i]?.days]));
  await writeFileAtomic(
    join(options.root, HISTORY_INDEX_FILE),
    pretty(await buildIndex(options.root, retentionDays, options.updatedAt ?? now, days)),
    makeFolder,
  );
  return result;
}
