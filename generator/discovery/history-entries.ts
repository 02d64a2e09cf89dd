// The published history in the discovery documents: its JSON Schemas, its OpenAPI paths and its llms.txt lines.
// Kept apart from the resource registry: history files are derived from the free resources, not resources.
import {
  HISTORY_RESOURCE_IDS,
  HISTORY_RESOURCES,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
  historyDir,
  historyRowSchema,
} from '../../schemas/history.ts';
import { CACHE_SECONDS } from '../../schemas/common.ts';
import type { SchemaEntry } from './json-schema.ts';
import type { SitemapEntry } from './crawl-files.ts';
import { STATIC_FILE_RESPONSES } from './static-file-responses.ts';

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
  day:
    `A day file is final once a later day has a file, so a client may keep a finished day; hosts send the free ` +
    `files' ${CACHE_SECONDS} s cache hint, as they cannot tell a finished day from today's by its name.`,
  latest: `Changes every run: cache it no longer than the free files (${CACHE_SECONDS} s).`,
};
/**
 * The terms every path carries (see openapi.ts). Every host sends history files the free files' cache hint
 * (schemas/delivery.ts); the files are derived from free resources and are no product of their own.
 */
const terms = { 'x-product-id': null, 'x-cache-seconds': CACHE_SECONDS, 'x-stability': 'stable' };

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
      ...STATIC_FILE_RESPONSES,
    },
    ...terms,
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
    ...STATIC_FILE_RESPONSES,
  },
  ...terms,
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
    `- [History index](${url('/api/history/index.json')}): which past values exist (one row per run, per resource), columns and every day file; one UTC day is /api/history/<resource>/YYYY-MM-DD.json, final once a later day has a file`,
    `- [Latest history rows](${url('/api/history/market-regime/latest.json')}): the last 500 rows; replace market-regime with ${HISTORY_RESOURCE_IDS.filter((id) => id !== 'market-regime').join(', ')}; .csv twins beside each file`,
  ].join('\n');
}

/**
 * The history files in the sitemap: the index and each resource's latest.json, which llms.txt links, all written
 * by every run (`lastmod`, the run's time). The day files are listed by the index, not here: a sitemap of 400 days
 * of six resources would mostly repeat it.
 */
export function historySitemapEntries(lastmod: string | null): SitemapEntry[] {
  return [
    '/api/history/index.json',
    ...HISTORY_RESOURCE_IDS.map((id) => `/${historyDir(id)}/latest.json`),
  ].map((path) => ({ path, lastmod }));
}
