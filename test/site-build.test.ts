// The built site: generated files copied through untouched, no paid body published, llms.txt, sitemap and robots
// that point only at files that exist, and docs pages that show the run.
import { HISTORY_RESOURCE_IDS } from '../schemas/history.ts';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { buildSite } from '../generator/site/build.ts';
import { generatedAtOf } from '../generator/discovery/run-files.ts';
import { FIRST_RUN, RUN_SPACING_MS, TEST_BASE_URL, generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

const BASE = TEST_BASE_URL.replace(/\/$/, '');
const RUNS = 3;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** The dist/ file a URL of this site is served from (a folder URL is its index.html). */
function fileForUrl(distDir: string, url: string): string {
  expect(url.startsWith(`${BASE}/`), url).toBe(true);
  const path = new URL(url).pathname;
  return join(distDir, path.endsWith('/') ? `${path}index.html` : path);
}

describe('built site', () => {
  let site: BuiltSite;
  const dist = (path: string) => join(site.distDir, path);
  const text = (path: string) => readFile(dist(path), 'utf8');

  beforeAll(async () => {
    site = await generateAndBuild({ runs: RUNS });
  }, 180_000);
  afterAll(async () => {
    await site?.cleanup();
  });

  it('copies every generated API file through byte for byte', async () => {
    const generated = [
      ...(await filesUnder(join(site.siteDir, 'api'))),
      ...(await filesUnder(join(site.siteDir, 'arena'))),
    ];
    const history = generated.filter((file) => relative(site.siteDir, file).startsWith('api/history/'));
    expect(generated.length - history.length).toBe(FREE_RESOURCES.length + TRACKED_ASSETS.length);
    // The published history: per resource one day file and latest.json, each with a CSV twin, and the index.
    expect(history).toHaveLength(HISTORY_RESOURCE_IDS.length * 4 + 1);
    for (const file of generated) {
      const path = relative(site.siteDir, file);
      expect(await readFile(dist(path)), path).toEqual(await readFile(file));
    }
  });

  it('publishes no paid body', async () => {
    const paidBodies = await Promise.all(
      PAID_RESOURCES.map((r) => readFile(join(site.paidDir, r.file), 'utf8')),
    );
    const fingerprints = paidBodies.flatMap((body) => [body.trim(), JSON.stringify(JSON.parse(body))]);
    for (const file of await filesUnder(site.distDir)) {
      expect(PAID_RESOURCES.map((r) => r.file)).not.toContain(relative(site.distDir, file));
      const content = await readFile(file, 'utf8');
      for (const fingerprint of fingerprints) expect(content.includes(fingerprint), file).toBe(false);
    }
  });

  it('writes llms.txt in the llmstxt.org shape, in the spec’s integration order', async () => {
    const llms = await text('llms.txt');
    const lines = llms.split('\n');
    expect(lines[0]).toBe('# Educational Market Intelligence');
    expect(lines[1]).toBe('');
    expect(lines[2]).toMatch(/^> .*educational/i);
    const headings = lines.filter((line) => line.startsWith('#'));
    expect(headings.filter((h) => h.startsWith('# '))).toHaveLength(1);
    expect(headings.at(-1)).toBe('## Optional');
    const sectionLinks = (heading: string) => {
      const start = lines.indexOf(heading);
      const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
      return lines.slice(start + 1, end === -1 ? undefined : end).filter((line) => line.startsWith('- '));
    };
    const free = sectionLinks(headings.find((h) => h.startsWith('## Free')) ?? '');
    expect(free.map((line) => line.match(/\]\(([^)]+)\)/)?.[1])).toEqual(
      [
        '/api/market-regime.php',
        '/api/main-brain.php',
        '/api/liquidity-lite.php',
        '/api/derivatives.php',
        '/api/reasoning.php',
        '/api/statistics.php',
      ].map((path) => `${BASE}${path}`),
    );
    expect(llms.indexOf('## Free')).toBeLessThan(llms.indexOf('## Paid'));
    for (const line of lines.filter((l) => l.startsWith('- ')))
      expect(line).toMatch(/^- \[[^\]]+\]\(https?:\/\/[^)]+\): \S/);
  });

  it('tells an agent the size of the openapi.json it ships, to within 10 KB', async () => {
    const bytes = Buffer.byteLength(await text('openapi.json'));
    const said = (await text('llms.txt')).match(/\(\S+\/openapi\.json\): [^\n]*\(about (\d+) KB;/)?.[1];
    expect(said).toBeDefined();
    expect(Math.abs(Number(said) * 1000 - bytes)).toBeLessThanOrEqual(5_000);
  });

  it('links from llms.txt only to files that exist in dist/ (or to the paywall’s paid paths)', async () => {
    const urls = [...(await text('llms.txt')).matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1] ?? '');
    expect(urls.length).toBeGreaterThan(20);
    const paidPaths = PAID_RESOURCES.map((r) => `${BASE}${r.path}`);
    for (const url of urls) {
      if (paidPaths.includes(url)) continue; // answered by the paywall worker, never a file
      expect(existsSync(fileForUrl(site.distDir, url)), url).toBe(true);
    }
    expect(urls.filter((url) => paidPaths.includes(url)).sort()).toEqual([...paidPaths].sort());
  });

  it('lists every page and free endpoint in the sitemap, each an existing file, with the run’s times', async () => {
    const xml = await text('sitemap.xml');
    const entries = [...xml.matchAll(/<url><loc>([^<]+)<\/loc>(?:<lastmod>([^<]+)<\/lastmod>)?<\/url>/g)].map(
      (m) => ({
        loc: m[1] ?? '',
        lastmod: m[2],
      }),
    );
    expect(entries.length).toBe(xml.match(/<url>/g)?.length);
    for (const { loc } of entries) expect(existsSync(fileForUrl(site.distDir, loc)), loc).toBe(true);

    const locs = entries.map((e) => e.loc);
    for (const resource of FREE_RESOURCES) expect(locs).toContain(`${BASE}${resource.path}`);
    const pages = (await filesUnder(site.distDir)).filter((f) => f.endsWith('index.html'));
    for (const page of pages)
      expect(locs).toContain(`${BASE}/${relative(site.distDir, page).replace(/index\.html$/, '')}`);
    // The pages come first, in path order, whatever dates their template files have in this checkout.
    const pageLocs = locs.slice(0, pages.length);
    expect(pageLocs).toEqual([...pageLocs].sort());
    expect(new Set(pageLocs)).toEqual(
      new Set(pages.map((page) => `${BASE}/${relative(site.distDir, page).replace(/index\.html$/, '')}`)),
    );

    const lastRun = new Date(FIRST_RUN + (RUNS - 1) * RUN_SPACING_MS).getTime();
    for (const resource of FREE_RESOURCES) {
      const entry = entries.find((e) => e.loc === `${BASE}${resource.path}`);
      const stated = generatedAtOf(JSON.parse(await text(resource.file)));
      expect(entry?.lastmod, resource.path).toBe(stated);
      expect(Date.parse(entry?.lastmod ?? '')).toBe(lastRun);
    }
    expect(await text('robots.txt')).toContain(`Sitemap: ${BASE}/sitemap.xml`);
  });

  it('publishes the OpenAPI document twice, as the same JSON and YAML, with a JSON Schema per resource', async () => {
    const json = JSON.parse(await text('openapi.json'));
    expect(YAML.parse(await text('openapi.yaml'))).toEqual(json);
    expect(json.servers[0].url).toBe(BASE);
    const schemaFiles = await readdir(dist('schemas'));
    // + 402 body, error body, paywall error body, run status; plus the history: index, day and latest files, and one row schema per history resource.
    expect(schemaFiles.length).toBe(
      FREE_RESOURCES.length + PAID_RESOURCES.length + 4 + 3 + HISTORY_RESOURCE_IDS.length,
    );
    expect(schemaFiles).toContain('run-status.json');
    for (const file of schemaFiles) {
      const schema = JSON.parse(await text(`schemas/${file}`));
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.$id).toBe(`${BASE}/schemas/${file}`);
    }
  });

  it('declares an inline icon on every page, so no browser asks for the missing /favicon.ico', async () => {
    const pages = (await filesUnder(site.distDir)).filter((f) => f.endsWith('.html'));
    const buyerPage = join(import.meta.dirname, '..', 'site', 'x402-buyer', 'index.html');
    expect(pages.length).toBeGreaterThan(10);
    for (const page of [...pages, buyerPage]) {
      // A data: URL: the site's Content-Security-Policy allows data: images (schemas/delivery.ts, img-src).
      expect(await readFile(page, 'utf8'), relative(site.distDir, page)).toMatch(
        /<link\s+rel="icon"\s+type="image\/svg\+xml"\s+href="data:image\/svg\+xml,/,
      );
    }
    expect(existsSync(dist('favicon.ico'))).toBe(false);
  });

  it('shows the current snapshot on the home page, labelled simulated, with a row and trend per coin', async () => {
    const home = await text('index.html');
    expect(home).toContain('SIMULATED DATA');
    const regime = JSON.parse(await text('api/market-regime.php'));
    expect(home).toContain(regime.market_mode);
    const rows = [...home.matchAll(/<td><a href="\/api\/reasoning\.php\?asset=([A-Z]+)">/g)].map((m) => m[1]);
    expect(rows).toEqual([...TRACKED_ASSETS]);
    expect(home.match(/<svg class="spark"/g)?.length).toBe(TRACKED_ASSETS.length * 2);
    // Three runs are under the charts' minimum: the page says it is collecting instead of drawing near-empty axes.
    expect(home.match(/<svg class="chart"/g)).toBeNull();
    expect(home).toContain(`Collecting, ${RUNS} of 12 runs`);
    expect(home).toContain('name="viewport"');
  });

  it('writes one docs page per endpoint with purpose, fields, a live example and a curl line', async () => {
    for (const resource of [...FREE_RESOURCES, ...PAID_RESOURCES]) {
      const slug = resource.id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      const page = await text(`docs/endpoints/${slug}/index.html`);
      expect(page, slug).toContain(
        `curl ${resource.access === 'paid' ? '-i' : '-s'} ${BASE}${resource.path}`,
      );
      expect(page).toContain('<td class="field-name"');
      if (resource.access === 'free') {
        const body = JSON.parse(await text(resource.file));
        expect(page).toContain(generatedAtOf(body) ?? 'missing');
      } else {
        expect(page).toContain(`${resource.amountAtomic} atomic units`);
      }
    }
    const regime = await text('docs/endpoints/market-regime/index.html');
    // Long field names may break after their dots (<wbr>), and nowhere else.
    expect(regime).toContain('source.<wbr>next_update_due');
    expect(regime.replaceAll('<wbr>', '')).toContain('source.next_update_due');
    const terms = await text('docs/payment-terms/index.html');
    for (const term of [
      '31566704',
      'PAYMENT-REQUIRED',
      'PAYMENT-SIGNATURE',
      'PAYMENT-RESPONSE',
      '0.10 USDC',
      '100000',
    ]) {
      expect(terms).toContain(term);
    }
    expect(await text('docs/freshness/index.html')).toContain('next_update_due');
    expect(await text('docs/educational-notice/index.html')).toContain('not financial');
  });

  it('builds without a run history and copies the browser buyer through untouched', async () => {
    const buyerPage = '<!doctype html><p>{{ not a template }} {% raw %}</p>\n';
    await mkdir(join(site.siteDir, 'x402-buyer'), { recursive: true });
    await writeFile(join(site.siteDir, 'x402-buyer', 'index.html'), buyerPage);
    const out = join(site.root, 'dist-without-history');
    try {
      await buildSite({
        siteDir: site.siteDir,
        outDir: out,
        baseUrl: TEST_BASE_URL,
      });
      expect(await readFile(join(out, 'x402-buyer', 'index.html'), 'utf8')).toBe(buyerPage);
      // The charts read the published history (api/history/), not the run-history file named here.
      expect(await readFile(join(out, 'index.html'), 'utf8')).toContain(`Collecting, ${RUNS} of 12 runs`);
      expect(await readFile(join(out, 'llms.txt'), 'utf8')).toContain(`(${BASE}/x402-buyer/)`);
      // Listed like the other pages, with the same last modification.
      const sitemap = await readFile(join(out, 'sitemap.xml'), 'utf8');
      const lastmodOf = (path: string) =>
        sitemap
          .split('\n')
          .find((line) => line.includes(`<loc>${BASE}${path}</loc>`))
          ?.match(/<lastmod>([^<]+)</)?.[1];
      expect(lastmodOf('/x402-buyer/')).toBeDefined();
      expect(lastmodOf('/x402-buyer/')).toBe(lastmodOf('/docs/'));
    } finally {
      await rm(join(site.siteDir, 'x402-buyer'), { recursive: true, force: true });
    }
  });

  it('replaces the output folder as a whole and refuses an output inside the site folder', async () => {
    const out = join(site.root, 'dist-replaced');
    await mkdir(out, { recursive: true });
    await writeFile(join(out, 'stale.txt'), 'left over from an older build');
    await buildSite({ siteDir: site.siteDir, outDir: out, baseUrl: TEST_BASE_URL });
    expect(existsSync(join(out, 'stale.txt'))).toBe(false);
    expect(existsSync(join(out, 'openapi.json'))).toBe(true);
    await expect(
      buildSite({ siteDir: site.siteDir, outDir: join(site.siteDir, 'dist'), baseUrl: TEST_BASE_URL }),
    ).rejects.toThrow(/outside the site folder/);
  });
});
