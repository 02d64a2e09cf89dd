// Checks a folder of published output against the registry's schemas: what `emi validate` runs. That checks the
// published history too (validateHistoryOutput): its index, each resource's latest file and every day file (each
// row by its resource's row schema), and each CSV twin (its header line, and the rows of its JSON twin). The site
// build runs the same history check before every build (site/history-check.ts).
import { statSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { LimitFunction } from 'p-limit';
import * as z from 'zod';
import { FREE_RESOURCES, PAID_RESOURCES, REASONING_FILES } from '../../schemas/resources.ts';
import { ReasoningResponse } from '../../schemas/reasoning.ts';
import {
  HISTORY_INDEX_FILE,
  HISTORY_RESOURCE_IDS,
  HISTORY_RESOURCES,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
  historyDir,
  historyRowSchema,
} from '../../schemas/history.ts';
import type { HistoryResourceId, HistoryValue } from '../../schemas/history.ts';
import { parseCsv, toCsv } from '../history/csv.ts';
import { knownPassed, rememberPassed } from '../history/passed-versions.ts';
import { columnsOf, listDays } from '../history/store.ts';
import { fileIdentity } from './file-identity.ts';
import { describeIssues } from './publish.ts';

export interface FileCheck {
  file: string;
  ok: boolean;
  problems: string[];
  /** The file version checked (its identity, publish/file-identity.ts), where the check took it (`known`). */
  identity?: string;
}

/**
 * What `emi validate` prints: each failure on its own line with its first problems; each passed file on its own
 * line, except a history resource's files, one line per folder (a 400-day history holds thousands of them).
 */
export function checkLines(checks: readonly FileCheck[]): string[] {
  const lines: string[] = [];
  const folders = new Map<string, number>();
  for (const check of checks) {
    if (!check.ok) {
      lines.push(`FAIL ${check.file}: ${check.problems.slice(0, 3).join('; ')}`);
      continue;
    }
    const folder = /^api\/history\/[^/]+\//.exec(check.file)?.[0];
    if (!folder) lines.push(`ok   ${check.file}`);
    else {
      if (!folders.has(folder)) lines.push(folder); // its place, filled in below
      folders.set(folder, (folders.get(folder) ?? 0) + 1);
    }
  }
  return lines.map((line) => {
    const files = folders.get(line);
    return files === undefined ? line : `ok   ${line} (${files} ${files === 1 ? 'file' : 'files'})`;
  });
}

const passed = (file: string): FileCheck => ({ file, ok: true, problems: [] });
const failed = (file: string, problems: string[]): FileCheck => ({ file, ok: false, problems });
const MISSING = 'file is missing or unreadable';

type Parsed<T> = { data: T; problems?: never } | { data?: never; problems: string[] };

/** JSON text parsed against `schema`: what it accepted, or what is wrong. */
function parseJson<T>(text: string, schema: z.ZodType<T>): Parsed<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problems: [`not JSON: ${(error as Error).message}`] };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { data: parsed.data } : { problems: describeIssues(parsed.error) };
}

/** Checks JSON text against `schema`; `extra` adds checks on what the schema accepted. */
function checkJson<T>(
  file: string,
  text: string,
  schema: z.ZodType<T>,
  extra: (data: T) => string[] = () => [],
): FileCheck {
  const parsed = parseJson(text, schema);
  const problems = parsed.problems ?? extra(parsed.data);
  return problems.length === 0 ? passed(file) : failed(file, problems);
}

async function checkFile(root: string, file: string, schema: z.ZodType): Promise<FileCheck> {
  const text = await readFile(join(root, file), 'utf8').catch(() => null);
  return text === null ? failed(file, [MISSING]) : checkJson(file, text, schema);
}

/** The free and reasoning files: what a site is built from (cycle.ts checks these before a build). */
export async function validatePublicOutput(siteRoot: string): Promise<FileCheck[]> {
  return Promise.all([
    ...FREE_RESOURCES.map((r) => checkFile(siteRoot, r.file, r.schema)),
    ...REASONING_FILES.map((r) => checkFile(siteRoot, r.file, ReasoningResponse)),
  ]);
}

export async function validatePaidOutput(paidRoot: string): Promise<FileCheck[]> {
  return Promise.all(PAID_RESOURCES.map((r) => checkFile(paidRoot, r.file, r.schema)));
}

/**
 * Files read at once. A site may hold 400 days of day files for each resource, each up to a few MB (a row a
 * minute): enough side by side to keep the disk busy, few enough to keep the memory small.
 */
const HISTORY_READS = 8;

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, i) => item === b[i]);

