// The published history in the discovery documents: its JSON Schemas, its OpenAPI paths and its llms.txt lines.
// Kept apart from the resource registry: history files are derived from the free resources, not resources.
import {
  HISTORY_RESOURCE_IDS,
  HISTORY_RESOURCES,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
  historyRowSchema,
} from '../../schemas/history.ts';
import type { SchemaEntry } from './json-schema.ts';

type Json = Record<string, unknown>;

const pascal = (id: string) => id.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

/** Schema file of one resource's history row, under /schemas/. */
export const historyRowSchemaFile = (id: string) => `history-${id}-row.json`;

/** The history files' schemas: OpenAPI components and files under /schemas/. */
export function historySchemaEntries(): SchemaEntry[] {
  return [
    {
      name: 'HistoryIndex',
      fileName: 'history-index.json',
      title: 'History index',
      schema: HistoryIndexFile,
    },
    { name: 'HistoryDay', fileName: 'history-day.json', title: 'History day file', schema: HistoryDayFile },
    {
      name: 'HistoryLatest',
      fileName: 'history-latest.json',
      title: 'History latest rows',
      schema: HistoryLatestFile,
    },
  ];
}

let rowEntries: readonly SchemaEntry[] | undefined;

/**
 * One row schema per resource: published as files under /schemas/ (no OpenAPI path answers a single row). Made
 * once, so that each row schema keeps its identity and its JSON Schema is emitted once (see toJsonSchema).
 */
export function historyRowSchemaEntries(): SchemaEntry[] {
  rowEntries ??= HISTORY_RESOURCE_IDS.map((id) => ({
    name: `History${pascal(id)}Row`,
    fileName: historyRowSchemaFile(id),
    title: `History row: ${HISTORY_RESOURCES[id].title}`,
    schema: historyRowSchema(HISTORY_RESOURCES[id]),
  }));
  return [...rowEntries];
}

const component = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const resourceParameter = {
  name: 'resource',
  in: 'path',
  required: true,
  schema: { type: 'string', enum: [...HISTORY_RESOURCE_IDS] },
  description: 'which free resource the rows come from',
};
const csv = { 'text/csv': { schema: { type: 'string' } } };
const cacheNote = {
  day: 'A day file is final once a later day has a file: hosts may cache finished days for a long time.',
  latest: 'Changes every run: cache it no longer than the free files (60 s).',
};

function operation(id: string, summary: string, description: string, schema: string): Json {
  return {
    operationId: id,
    summary,
    description: `${description} Educational only, not advice.`,
    tags: ['History'],
    security: [],
    responses: {
      '200': {
        description: summary,
        content: { 'application/json': { schema: component(schema) } },
      },
      '404': { $ref: '#/components/responses/NotFound' },
    },
  };
}

const csvOperation = (id: string, summary: string, description: string): Json => ({
  operationId: id,
  summary,
  description: `${description} The same columns as the JSON twin, null as an empty field (RFC 4180).`,
  tags: ['History'],
  security: [],
  responses: {
    '200': { description: summary, content: csv },
    '404': { $ref: '#/components/responses/NotFound' },
  },
});

export function historyPaths(): Json {
  const dateParameter = {
    name: 'date',
    in: 'path',
    required: true,
    schema: { type: 'string', format: 'date' },
    description: 'UTC day, YYYY-MM-DD (see days in /api/history/index.json)',
  };
  return {
    '/api/history/index.json': {
      get: operation(
        'getHistoryIndex',
        'History index',
        'Which history exists: per resource its columns, first and last days and every day file.',
        'HistoryIndex',
      ),
    },
    '/api/history/{resource}/latest.json': {
      parameters: [resourceParameter],
      get: operation(
        'getHistoryLatest',
        'Latest history rows',
        `The last 500 rows. ${cacheNote.latest}`,
        'HistoryLatest',
      ),
    },
    '/api/history/{resource}/latest.csv': {
      parameters: [resourceParameter],
      get: csvOperation('getHistoryLatestCsv', 'Latest history rows (CSV)', cacheNote.latest),
    },
    '/api/history/{resource}/{date}.json': {
      parameters: [resourceParameter, dateParameter],
      get: operation(
        'getHistoryDay',
        'History of one UTC day',
        `One row per run of that day. ${cacheNote.day}`,
        'HistoryDay',
      ),
    },
    '/api/history/{resource}/{date}.csv': {
      parameters: [resourceParameter, dateParameter],
      get: csvOperation('getHistoryDayCsv', 'History of one UTC day (CSV)', cacheNote.day),
    },
  };
}

export function historyLlmsLines(url: (path: string) => string): string {
  return [
    `- [History index](${url('/api/history/index.json')}): which past values exist (one row per run, per resource), columns and days`,
    `- [Latest history rows](${url('/api/history/market-regime/latest.json')}): the last 500 rows; replace market-regime with ${HISTORY_RESOURCE_IDS.filter((id) => id !== 'market-regime').join(', ')}; .csv twins beside each file`,
    `- [History of one day](${url('/api/history/index.json')}): /api/history/<resource>/YYYY-MM-DD.json, one UTC day, listed in the index; final once the day is over`,
  ].join('\n');
}
