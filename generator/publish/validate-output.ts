// Checks a folder of published output against the registry's schemas: what `emi validate` runs. That checks the
// published history too (validateHistoryOutput): its index, each resource's latest file and every day file (each
// row by its resource's row schema), and each CSV twin's header line.
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
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
import type { HistoryResourceId } from '../../schemas/history.ts';
import { toCsv } from '../history/csv.ts';
import { columnsOf, listDays } from '../history/store.ts';
import { describeIssues } from './publish.ts';

export interface FileCheck {
  file: string;
  ok: boolean;
  problems: string[];
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

/** A history JSON file (a latest or day file) against its resource's schema. */
async function checkHistoryJson<T>(
  root: string,
  file: string,
  schema: z.ZodType<T>,
  extra?: (data: T) => string[],
): Promise<FileCheck> {
  const text = await readFile(join(root, file), 'utf8').catch(() => null);
  return text === null ? failed(file, [MISSING]) : checkJson(file, text, schema, extra);
}

/** A CSV twin starts with the header line of its columns (the rows are the JSON twin's, checked there). */
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
 * no history yet (before a first run) and adds no checks.
 */
export async function validateHistoryOutput(siteRoot: string): Promise<FileCheck[]> {
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
      limit(() => checkHistoryJson(siteRoot, `${dir}/latest.json`, latest)),
      limit(() => checkCsvHeader(siteRoot, `${dir}/latest.csv`, columns)),
      ...days.flatMap((date) => [
        limit(() =>
          checkHistoryJson(siteRoot, `${dir}/${date}.json`, day, (body) => dayProblems(date, body)),
        ),
        limit(() => checkCsvHeader(siteRoot, `${dir}/${date}.csv`, columns)),
      ]),
    ];
  });
  return [indexCheck, ...(await Promise.all(checks))];
}