/** The schemas of one resource's latest and day files: its own name and columns, each row by its row schema. */
function fileSchemasOf(id: HistoryResourceId) {
  const columns = columnsOf(id);
  const own = {
    resource: z.literal(id),
    columns: z
      .array(z.string())
      .refine((names) => sameList(names, columns), `must be the columns of ${id}: ${columns.join(',')}`),
    rows: z.array(historyRowSchema(HISTORY_RESOURCES[id])),
  };
  return { latest: HistoryLatestFile.extend(own), day: HistoryDayFile.extend(own) };
}

// Made once per resource: a day file of each of 400 days checks against the same schema.
const fileSchemas = new Map<HistoryResourceId, ReturnType<typeof fileSchemasOf>>();
function schemasOf(id: HistoryResourceId) {
  let schemas = fileSchemas.get(id);
  if (!schemas) fileSchemas.set(id, (schemas = fileSchemasOf(id)));
  return schemas;
}

/** A day file is the day of its name, and each of its rows a run of that day. */
function dayProblems(
  day: string,
  body: { date: string; rows: ReadonlyArray<Record<string, unknown>> },
): string[] {
  const problems = body.date === day ? [] : [`date: ${body.date} in the file of ${day}`];
  const stray = body.rows.findIndex((row) => !String(row.run_at).startsWith(day));
  if (stray >= 0) problems.push(`rows.${stray}.run_at: ${String(body.rows[stray]?.run_at)} is not on ${day}`);
  return problems;
}

/** What a history JSON file (a latest or day file) holds: its check, and its rows when it passed. */
type HistoryRows = ReadonlyArray<Record<string, unknown>>;
interface JsonOutcome {
  check: FileCheck;
  rows: HistoryRows | null;
}

/** A history JSON file (a latest or day file) against its resource's schema. */
async function checkHistoryJson<T extends { rows: HistoryRows }>(
  root: string,
  file: string,
  schema: z.ZodType<T>,
  extra: (data: T) => string[] = () => [],
): Promise<JsonOutcome> {
  const text = await readFile(join(root, file), 'utf8').catch(() => null);
  if (text === null) return { check: failed(file, [MISSING]), rows: null };
  const parsed = parseJson(text, schema);
  if (parsed.problems) return { check: failed(file, parsed.problems), rows: null };
  const problems = extra(parsed.data);
  if (problems.length > 0) return { check: failed(file, problems), rows: null };
  return { check: passed(file), rows: parsed.data.rows };
}

/**
 * A CSV twin: its header line is the columns; when its JSON twin passed (`rows`), its records are that file's rows,
 * field by field (quoting aside). Without sound JSON rows to compare with, the header line alone is checked.
 */
async function checkCsvTwin(
  root: string,
  file: string,
  columns: readonly string[],
  rows: JsonOutcome['rows'],
): Promise<FileCheck> {
  if (rows === null) return checkCsvHeader(root, file, columns);
  const text = await readFile(join(root, file), 'utf8').catch(() => null);
  if (text === null) return failed(file, [MISSING]);
  const expected = Buffer.from(toCsv(columns, [])).toString('utf8');
  if (!text.startsWith(expected)) return checkCsvHeader(root, file, columns);
  const records = parseCsv(text).slice(1);
  // The rows passed their row schema: every value is a HistoryValue.
  const wanted = parseCsv(toCsv(columns, rows as ReadonlyArray<Record<string, HistoryValue>>)).slice(1);
  if (records.length !== wanted.length) {
    return failed(file, [`${records.length} records for the ${wanted.length} rows of its JSON twin`]);
  }
  const at = records.findIndex((record, i) => !sameList(record, wanted[i] ?? []));
  if (at < 0) return passed(file);
  return failed(file, [`record ${at + 1} after the header line disagrees with rows.${at} of its JSON twin`]);
}

