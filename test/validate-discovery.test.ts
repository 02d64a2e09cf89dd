// What the site publishes about its own files agrees with the files, on a real build that the real `emi serve`
// serves. The rule: llms.txt calls the sitemap "every page and every free file linked here", so every URL llms.txt
// links that answers 200 (the sitemap itself aside) is in sitemap.xml, and every docs page in sitemap.xml is linked
// from llms.txt. The history's JSON Schemas say what a row is: one run (per-asset values are columns), not one asset.
// The paid examples of the OpenAPI document show BTC at a price BTC has traded at, not one that reads as broken.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';
import { HISTORY_RESOURCE_IDS } from '../schemas/history.ts';
import { historyFileComponent } from '../generator/discovery/history-entries.ts';
import { startEmi } from './ops-cli.ts';
import type { Running } from './ops-cli.ts';
import { FIRST_RUN, copyTemplates } from './site-fixture.ts';

// This file's ports (the site is built for the origin it is served on, so its links can be followed as they are).
const PORT = 19711;
const FACILITATOR_PORT = 19712;
const ORIGIN = `http://127.0.0.1:${PORT}`;

let root: string;
let serve: Running;
let llmsLinks: string[];
let sitemapLocs: string[];

const get = async (url: string) => {
  const response = await fetch(url, { redirect: 'manual' });
  await response.arrayBuffer();
  return response.status;
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-validate-discovery-'));
  const siteDir = join(root, 'site');
  await mkdir(siteDir, { recursive: true });
  await copyTemplates(siteDir);
  const report = await runPipeline({
    outDir: siteDir,
    paidDir: join(root, 'paid'),
    stateDir: join(root, 'var'),
    source: 'sim',
    seed: 7,
    asOf: FIRST_RUN,
  });
  expect(report.status).not.toBe('failed');
  await buildSite({ siteDir, outDir: join(root, 'dist'), baseUrl: ORIGIN });
  serve = startEmi(
    root,
    ['serve', '--port', String(PORT), '--dev-facilitator-port', String(FACILITATOR_PORT)],
    {},
    { timeoutMs: 170_000 },
  );
  await serve.waitFor(`site: ${ORIGIN}/`);
  const llms = await (await fetch(`${ORIGIN}/llms.txt`)).text();
  llmsLinks = [...llms.matchAll(/\]\((http[^)]+)\)/g)].map((m) => m[1] ?? '');
  const sitemap = await (await fetch(`${ORIGIN}/sitemap.xml`)).text();
  sitemapLocs = [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1] ?? '');
}, 180_000);

afterAll(async () => {
  serve?.stop();
  await serve?.done;
  if (root) await rm(root, { recursive: true, force: true });
});

describe('sitemap.xml and llms.txt on the served site', () => {
  it('lists in the sitemap every URL llms.txt links that answers 200', async () => {
    const answering: string[] = [];
    for (const url of llmsLinks) if ((await get(url)) === 200) answering.push(url);
    expect(answering.length).toBeGreaterThan(20);
    expect(answering).toContain(`${ORIGIN}/api/history/index.json`);
    const unlisted = answering.filter((url) => url !== `${ORIGIN}/sitemap.xml` && !sitemapLocs.includes(url));
    expect(unlisted).toEqual([]);
  });

  it('lists every resource’s latest history file, each answering 200 (llms.txt names them all)', async () => {
    for (const id of HISTORY_RESOURCE_IDS) {
      const url = `${ORIGIN}/api/history/${id}/latest.json`;
      expect(sitemapLocs, id).toContain(url);
      expect(await get(url), url).toBe(200);
    }
  });

  it('links from llms.txt every docs page the sitemap lists', () => {
    const docs = sitemapLocs.filter((url) => new URL(url).pathname.startsWith('/docs/'));
    expect(docs).toContain(`${ORIGIN}/docs/publishers/`);
    expect(docs.filter((url) => !llmsLinks.includes(url))).toEqual([]);
  });
});

describe('the history schemas on the served site', () => {
  const rowsDescription = (schema: { properties?: { rows?: { description?: string } } }) =>
    schema.properties?.rows?.description ?? '';

  it('describe the rows of a day and a latest file as one row per run, not per asset', async () => {
    const openapi = (await (await fetch(`${ORIGIN}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties?: { rows?: { description?: string } } }> };
    };
    const described = [
      rowsDescription(await (await fetch(`${ORIGIN}/schemas/history-day.json`)).json()),
      rowsDescription(await (await fetch(`${ORIGIN}/schemas/history-latest.json`)).json()),
      // The document answers each resource's files with a schema of their own (its rows typed).
      ...HISTORY_RESOURCE_IDS.flatMap((id) =>
        (['day', 'latest'] as const).map((kind) =>
          rowsDescription(openapi.components.schemas[historyFileComponent(id, kind)] ?? {}),
        ),
      ),
    ];
    for (const description of described) {
      expect(description).toMatch(/one row per run/);
      expect(description).toContain('/schemas/history-<resource>-row.json');
      expect(description).not.toMatch(/per asset/);
    }
  });
});

/** Every BTC price in a JSON document: the numeric `price` of each object whose `asset` is BTC. */
function btcPrices(value: unknown): number[] {
  if (Array.isArray(value)) return value.flatMap(btcPrices);
  if (typeof value !== 'object' || value === null) return [];
  const object = value as Record<string, unknown>;
  const own = object.asset === 'BTC' && typeof object.price === 'number' ? [object.price] : [];
  return [...own, ...Object.values(object).flatMap(btcPrices)];
}

describe('the paid examples on the served site', () => {
  it('show BTC at a price BTC has traded at (over 1 000 USD)', async () => {
    const openapi: unknown = await (await fetch(`${ORIGIN}/openapi.json`)).json();
    const prices = btcPrices(openapi);
    expect(prices.length).toBeGreaterThanOrEqual(3); // the paid regime, the atlas and the human report
    for (const price of prices) expect(price).toBeGreaterThan(1000);
  });
});
