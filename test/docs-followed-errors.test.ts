// The built docs pages say what the server does, followed word for word: the freshness page's snippet reads every
// free endpoint (it read `body.source.next_update_due`, which only three of the nine carry: it said `stale` or threw
// on the others), and the pages a buyer pays from name every error status of a paid path the buyer must act on
// (they named 402 alone, so a 409 `payment_id_conflict` or a 503 with Retry-After came as a surprise).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointDocsPath } from '../generator/discovery/docs-paths.ts';
import { freeResourcesInIntegrationOrder, paidResources } from '../generator/discovery/endpoint-notes.ts';
import { freshnessFieldsOf } from '../generator/discovery/freshness-fields.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { FIRST_RUN, codeBlocks, decodeEntities, generateAndBuild, pageHtml } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

const BASE = 'https://desk.emi.test';

/** Tags inside a line of text, which a reader does not see as a break. */
const INLINE_TAG = /<\/?(?:a|code|em|strong|small|span|wbr)\b[^>]*>/g;

/** What a reader reads of a built page: its text without tags, entities decoded, spaces collapsed. */
async function pageText(site: BuiltSite, page: string): Promise<string> {
  const html = await pageHtml(site, page);
  const text = html
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(INLINE_TAG, '')
    .replace(/<[^>]+>/g, ' ');
  return decodeEntities(text).replace(/\s+/g, ' ');
}

type Snippet = (fetch: (url: string) => Promise<Response>, date: DateConstructor) => Promise<unknown>;

/** The snippet as a function of `fetch` and `Date`, returning its `state`. */
function runnable(code: string): Snippet {
  const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
    ...args: string[]
  ) => Snippet;
  return new AsyncFunction('fetch', 'Date', `${code}\nreturn state;`);
}

/** `Date` with its clock stopped at `now` (the snippet calls only `Date.now` and `Date.parse`). */
const dateAt = (now: number): DateConstructor =>
  Object.assign(Object.create(Date) as DateConstructor, { now: () => now });

/** A status named as a number of its own, not as part of another number. */
const namesStatus = (text: string, status: string): boolean =>
  new RegExp(`(?<![\\d.,])${status}(?![\\d.,]\\d)`).test(text);

