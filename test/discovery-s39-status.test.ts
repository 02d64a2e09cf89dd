// /status.json, the run status monitors poll, in the discovery documents: the OpenAPI 3.1 document describes it
// (a client generated from the document can read it), its schema validates the status a real `emi generate` wrote
// (ajv, draft 2020-12), and on the built site the real preview serves, llms.txt links it, the sitemap lists it and
// the API reference page renders the document that describes it.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { buildSite } from '../generator/site/build.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { STATUS_PATH, cacheFor } from '../schemas/delivery.ts';
import { RunStatus } from '../schemas/status.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { openApiResponseValidator } from './discovery-ajv.ts';
import { expectOk, generateArgs, runEmi } from './ops-cli.ts';
import { copyTemplates } from './site-fixture.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

/** This file's port: the site is built for the origin it is served on, so its links can be followed as they are. */
const PORT = 19820;
const ORIGIN = `http://127.0.0.1:${PORT}`;

let root: string;
let server: Listening;
/** The status the real `emi generate` wrote. */
let written: unknown;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-discovery-s39-'));
  const siteDir = join(root, 'site');
  await mkdir(siteDir, { recursive: true });
  await copyTemplates(siteDir);
  expectOk(await runEmi(root, generateArgs('2026-01-05T12:00:00Z'), {}, { timeoutMs: 120_000 }));
  written = JSON.parse(await readFile(join(siteDir, 'status.json'), 'utf8'));
  await buildSite({ siteDir, outDir: join(root, 'dist'), baseUrl: ORIGIN });
  server = await listen(createPreviewApp({ root: join(root, 'dist') }), PORT);
}, 240_000);

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const get = async (path: string) => fetch(`${ORIGIN}${path}`);

describe('/status.json in the OpenAPI document', () => {
  const doc = buildOpenApiDocument({ baseUrl: 'https://emi.test' }) as Json;

  it('is a free GET path whose 200 is the run status schema, validating what `emi generate` wrote', () => {
    expect(RunStatus.safeParse(written).success).toBe(true); // the file is a real status, not a stand-in
    const operation = doc.paths[STATUS_PATH]?.get as Json | undefined;
    expect(operation).toMatchObject({ security: [], summary: expect.any(String) });
    const validate = openApiResponseValidator(doc);
    expect(validate(STATUS_PATH, '200', written)).toEqual([]);
    // The schema can fail: a status a monitor could not trust is refused.
    expect(validate(STATUS_PATH, '200', { ...(written as Json), status: 'fine' })).not.toEqual([]);
    expect(validate(STATUS_PATH, '200', { ...(written as Json), last_run: undefined })).not.toEqual([]);
  });

  it('states the cache hint every host sends for it (never cached) and its freshness fields', () => {
    const operation = doc.paths[STATUS_PATH].get as Json;
    expect(cacheFor(STATUS_PATH)).toBe('no-store');
    expect(operation['x-cache-seconds']).toBe(0);
    expect(operation.responses['200'].headers['Cache-Control'].description).toBe(cacheFor(STATUS_PATH));
    expect(operation['x-freshness-fields']).toEqual(
      expect.arrayContaining(['data.generated_at', 'data.next_update_due']),
    );
  });
});

describe('/status.json on the built site', () => {
  it('is described by the served openapi.json, whose schema validates the served status', async () => {
    const served = await get(STATUS_PATH);
    expect(served.status).toBe(200);
    const status: unknown = await served.json();
    const doc = (await (await get('/openapi.json')).json()) as Json;
    expect(openApiResponseValidator(doc)(STATUS_PATH, '200', status)).toEqual([]);
    // The document's example is the status of the run the site was built from.
    const content = doc.paths[STATUS_PATH].get.responses['200'].content['application/json'];
    expect(content.examples.latest.value).toEqual(written);
    // The same schema as a standalone file, where the component says it is.
    const schemaUrl = doc.components.schemas[content.schema.$ref.split('/').at(-1)].externalDocs
      .url as string;
    expect((await fetch(schemaUrl)).status).toBe(200);
  });

  it('is linked from llms.txt under the operation’s summary, and listed in the sitemap', async () => {
    const doc = (await (await get('/openapi.json')).json()) as Json;
    const llms = await (await get('/llms.txt')).text();
    const link = [...llms.matchAll(/^- \[([^\]]+)\]\(([^)]+)\)/gm)].find(
      (m) => m[2] === `${ORIGIN}${STATUS_PATH}`,
    );
    expect(link, 'llms.txt links /status.json').toBeDefined();
    expect(doc.paths[STATUS_PATH].get.summary.startsWith(link?.[1])).toBe(true);
    const sitemap = await (await get('/sitemap.xml')).text();
    const locs = [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(locs).toContain(`${ORIGIN}${STATUS_PATH}`);
    const entry = /<url><loc>[^<]*\/status\.json<\/loc><lastmod>([^<]+)<\/lastmod><\/url>/.exec(sitemap);
    expect(entry?.[1]).toBe((written as { last_run: { finished_at: string } }).last_run.finished_at);
  });

  it('is in the document the API reference page renders', async () => {
    const page = await (await get('/docs/api/')).text();
    const source = /id="api-reference-root" data-url="([^"]+)"/.exec(page)?.[1];
    expect(source).toBeDefined();
    const doc = (await (await fetch(new URL(source ?? '', `${ORIGIN}/docs/api/`))).json()) as Json;
    expect(Object.keys(doc.paths)).toContain(STATUS_PATH);
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toEqual(
      expect.arrayContaining(doc.paths[STATUS_PATH].get.tags),
    );
  });

  it.skipIf(!hasChromium)(
    'is listed by the API reference page in chromium',
    async () => {
      const { summary } = (await (await get('/openapi.json')).json()).paths[STATUS_PATH].get as Json;
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${ORIGIN}/docs/api/`);
        // The reference lists the operations by their summaries once it has read the document.
        await page.waitForFunction(() => document.body.innerText.includes('Paid (x402)'), undefined, {
          timeout: 60_000,
        });
        expect(await page.evaluate(() => document.body.innerText)).toContain(summary);
      } finally {
        await browser.close();
      }
    },
    90_000,
  );
});