/** A CSV twin starts with the header line of its columns. */
async function checkCsvHeader(root: string, file: string, columns: readonly string[]): Promise<FileCheck> {
  const expected = Buffer.from(toCsv(columns, [])); // the header line with its CRLF
  let head: Buffer;
  try {
    const handle = await open(join(root, file));
    try {
      const { buffer, bytesRead } = await handle.read(
        Buffer.alloc(expected.length + 200),
        0,
        expected.length + 200,
        0,
      );
      head = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch {
    return failed(file, [MISSING]);
  }
  if (head.subarray(0, expected.length).equals(expected)) return passed(file);
  const line = head.toString('utf8').split(/\r?\n/)[0] ?? '';
  return failed(file, [`header line ${JSON.stringify(line)} is not the columns of its JSON twin`]);
}

/**
 * A file's identity now, or null when it cannot be read. Synchronous on purpose: a build of a long-running process
 * takes thousands of them and finds nearly all known, and a stat costs a few microseconds where a round trip
 * through libuv's thread pool costs several times that (4 800 files: about 20 ms against 60 to 110 ms).
 */
function identityOf(root: string, file: string): string | null {
  const info = statSync(join(root, file), { throwIfNoEntry: false });
  return info ? fileIdentity(info) : null;
}

/**
 * A JSON history file and its CSV twin, read under `limit`. With `known`, a pair whose two versions are known to
 * pass (history/passed-versions.ts) is not read again, and the versions that pass are remembered; the versions are
 * taken first, and a known pair is answered at once, without a promise (a 400-day history is thousands of files,
 * and a build of a long-running process finds nearly all of them known).
 */
function checkPair<T extends { rows: HistoryRows }>(
  root: string,
  stem: string,
  check: { schema: z.ZodType<T>; columns: readonly string[]; extra?: (data: T) => string[]; known: boolean },
  limit: LimitFunction,
): FileCheck[] | Promise<FileCheck[]> {
  const files = [`${stem}.json`, `${stem}.csv`] as const;
  // Taken before reading: a file replaced meanwhile has another identity, and is checked again next time.
  const identities = check.known ? files.map((file) => identityOf(root, file)) : [];
  const withIdentity = (one: FileCheck, i: number): FileCheck => {
    const identity = identities[i];
    return identity ? { ...one, identity } : one;
  };
  if (check.known && files.every((file, i) => identities[i] && knownPassed(file, identities[i])))
    return files.map(passed).map(withIdentity);
  return limit(async () => {
    const json = await checkHistoryJson(root, files[0], check.schema, check.extra);
    const csv = await checkCsvTwin(root, files[1], check.columns, json.rows);
    const checks = [json.check, csv].map(withIdentity);
    for (const one of checks) if (one.ok && one.identity) rememberPassed(one.file, one.identity);
    return checks;
  });
}

/**
 * Where the index disagrees with the folder: a resource missing, other columns, day files it does not list (a day
 * it lists without a file fails as that file's own check).
 */
function indexProblems(
  index: HistoryIndexFile,
  daysOnDisk: ReadonlyMap<HistoryResourceId, string[]>,
): string[] {
  const problems: string[] = [];
  for (const id of HISTORY_RESOURCE_IDS) {
    const at = index.resources.findIndex((entry) => entry.resource === id);
    const entry = index.resources[at];
    if (!entry) {
      problems.push(`resources: no entry for ${id}`);
      continue;
    }
    const names = entry.columns.map((column) => column.name);
    if (!sameList(names, columnsOf(id)))
      problems.push(`resources.${at}.columns: not the columns of the ${id} files`);
    const onDisk = daysOnDisk.get(id) ?? [];
    const unlisted = onDisk.filter((day) => !entry.days.includes(day));
    if (unlisted.length > 0)
      problems.push(`resources.${at}.days: misses ${unlisted.join(', ')} (files exist)`);
  }
  return problems;
}

/**
 * The published history under `api/history/`: the index, then per resource latest.json and .csv and every day
 * file (those the index lists and those in the folder) with its CSV twin. A folder without `api/history/` has
 * no history yet (before a first run) and adds no checks. `known` (the site build): file versions known to pass
 * are not read again, and those that pass are remembered (history/passed-versions.ts); `emi validate` reads all.
 */
export async function validateHistoryOutput(
  siteRoot: string,
  { known = false }: { known?: boolean } = {},
): Promise<FileCheck[]> {
  const folder = await stat(join(siteRoot, 'api/history')).catch(() => null);
  if (!folder?.isDirectory()) return [];
  const daysOnDisk = new Map(
    await Promise.all(HISTORY_RESOURCE_IDS.map(async (id) => [id, await listDays(siteRoot, id)] as const)),
  );
  // The index says which day files to expect.
  const indexText = await readFile(join(siteRoot, HISTORY_INDEX_FILE), 'utf8').catch(() => null);
  const index = indexText === null ? { problems: [MISSING] } : parseJson(indexText, HistoryIndexFile);
  const listed = index.data;
  const indexIssues = index.problems ?? indexProblems(index.data, daysOnDisk);
  const indexCheck =
    indexIssues.length === 0 ? passed(HISTORY_INDEX_FILE) : failed(HISTORY_INDEX_FILE, indexIssues);
  const limit = pLimit(HISTORY_READS);
  const checks = HISTORY_RESOURCE_IDS.flatMap((id) => {
    const dir = historyDir(id);
    const columns = columnsOf(id);
    const { latest, day } = schemasOf(id);
    const listedDays = listed?.resources.find((entry) => entry.resource === id)?.days ?? [];
    const days = [...new Set([...listedDays, ...(daysOnDisk.get(id) ?? [])])].sort();
    return [
      checkPair(siteRoot, `${dir}/latest`, { schema: latest, columns, known }, limit),
      ...days.map((date) =>
        checkPair(
          siteRoot,
          `${dir}/${date}`,
          { schema: day, columns, extra: (body) => dayProblems(date, body), known },
          limit,
        ),
      ),
    ];
  });
  return [indexCheck, ...(await Promise.all(checks)).flat()];
}
