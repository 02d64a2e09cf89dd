// The published history in the discovery documents: its JSON Schemas, its OpenAPI paths and its llms.txt lines.
// Kept apart from the resource registry: history files are derived from the free resources, not resources.
import {
  HISTORY_RESOURCE_IDS,
  HISTORY_RESOURCES,
  LATEST_ROWS,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
  historyDir,
  historyRowSchema,
} from '../../schemas/history.ts';
import type { HistoryResourceId } from '../../schemas/history.ts';
import { CACHE_SECONDS } from '../../schemas/common.ts';
import { UNPUBLISHED_RUNS_DAYS } from '../../schemas/status.ts';
import type { JsonSchema, SchemaEntry } from './json-schema.ts';
import type { SitemapEntry } from './crawl-files.ts';
import { STATIC_FILE_RESPONSES } from './static-file-responses.ts';

type Json = Record<string, unknown>;

const pascal = (id: string) => id.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

/** Schema file of one resource's history row, under /schemas/. */
export const historyRowSchemaFile = (id: string) => `history-${id}-row.json`;

/** The day and latest files: the suffix of their schemas' names and their title. */
const FILE_KINDS = {
  day: { suffix: 'Day', title: 'History day file' },
  latest: { suffix: 'Latest', title: 'History latest rows' },
} as const;
type FileKind = keyof typeof FILE_KINDS;
const FILE_KIND_NAMES = Object.keys(FILE_KINDS) as FileKind[];

/** The schema of a file kind for any resource's rows: a file under /schemas/, no OpenAPI component. */
const genericFileComponent = (kind: FileKind) => `History${FILE_KINDS[kind].suffix}`;

/** OpenAPI component of one resource's row. */
export const historyRowComponent = (id: HistoryResourceId) => `History${pascal(id)}Row`;
/** OpenAPI component of one resource's day or latest file: the generic file with that resource's rows. */
export const historyFileComponent = (id: HistoryResourceId, kind: FileKind) =>
  `History${pascal(id)}${FILE_KINDS[kind].suffix}`;

/**
 * The history files' schemas under /schemas/. In the OpenAPI document the day and latest files have one schema per
 * resource instead (see withTypedHistoryFiles).
 */
export function historySchemaEntries(): SchemaEntry[] {
  return [
    {
      name: 'HistoryIndex',
      fileName: 'history-index.json',
      title: 'History index',
      schema: HistoryIndexFile,
    },
    {
      name: genericFileComponent('day'),
      fileName: 'history-day.json',
      title: FILE_KINDS.day.title,
      schema: HistoryDayFile,
    },
    {
      name: genericFileComponent('latest'),
      fileName: 'history-latest.json',
      title: FILE_KINDS.latest.title,
      schema: HistoryLatestFile,
    },
  ];
}

let rowEntries: readonly SchemaEntry[] | undefined;

/**
 * One row schema per resource: published as files under /schemas/, and OpenAPI components that type the rows of
 * that resource's files. Made once, so that each row schema keeps its identity and its JSON Schema is emitted once
 * (see toJsonSchema).
 */
export function historyRowSchemaEntries(): SchemaEntry[] {
  rowEntries ??= HISTORY_RESOURCE_IDS.map((id) => ({
    name: historyRowComponent(id),
    fileName: historyRowSchemaFile(id),
    title: `History row: ${HISTORY_RESOURCES[id].title}`,
    schema: historyRowSchema(HISTORY_RESOURCES[id]),
  }));
  return [...rowEntries];
}

const component = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * One resource's day or latest file, from the generic one: its `resource` is that resource, and each row is that
 * resource's row component. A whole schema, not an `allOf` over the generic one: generated clients type an
 * `allOf` as an intersection, whose rows keep the generic row's loose type (openapi-typescript gives
 * `rows.map(row => row.confidence)` the type `string | number | null`).
 */
