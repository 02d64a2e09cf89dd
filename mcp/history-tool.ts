// The `history` tool: rows of the published history of one resource, for a range of UTC days or the latest rows.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { DataMode } from '../schemas/common.ts';
import {
  BASE_COLUMNS,
  HISTORY_INDEX_FILE,
  HISTORY_RESOURCES,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
  HistoryResourceId,
  historyDir,
} from '../schemas/history.ts';
import type { HistoryValue } from '../schemas/history.ts';
import { DataFacts, factsOf } from './facts.ts';
import { schemaProblems } from './free-tools.ts';
import { publishedObject } from './json-schema.ts';
import { jsonOrNull } from './published.ts';
import type { ReadPublished } from './published.ts';
import { clipped, firstOf, structuredResult, toolError } from './results.ts';
import { strictInput } from './strict-input.ts';

/** At most this many unknown field names are listed in the error (an agent may send 100 000). */
const MAX_UNKNOWN_LISTED = 10;

/** The longest range one call reads (a month of one-minute runs is about 45 000 rows). */
export const MAX_HISTORY_DAYS = 31;

const Row = z.record(z.string(), z.union([z.number(), z.string(), z.null()]));

export const HistoryToolOutput = publishedObject({
  ...DataFacts,
  resource: HistoryResourceId,
  from: z.iso.date().nullable().describe('first day read; null when the latest rows were read'),
  to: z.iso.date().nullable(),
  data_modes: z
    .array(DataMode)
    .describe('every data mode among the rows (simulated rows are not market data)'),
  columns: z.array(z.string()),
  rows: z.array(Row),
  missing_days: z
    .array(z.iso.date())
    .describe(
      'days in the range that the history lists but whose file could not be read: their rows are missing',
    ),
});

const HistoryInput = strictInput('history', {
  resource: HistoryResourceId.describe('which resource: market-regime, main-brain, liquidity-lite, ...'),
  from: z.iso
    .date()
    .optional()
    .describe('first UTC day (YYYY-MM-DD); without from and to: the latest 500 rows'),
  to: z.iso.date().optional().describe('last UTC day (YYYY-MM-DD); default: from plus nothing (one day)'),
  fields: z
    .array(z.string())
    .optional()
    .describe(
      'columns to keep besides run_at, data_mode and source_status; default all (see /api/history/index.json)',
    ),
});

type Rows = Array<Record<string, HistoryValue>>;

/** A history file as read: its parsed data, or the tool error to answer (absent and unreadable said apart). */
type HistoryRead<T> = { ok: true; data: T } | { ok: false; result: CallToolResult };

/**
 * Reads one history file against its schema. Absent: nothing has been published yet. There but not JSON, not its
 * schema or not readable: said so with the file and why, as the free tools do, never "not published yet".
 */
async function readHistoryFile<T>(
  read: ReadPublished,
  file: string,
  schema: z.ZodType<T>,
): Promise<HistoryRead<T>> {
  const published = await read(file);
  if (published.state === 'absent') {
    return {
      ok: false,
      result: toolError(`no history has been published yet (${file} is absent): run the generator first.`),
    };
  }
  const parsed = published.state === 'json' ? schema.safeParse(published.value) : null;
  if (parsed?.success) return { ok: true, data: parsed.data };
  const reason =
    published.state === 'unreadable'
      ? clipped(published.reason, 200)
      : `does not match its schema (${parsed ? schemaProblems(parsed.error) : 'not JSON'})`;
  return {
    ok: false,
    result: toolError(
      `the history is published but could not be read: the file ${file} ${reason}. It is not served until a ` +
        'sound run replaces it (emi generate, then emi build).',
    ),
  };
}

/**
 * The rows of the days in range, and the listed days whose file could not be read; the tool error when the history
 * index is absent or cannot be read.
 */
async function rowsInRange(
  read: ReadPublished,
  id: HistoryResourceId,
  from: string,
  to: string,
): Promise<HistoryRead<{ rows: Rows; missing: string[] }>> {
  const index = await readHistoryFile(read, HISTORY_INDEX_FILE, HistoryIndexFile);
  if (!index.ok) return index;
  const days = index.data.resources.find((r) => r.resource === id)?.days ?? [];
  const rows: Rows = [];
  const missing: string[] = [];
  for (const day of days.filter((d) => d >= from && d <= to)) {
    const file = HistoryDayFile.safeParse(jsonOrNull(await read(`${historyDir(id)}/${day}.json`)));
    // A listed day that cannot be read is reported, never passed over as a day without runs.
    if (file.success) rows.push(...file.data.rows);
    else missing.push(day);
  }
  return { ok: true, data: { rows, missing } };
}

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

export function registerHistoryTool(server: McpServer, read: ReadPublished, now: () => number): void {
  server.registerTool(
    'history',
    {
      title: 'History of published values',
      description:
        'Past values of a free resource, one row per generator run (run time, data mode, source status and ' +
        `the resource's key values), from the static files under /api/history/. At most ${MAX_HISTORY_DAYS} days per call.`,
      inputSchema: HistoryInput,
      outputSchema: HistoryToolOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ resource, from, to, fields }) => {
      const columns = [...BASE_COLUMNS, ...HISTORY_RESOURCES[resource].columns].map((c) => c.name);
      const unknown = (fields ?? []).filter((f) => !columns.includes(f));
      if (unknown.length > 0) {
        return toolError(
          `unknown field(s) for ${resource}: ${firstOf(unknown, MAX_UNKNOWN_LISTED)}. Known: ${columns.join(', ')}.`,
        );
      }
      const first = from ?? to ?? null;
      const last = to ?? from ?? null;
      if (first && last && first > last) return toolError(`from (${first}) is after to (${last}).`);
      if (first && last && dayNumber(last) - dayNumber(first) + 1 > MAX_HISTORY_DAYS) {
        return toolError(`at most ${MAX_HISTORY_DAYS} days per call: narrow from/to.`);
      }
      let rows: Rows;
      let missing: string[] = [];
      if (first && last) {
        const found = await rowsInRange(read, resource, first, last);
        if (!found.ok) return found.result;
        ({ rows, missing } = found.data);
      } else {
        const latest = await readHistoryFile(read, `${historyDir(resource)}/latest.json`, HistoryLatestFile);
        if (!latest.ok) return latest.result;
        rows = latest.data.rows;
      }
      const kept = fields
        ? columns.filter((c) => fields.includes(c) || BASE_COLUMNS.some((b) => b.name === c))
        : columns;
      const lastRow = rows.at(-1);
      const modes = [...new Set(rows.map((row) => DataMode.safeParse(row.data_mode)))].flatMap((p) =>
        p.success ? [p.data] : [],
      );
      return structuredResult({
        ...factsOf(
          DataMode.safeParse(lastRow?.data_mode).data ?? null,
          typeof lastRow?.run_at === 'string' ? lastRow.run_at : null,
          now(),
        ),
        resource,
        from: first,
        to: last,
        data_modes: [...new Set(modes)],
        columns: kept,
        rows: rows.map((row) => Object.fromEntries(kept.map((c) => [c, row[c] ?? null]))),
        missing_days: missing,
      });
    },
  );
}
