// What the OpenAPI document says a free or history path answers besides 200, against what the preview server (as
// `emi serve` runs it, the same delivery policy as nginx and the Cloudflare Worker) really answers: a conditional
// GET's 304, a POST's 405 with Allow, a missing file's 404, each status documented and each body valid.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { openApiResponseValidator } from './discovery-ajv.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

const doc = buildOpenApiDocument({ baseUrl: 'https://emi.test' }) as Json;
const validate = openApiResponseValidator(doc);
const HISTORY_INDEX = '/api/history/index.json';
/** Every documented path that is a static file: the free resources and the history index. */
const STATIC_PATHS = [...FREE_RESOURCES.map((r) => r.path), HISTORY_INDEX];

/** A response object of the document, its `$ref` followed. */
function responseOf(path: string, status: number): Json | undefined {
  const response = doc.paths[path]?.get.responses[String(status)] as Json | undefined;
  return typeof response?.$ref === 'string'
    ? (doc.components.responses[response.$ref.split('/').at(-1) ?? ''] as Json)
    : response;
}

const headerNames = (response: Json | undefined): string[] =>
  Object.keys((response?.headers as Json | undefined) ?? {}).map((name) => name.toLowerCase());

let root: string;
let server: Listening;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-static-errors-'));
  const write = async (file: string, body: unknown) => {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), JSON.stringify(body));
  };
  // Every free file but the first: that one answers the 404.
  for (const resource of FREE_RESOURCES.slice(1)) await write(resource.file, { file: resource.file });
  await write('api/history/index.json', { resources: {} });
  server = await listen(createPreviewApp({ root }), 0);
});

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('OpenAPI: the other answers of a free or history path', () => {
  it('documents the 405 every static path answers to POST, with Allow and a valid body', async () => {
    for (const path of STATIC_PATHS) {
      const res = await fetch(`${server.url}${path}`, { method: 'POST' });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow'), path).toBeTruthy();
      expect(headerNames(responseOf(path, 405)), `${path}: Allow declared`).toContain('allow');
      expect(validate(path, '405', await res.json()), path).toEqual([]);
    }
  });

  it('documents the 304 a conditional GET gets', async () => {
    for (const path of STATIC_PATHS.slice(1)) {
      const first = await fetch(`${server.url}${path}`);
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      expect(etag, path).toBeTruthy();
      const again = await fetch(`${server.url}${path}`, { headers: { 'If-None-Match': etag ?? '' } });
      expect(again.status, path).toBe(304);
      expect(responseOf(path, 304), `${path}: 304 documented`).toBeDefined();
    }
  });

  it('documents the 404 of a file no run has written', async () => {
    const path = FREE_RESOURCES[0]!.path;
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(404);
    expect(validate(path, '404', await res.json())).toEqual([]);
  });
});