function typedFileSchema(generic: JsonSchema, id: HistoryResourceId, kind: FileKind): JsonSchema {
  const properties = generic.properties as Record<string, JsonSchema> | undefined;
  const externalDocs = generic.externalDocs as { url: string } | undefined;
  if (!properties?.rows || !externalDocs)
    throw new Error(`${genericFileComponent(kind)} has no rows to type`);
  return {
    ...generic,
    properties: {
      ...properties,
      resource: {
        type: 'string',
        const: id,
        description: `which free resource the history rows come from: always \`${id}\` in this file`,
      },
      rows: { ...properties.rows, items: component(historyRowComponent(id)) },
    },
    title: `${FILE_KINDS[kind].title}: ${HISTORY_RESOURCES[id].title}`,
    externalDocs: {
      description:
        `This file's schema for every resource as a standalone JSON Schema file; the schema of one ${id} row: ` +
        `/schemas/${historyRowSchemaFile(id)}`,
      url: externalDocs.url,
    },
  };
}

/**
 * The OpenAPI components with one day and one latest file schema per resource in place of the generic two: each
 * history path answers with its own resource's file, so the generic schemas would be components no path uses (and
 * stay files under /schemas/). `components` holds the generic ones and the row components.
 */
export function withTypedHistoryFiles(components: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const typed = { ...components };
  for (const kind of FILE_KIND_NAMES) {
    const generic = components[genericFileComponent(kind)];
    if (!generic) throw new Error(`no ${genericFileComponent(kind)} among the components`);
    delete typed[genericFileComponent(kind)];
    for (const id of HISTORY_RESOURCE_IDS)
      typed[historyFileComponent(id, kind)] = typedFileSchema(generic, id, kind);
  }
  return typed;
}

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

const dateParameter = {
  name: 'date',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'date' },
  description: 'UTC day, YYYY-MM-DD (see days in /api/history/index.json)',
};

/**
 * The four paths of one resource's history. Concrete per resource, not `/api/history/{resource}/...`: each
 * operation then answers with that resource's own row type, the form every client generator supports (a
 * `oneOf` discriminated by `resource` is handled unevenly). No templated `{resource}` path is kept beside them: it
 * would describe the same files again, as a second, untyped operation that routers may match instead.
 */
function resourcePaths(id: HistoryResourceId): Json {
  const dir = `/${historyDir(id)}`;
  const name = pascal(id);
  const title = HISTORY_RESOURCES[id].title;
  return {
    [`${dir}/latest.json`]: {
      get: operation(
        `get${name}HistoryLatest`,
        `Latest history rows: ${title}`,
        `The last ${LATEST_ROWS} rows. ${cacheNote.latest}`,
        historyFileComponent(id, 'latest'),
      ),
    },
    [`${dir}/latest.csv`]: {
      get: csvOperation(
        `get${name}HistoryLatestCsv`,
        `Latest history rows (CSV): ${title}`,
        cacheNote.latest,
      ),
    },
    [`${dir}/{date}.json`]: {
      parameters: [dateParameter],
      get: operation(
        `get${name}HistoryDay`,
        `History of one UTC day: ${title}`,
        `One row per run of that day. ${cacheNote.day}`,
        historyFileComponent(id, 'day'),
      ),
    },
    [`${dir}/{date}.csv`]: {
      parameters: [dateParameter],
      get: csvOperation(`get${name}HistoryDayCsv`, `History of one UTC day (CSV): ${title}`, cacheNote.day),
    },
  };
}

export function historyPaths(): Json {
  return Object.assign(
    {
      '/api/history/index.json': {
        get: operation(
          'getHistoryIndex',
          'History index',
          'Which history exists: per resource its columns, first and last days and every day file.',
          'HistoryIndex',
        ),
      },
    },
    ...HISTORY_RESOURCE_IDS.map(resourcePaths),
  ) as Json;
}

export function historyLlmsLines(url: (path: string) => string): string {
  return [
    `- [History index](${url('/api/history/index.json')}): which past values exist (one row per run, per resource), columns and every day file; one UTC day is /api/history/<resource>/YYYY-MM-DD.json, final once a later day has a file; a run that published nothing has no row (/status.json unpublished_runs lists those of the last ${UNPUBLISHED_RUNS_DAYS} days)`,
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
