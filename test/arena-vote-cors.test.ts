// Every answer of POST /arena/vote carries the CORS headers of the paid paths (CORS_HEADERS): the host's preflight
// already allowed a page on another origin to post a vote, and that page must then be able to read the answer, a
// refusal as well as the 201. Checked where the route is mounted: `emi serve` (the preview in front of the local
// paywall), `emi paywall` (the vote app merged into the paywall app) and the Cloudflare site worker (the vote app on
// its own); and for real from headless chromium on another loopback origin. Ports 19210-19213.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../generator/local-stack.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import type { SiteWorkerEnv } from '../paywall-worker/cloudflare/site-worker.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { CORS_HEADERS, VOTE_PATH } from '../schemas/delivery.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { signedVoteBody } from './helpers/signed-vote.ts';
import { voteNamespace } from './helpers/vote-namespace.ts';

const PREVIEW_PORT = 19210;
const PAYWALL_PORT = 19211;
const PAGE_PORT = 19212;
const WORKER_SITE = 'https://arena.example';
const OTHER_ORIGIN = 'https://voter.example';

/** Posts `body` to the vote route as a page on another origin would (with an Origin header). */
type Post = (body: string, contentType?: string) => Promise<Response>;

/** The CORS headers of an answer, as CORS_HEADERS names them. */
const corsOf = (response: Response): Record<string, string | null> =>
  Object.fromEntries(Object.keys(CORS_HEADERS).map((name) => [name, response.headers.get(name)]));

const cleanups: Array<() => Promise<unknown>> = [];
let previewStack: LocalStack;
let paywall: LocalPaywall;
let paywallUrl = '';
const worker = createSiteWorker(() => new MemoryPaymentBook());
const workerEnv: SiteWorkerEnv = {
  ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
  ARENA_VOTES: voteNamespace(),
};

beforeAll(async () => {
  const root = await mkdtemp(join(tmpdir(), 'emi-vote-cors-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  previewStack = await startLocalStack({
    port: PREVIEW_PORT,
    host: '127.0.0.1',
    dir: join(root, 'dist'),
    paid: join(root, 'paid'),
    devFacilitatorPort: 0,
    ledgerFile: join(root, 'serve-publishers.sqlite'),
    voteStorePath: join(root, 'serve-state', 'arena-votes.sqlite'),
    log: () => {},
  });
  cleanups.push(() => previewStack.close());
  paywallUrl = `http://127.0.0.1:${PAYWALL_PORT}`;
  paywall = await createLocalPaywall({
    paidDir: join(root, 'paid'),
    baseUrl: paywallUrl,
    devFacilitatorPort: 0,
    ledgerFile: join(root, 'paywall-publishers.sqlite'),
    voteStorePath: join(root, 'paywall-state', 'arena-votes.sqlite'),
  });
  cleanups.push(() => paywall.close());
  const server = await listen(paywall.app, PAYWALL_PORT, '127.0.0.1');
  cleanups.push(() => server.close());
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const overHttp =
  (base: () => string): Post =>
  (body, contentType = 'application/json') =>
    fetch(`${base()}${VOTE_PATH}`, {
      method: 'POST',
      headers: { Origin: OTHER_ORIGIN, 'Content-Type': contentType },
      body,
    });

const runtimes: Array<[string, () => string, Post]> = [
  ['emi serve (preview and local paywall)', () => previewStack.url, overHttp(() => previewStack.url)],
  ['emi paywall (vote app merged into the paywall app)', () => paywallUrl, overHttp(() => paywallUrl)],
  [
    'Cloudflare (site worker, vote app on its own)',
    () => WORKER_SITE,
    (body, contentType = 'application/json') =>
      worker.fetch(
        new Request(`${WORKER_SITE}${VOTE_PATH}`, {
          method: 'POST',
          headers: { Origin: OTHER_ORIGIN, 'Content-Type': contentType, 'CF-Connecting-IP': '198.51.100.7' },
          body,
        }),
        workerEnv,
      ),
  ],
];

describe.each(runtimes)('POST /arena/vote answers carry CORS: %s', (_runtime, site, post) => {
  it.each([
    ['a malformed body: 400 malformed_body', () => '{"form":', 'application/json', 400, 'malformed_body'],
    ['not JSON: 415 unsupported_media_type', () => 'vote', 'text/plain', 415, 'unsupported_media_type'],
    [
      'a vote signed for another site: 400 wrong_site',
      () => JSON.stringify(signedVoteBody({ site: OTHER_ORIGIN })),
      'application/json',
      400,
      'wrong_site',
    ],
  ])('%s', async (_case, body, contentType, status, error) => {
    const answer = await post(body(), contentType);
    expect(answer.status).toBe(status);
    expect(((await answer.json()) as { error?: string }).error).toBe(error);
    expect(corsOf(answer)).toEqual(CORS_HEADERS);
  });

  it('a vote accepted: 201', async () => {
    const answer = await post(JSON.stringify(signedVoteBody({ site: site() })));
    expect(answer.status).toBe(201);
    expect(((await answer.json()) as { success?: boolean }).success).toBe(true);
    expect(corsOf(answer)).toEqual(CORS_HEADERS);
  });
});

describe.skipIf(!hasChromium)('a page on another origin posts a vote in chromium (emi serve)', () => {
  let browser: Browser;
  let page: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const html = '<!doctype html><meta charset="utf-8"><title>voter</title>';
    [browser, page] = await Promise.all([
      launchChromium(),
      listen(
        new Hono().get('/', (c) => c.html(html)),
        PAGE_PORT,
        '127.0.0.1',
      ),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  it('reads the refusal and the 201 after the preflight, with no CORS error', async () => {
    const pageOrigin = `http://127.0.0.1:${PAGE_PORT}`;
    expect(new URL(previewStack.url).origin).not.toBe(pageOrigin);
    const context = await browser.newContext();
    const tab = await context.newPage();
    const corsErrors: string[] = [];
    tab.on('console', (message) => {
      if (message.type() === 'error' && /CORS|Access-Control/i.test(message.text()))
        corsErrors.push(message.text());
    });
    await tab.goto(`${pageOrigin}/`);
    // application/json makes the browser send the preflight first, as the arena page's post does.
    const postFromPage = (body: string) =>
      tab.evaluate(
        async ([url, text]) => {
          try {
            const answer = await fetch(url, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: text,
            });
            return { status: answer.status, body: (await answer.json()) as unknown };
          } catch (error) {
            return { failed: String(error) };
          }
        },
        [`${previewStack.url}${VOTE_PATH}`, body] as const,
      );
    expect(await postFromPage('{"form":')).toEqual({
      status: 400,
      body: expect.objectContaining({ error: 'malformed_body' }),
    });
    expect(await postFromPage(JSON.stringify(signedVoteBody({ site: previewStack.url })))).toEqual({
      status: 201,
      body: expect.objectContaining({ success: true }),
    });
    await context.close();
    expect(corsErrors).toEqual([]);
  });
});