describe('the built docs pages, followed word for word', () => {
  let site: BuiltSite;
  beforeAll(async () => {
    site = await generateAndBuild({ runs: 1, baseUrl: `${BASE}/` });
  }, 180_000);
  afterAll(async () => {
    await site?.cleanup();
  });

  it("the freshness page's snippet tells fresh, late and stale apart on every free endpoint", async () => {
    const blocks = (await codeBlocks(site, 'docs/freshness')).filter((block) => block.includes('fetch('));
    expect(blocks).toHaveLength(1);
    const snippet = runnable(blocks[0]!);
    const free = freeResourcesInIntegrationOrder();
    expect(free).toHaveLength(9);
    // One run at FIRST_RUN: every file was made then and is due a minute later.
    const cases: Array<[number, string]> = [
      [FIRST_RUN + 30_000, 'fresh'],
      [FIRST_RUN + 90_000, 'late'],
      [FIRST_RUN + 200_000, 'stale'],
    ];
    for (const resource of free) {
      const body = await readFile(join(site.distDir, resource.path), 'utf8');
      for (const [now, expected] of cases) {
        const asked: string[] = [];
        const stubFetch = (url: string) => {
          asked.push(url);
          return Promise.resolve(new Response(body, { headers: { 'Content-Type': 'application/json' } }));
        };
        expect(await snippet(stubFetch, dateAt(now)), `${resource.path} at +${now - FIRST_RUN} ms`).toBe(
          expected,
        );
        expect(asked).toHaveLength(1);
        expect(asked[0]!.startsWith(`${BASE}/`)).toBe(true);
      }
    }
  });

  it('the freshness page names the freshness fields of each free endpoint, and the cache headers as sent', async () => {
    // Long field names may break after their dots (<wbr>); a reader reads them whole.
    const html = (await pageHtml(site, 'docs/freshness')).replaceAll('<wbr>', '');
    for (const resource of freeResourcesInIntegrationOrder()) {
      const row = new RegExp(`<tr><td><a href="${endpointDocsPath(resource)}">[\\s\\S]*?</tr>`).exec(
        html,
      )?.[0];
      expect(row, resource.path).toBeDefined();
      const named = [...row!.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1]!);
      const due = freshnessFieldsOf(resource).filter((path) => /(^|\.)next_update_due$/.test(path));
      expect(due, resource.path).toHaveLength(1);
      expect(named, resource.path).toContain(due[0]);
      // Every field the row names is one the endpoint's schema declares.
      for (const field of named) expect(freshnessFieldsOf(resource), resource.path).toContain(field);
    }
    const text = await pageText(site, 'docs/freshness');
    // A free file's cache lifetime ends when the next is due (schemas/delivery.ts freeCacheFor).
    expect(text).toContain('Cache-Control: max-age= the seconds left of its 60');
    expect(text).toContain('Cache-Control: no-cache');
    expect(text).toMatch(/every 402 and every paid answer[^.]*Cache-Control: no-store/);
  });

  it('the payment terms and the overview name every paid-path error a buyer must act on, as the OpenAPI lists it', async () => {
    const openapi = JSON.parse(await readFile(join(site.distDir, 'openapi.json'), 'utf8')) as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    // The statuses after which a buyer sends the kept payment again, or waits, or takes a new payment id.
    const actOn = ['409', '502', '503', '504'];
    for (const resource of paidResources())
      for (const status of actOn)
        expect(Object.keys(openapi.paths[resource.path]!.get.responses), resource.path).toContain(status);

    const terms = await pageText(site, 'docs/payment-terms');
    for (const status of actOn) expect(namesStatus(terms, status), `payment terms: ${status}`).toBe(true);
    for (const words of ['payment-identifier', 'payment_id_conflict', 'payment_already_used', 'Retry-After'])
      expect(terms).toContain(words);
    // Every 503 code the paywall's core and sale points can give, read from their sources (a storefront's
    // not_available_from_seller included: the OpenAPI does not describe storefront paths, the terms do).
    const sources = await Promise.all(
      [
        ...(await readdir('paywall-worker/core')).map((name) => `paywall-worker/core/${name}`),
        'paywall-worker/facilitator-errors.ts',
        'paywall-worker/publishers/sale-points.ts',
      ].map((file) => readFile(file, 'utf8')),
    );
    const text = sources.join('\n');
    const codes = new Set([
      ...[...text.matchAll(/fail\(\s*503,\s*'([a-z_]+)'/g)].map((m) => m[1]!),
      ...[...text.matchAll(/status: 503,\s*error: '([a-z_]+)'/g)].map((m) => m[1]!),
    ]);
    expect([...codes]).toEqual(
      expect.arrayContaining(['paid_resource_unavailable', 'not_available_from_seller']),
    );
    for (const code of codes) expect(terms, `payment terms: 503 ${code}`).toContain(code);
    expect(terms).toContain('502 or 504 naming no transaction');

    const overview = await pageText(site, 'docs');
    for (const status of [...actOn, '405', '410'])
      expect(namesStatus(overview, status), `overview: ${status}`).toBe(true);
    for (const words of ['payment_id_conflict', 'seller_closed', 'Retry-After'])
      expect(overview).toContain(words);
  });

  it('every paid endpoint page names its 503 with Retry-After and its 409', async () => {
    for (const resource of paidResources()) {
      const text = await pageText(site, endpointDocsPath(resource).replace(/^\/|\/$/g, ''));
      expect(namesStatus(text, '503'), resource.path).toBe(true);
      expect(text, resource.path).toContain('Retry-After');
      expect(namesStatus(text, '409'), resource.path).toBe(true);
      expect(text, resource.path).toContain('payment_id_conflict');
    }
  });

  it("the publishers page says a closed storefront's own page answers 410 and links the site's buyer page", async () => {
    const text = await pageText(site, 'docs/publishers');
    expect(text).toMatch(
      /\/p\/<id>\/x402-buyer\/ itself answers 410[^.]*closed[^.]*buyer page \(\/x402-buyer\/\)/,
    );
  });

  it('the reasoning page says what an empty asset and a repeated asset do', async () => {
    const text = await pageText(site, 'docs/endpoints/reasoning');
    expect(text).toMatch(/empty asset=,? answers 400/);
    expect(text).toMatch(/asset given twice[^.]*first/);
    // What the page says is what the preview server (the delivery policy every host follows) does.
    const preview = createPreviewApp({ root: site.distDir });
    const empty = await preview.request('/api/reasoning.php?asset=');
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: string }).error).toBe('invalid_asset');
    const twice = await preview.request('/api/reasoning.php?asset=ETH&asset=BTC');
    expect(twice.status).toBe(200);
    expect(((await twice.json()) as { asset: string }).asset).toBe('ETH');
  });
});
