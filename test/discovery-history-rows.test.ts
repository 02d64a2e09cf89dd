// The history as a client generator reads the OpenAPI document: each resource's latest and day files answer with
// that resource's rows, typed by its row schema (the one published under /schemas/), not as any object. The files
// a simulated run published validate against the schemas reached from the document; a wrong-typed column does not.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { standaloneSchema } from '../generator/discovery/json-schema.ts';
import { historyRowSchemaEntries } from '../generator/discovery/history-entries.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { HISTORY_RESOURCE_IDS, HISTORY_RESOURCES } from '../schemas/history.ts';
import type { HistoryResourceId } from '../schemas/history.ts';
import { openApiResponseValidator } from './discovery-ajv.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const BASE_URL = 'https://emi.test';
const T0 = Date.parse('2026-05-20T10:00:00.000Z');
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

const doc = buildOpenApiDocument({ baseUrl: BASE_URL }) as Json;
const validate = openApiResponseValidator(doc);

/** The component a local `$ref` names (`#/components/schemas/X`). */
const resolve = (ref: unknown): Json | undefined =>
  typeof ref === 'string' && ref.startsWith('#/components/schemas/')
    ? doc.components.schemas[ref.slice('#/components/schemas/'.length)]
    : undefined;

/** The 200 JSON schema of a path, followed through its `$ref`. */
const responseSchema = (path: string): Json | undefined =>
  resolve(doc.paths[path]?.get?.responses?.['200']?.content?.['application/json']?.schema?.$ref);

const filePaths = (id: string) => ({
  latest: `/api/history/${id}/latest.json`,
  day: `/api/history/${id}/{date}.json`,
});

/** The first declared column of a kind: a column whose value a wrong type can replace. */
function columnOf(id: HistoryResourceId, kind: 'number' | 'string'): string {
  const column = HISTORY_RESOURCES[id].columns.find((c) => c.kind === kind);
  if (!column) throw new Error(`${id} has no ${kind} column`);
  return column.name;
}

/** A copy of `file` whose first row has `column` set to `value`. */
function withCell(file: Json, column: string, value: unknown): Json {
  const copy = structuredClone(file);
  copy.rows[0][column] = value;
  return copy;
}

let root = '';
/** The latest and day files of each resource, as a simulated run published them. */
const published = new Map<HistoryResourceId, { latest: Json; day: Json }>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-history-rows-'));
  const report = await runPipeline(simulatedRun(root, T0, { now: () => T0 }));
  expect(report.status).toBe('ok');
  const readJson = async (path: string): Promise<Json> => JSON.parse(await readFile(path, 'utf8')) as Json;
  for (const id of HISTORY_RESOURCE_IDS) {
    const dir = join(root, 'site', 'api', 'history', id);
    const dayFile = (await readdir(dir)).find((name) => /^\d{4}-\d{2}-\d{2}\.json$/.test(name));
    if (!dayFile) throw new Error(`no day file for ${id}`);
    published.set(id, {
      latest: await readJson(join(dir, 'latest.json')),
      day: await readJson(join(dir, dayFile)),
    });
  }
}, 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the history paths of the OpenAPI document', () => {
  it.each(HISTORY_RESOURCE_IDS)('%s: the latest and day files carry its own row schema', (id) => {
    const rowEntry = historyRowSchemaEntries().find((e) => e.fileName === `history-${id}-row.json`);
    if (!rowEntry) throw new Error(`no row schema entry for ${id}`);
    const publishedRow = standaloneSchema(rowEntry, BASE_URL);
    for (const path of Object.values(filePaths(id))) {
      const file = responseSchema(path);
      expect(file, path).toBeDefined();
      expect(file?.properties.resource.const, path).toBe(id);
      const rowRef = file?.properties.rows.items.$ref;
      expect(rowRef, path).toBe(`#/components/schemas/${rowEntry.name}`);
      // The component is the row schema published under /schemas/, and links to it.
      const row = resolve(rowRef);
      expect(row?.externalDocs.url, path).toBe(`${BASE_URL}/schemas/history-${id}-row.json`);
      expect(row?.properties, path).toEqual(publishedRow.properties);
      expect(row?.required, path).toEqual(publishedRow.required);
    }
  });

  it('keeps no templated resource path beside the concrete ones (they would match the same URLs)', () => {
    expect(Object.keys(doc.paths).filter((path) => path.includes('{resource}'))).toEqual([]);
  });
});

describe('the files a simulated run published, against the schemas the document gives', () => {
  it.each(HISTORY_RESOURCE_IDS)('%s: the latest and day files validate', (id) => {
    const files = published.get(id);
    if (!files) throw new Error(`no published files for ${id}`);
    expect(files.latest.rows.length).toBeGreaterThan(0);
    expect(validate(filePaths(id).latest, '200', files.latest)).toEqual([]);
    expect(validate(filePaths(id).day, '200', files.day)).toEqual([]);
  });

  it.each(HISTORY_RESOURCE_IDS)('%s: a row with a wrong-typed column is refused', (id) => {
    const files = published.get(id);
    if (!files) throw new Error(`no published files for ${id}`);
    const number = columnOf(id, 'number');
    const string = columnOf(id, 'string');
    for (const [which, path] of Object.entries(filePaths(id))) {
      const file = files[which as 'latest' | 'day'];
      // A number column as a string (e.g. a confidence of "72"), a string column as a number: both are refused.
      const asString = validate(path, '200', withCell(file, number, String(file.rows[0][number] ?? 72)));
      expect(asString.join(), `${path} ${number}`).toContain(`/rows/0/${number}`);
      const asNumber = validate(path, '200', withCell(file, string, 1));
      expect(asNumber.join(), `${path} ${string}`).toContain(`/rows/0/${string}`);
      // A file that names another resource: this path answers with this resource's file only.
      const other = HISTORY_RESOURCE_IDS.find((r) => r !== id) ?? id;
      expect(validate(path, '200', { ...file, resource: other }), `${path} resource`).not.toEqual([]);
    }
  });

  it('refuses a market-regime row whose confidence is a string', () => {
    const latest = published.get('market-regime')?.latest;
    if (!latest) throw new Error('no market-regime latest file');
    expect(validate('/api/history/market-regime/latest.json', '200', latest)).toEqual([]);
    const errors = validate(
      '/api/history/market-regime/latest.json',
      '200',
      withCell(latest, 'confidence', '72'),
    );
    expect(errors.join()).toContain('/rows/0/confidence');
  });
});

describe('a client generated from the document (openapi-typescript)', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-history-client-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('types the rows of a latest file by their columns', async () => {
    await writeFile(join(dir, 'openapi.d.ts'), astToString(await openapiTS(doc as never)));
    // What a client writes: the response type of the operation, each row's confidence a number or null.
    const use = [
      "import type { operations } from './openapi.js';",
      "type Latest = operations['getMarketRegimeHistoryLatest']['responses']['200']['content']['application/json'];",
      'declare const latest: Latest;',
      'export const confidences: (number | null)[] = latest.rows.map((row) => row.confidence);',
      "export const resource: 'market-regime' = latest.resource;",
      '// @ts-expect-error a confidence is no string',
      'export const wrong: string = latest.rows[0]!.confidence;',
    ].join('\n');
    const file = join(dir, 'use.ts');
    await writeFile(file, `${use}\n`);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).toEqual([]);
  }, 60_000);
});
