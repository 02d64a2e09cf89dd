// A free JSON file's cache lifetime ends when the next file is due, counted from when the file was written (its
// modification time), not from when a cache fetched it: a shared cache must never serve a body past its
// next_update_due (/docs/freshness/). Run for real: `emi serve`'s app over a socket, Debian's nginx with the rendered
// recipe, and the Cloudflare Worker's handler over a static assets stand-in, on files aged with utimes. The buyer
// page's config.json (whom it pays) is never stored on any host.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_SECONDS } from '../schemas/common.ts';
import * as delivery from '../schemas/delivery.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { NGINX, hasNginx } from '../deploy/nginx/run.ts';
import { startNginxSite } from './helpers/hosts.ts';
import type { StartedHost } from './helpers/hosts.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { freePort } from './free-port.ts';

if (!hasNginx())
  console.warn(`host-cache-lifetime: nginx SKIPPED, ${NGINX} is absent (apt-get install -y nginx)`);

const FRESH = '/api/market-regime.php';
const HALF_AGED = '/api/statistics.php';
const OLD = '/api/history/BTC/2026-01-01.json';
const CONFIG = '/x402-buyer/config.json';
const PAID = '/api/x402-atlas.php';
const BODY = JSON.stringify({ padding: 'x'.repeat(200) }); // long enough for nginx's gzip

/** The max-age of a Cache-Control value, NaN when it names none. */
const maxAgeOf = (cacheControl: string | null): number =>
  Number(/(?:^|,\s*)max-age=(\d+)/.exec(cacheControl ?? '')?.[1]);

/**
 * The max-age a file `aged` seconds old may be sent with, whatever whole second the host's clock is in when it answers
 * (a few seconds of slack for a slow machine): at most CACHE_SECONDS less its age, never more.
 */
function expectLifetimeLeft(cacheControl: string | null, aged: number, what: string): void {
  const maxAge = maxAgeOf(cacheControl);
  expect(cacheControl, what).toMatch(/^(public, )?max-age=\d+$/);
  expect(maxAge, `${what}: ${cacheControl}`).toBeLessThanOrEqual(CACHE_SECONDS - aged);
  expect(maxAge, `${what}: ${cacheControl}`).toBeGreaterThanOrEqual(CACHE_SECONDS - aged - 5);
}

let root = '';
let site = '';

beforeAll(async () => {
  root = await tempDir('emi-cache-lifetime-');
  await chmod(root, 0o755); // nginx workers run as another user when the master is root
  site = join(root, 'dist');
  const now = Date.now() / 1000;
  const files: Array<[string, number]> = [
    [FRESH, 0],
    [HALF_AGED, 30],
    [OLD, 200],
    [CONFIG, 0],
    ['/index.html', 0],
  ];
  for (const [path, aged] of files) {
    const file = join(site, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, path === '/index.html' ? '<!doctype html><title>home</title>' : BODY);
    await utimes(file, now - aged, now - aged);
  }
});

describe('the shared rule (schemas/delivery.ts)', () => {
  it('counts the lifetime down from the file’s writing, revalidates past it, and where the age is unknown', () => {
    const { freeCacheFor } = delivery as unknown as { freeCacheFor: (age: number | null) => string };
    expect(freeCacheFor(0)).toBe(`max-age=${CACHE_SECONDS}`);
    expect(freeCacheFor(58)).toBe('max-age=2');
    expect(freeCacheFor(CACHE_SECONDS)).toBe('max-age=0');
    expect(freeCacheFor(CACHE_SECONDS + 1)).toBe('no-cache');
    expect(freeCacheFor(null)).toBe('no-cache');
    // A modification time ahead of the clock buys no more than the usual lifetime.
    expect(freeCacheFor(-7200)).toBe(`max-age=${CACHE_SECONDS}`);
  });

  it('never stores the buyer’s config.json, which names the payee', () => {
    expect(delivery.cacheFor(CONFIG)).toBe(delivery.NO_STORE);
  });
});

describe('emi serve', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen(createPreviewApp({ root: site }), 0);
  });
  afterAll(() => server.close());
  const get = (path: string, headers?: Record<string, string>) => fetch(`${server.url}${path}`, { headers });

  it('sends max-age = CACHE_SECONDS less the file’s age, then no-cache, and the same on a 304', async () => {
    expectLifetimeLeft((await get(FRESH)).headers.get('cache-control'), 0, FRESH);
    const halfAged = await get(HALF_AGED);
    expectLifetimeLeft(halfAged.headers.get('cache-control'), 30, HALF_AGED);
    const revalidated = await get(HALF_AGED, { 'If-None-Match': halfAged.headers.get('etag') ?? '' });
    expect(revalidated.status).toBe(304);
    expectLifetimeLeft(revalidated.headers.get('cache-control'), 30, `${HALF_AGED} 304`);
    expect((await get(OLD)).headers.get('cache-control')).toBe('no-cache');
  });

  it('never stores config.json, the built file as the one `emi serve` renders', async () => {
    expect((await get(CONFIG)).headers.get('cache-control')).toBe('no-store');
    const rendered = await listen(createPreviewApp({ root: site, buyerConfig: { payTo: 'X' } }), 0);
    try {
      expect((await fetch(`${rendered.url}${CONFIG}`)).headers.get('cache-control')).toBe('no-store');
    } finally {
      await rendered.close();
    }
  });
});

describe.skipIf(!hasNginx())('nginx (the rendered recipe)', () => {
  let nginx: StartedHost | undefined;
  let gzipNginx: StartedHost | undefined;
  const upstream = createServer((_request, response) => {
    // A paid answer as the worker gives it, with validators nginx must not turn into a cache lifetime.
    response.writeHead(402, {
      'Content-Type': 'application/json',
      'Last-Modified': new Date().toUTCString(),
      'Cache-Control': 'no-store',
    });
    response.end('{"x402Version":2}');
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    nginx = await startNginxSite({
      dir: join(root, 'nginx'),
      siteRoot: site,
      port: await freePort(),
      paywallUpstream: `127.0.0.1:${port}`,
    });
    gzipNginx = await startNginxSite({
      dir: join(root, 'nginx-gzip'),
      siteRoot: site,
      port: await freePort(),
      paywallUpstream: `127.0.0.1:${port}`,
      before: 'gzip on;',
    });
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    await gzipNginx?.stop();
    await new Promise((resolve) => upstream.close(resolve));
  });

  const get = (path: string, headers?: Record<string, string>) =>
    fetch(`${nginx?.base ?? ''}${path}`, { headers });

  it('sends max-age = CACHE_SECONDS less the file’s age, then no-cache, and the same on a 304', async () => {
    expectLifetimeLeft((await get(FRESH)).headers.get('cache-control'), 0, FRESH);
    const halfAged = await get(HALF_AGED);
    expectLifetimeLeft(halfAged.headers.get('cache-control'), 30, HALF_AGED);
    // Expires says the same: the file's writing plus CACHE_SECONDS.
    const lastModified = Date.parse(halfAged.headers.get('last-modified') ?? '');
    expect(Date.parse(halfAged.headers.get('expires') ?? '')).toBe(lastModified + CACHE_SECONDS * 1000);
    const revalidated = await get(HALF_AGED, { 'If-None-Match': halfAged.headers.get('etag') ?? '' });
    expect(revalidated.status).toBe(304);
    expectLifetimeLeft(revalidated.headers.get('cache-control'), 30, `${HALF_AGED} 304`);
    expect((await get(OLD)).headers.get('cache-control')).toBe('no-cache');
  });

  it('gives no lifetime to the paid paths, errors, preflights or pages', async () => {
    const paid = await get(PAID);
    expect(paid.status).toBe(402);
    expect(paid.headers.get('cache-control')).toBe('no-store');
    expect(paid.headers.get('expires')).toBeNull();
    const missing = await get('/api/nothing.php');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('cache-control')).toBe('no-store');
    expect(missing.headers.get('expires')).toBeNull();
    const preflight = await fetch(`${nginx?.base ?? ''}${FRESH}`, { method: 'OPTIONS' });
    expect(preflight.headers.get('cache-control')).toBe('no-store');
    expect(preflight.headers.get('expires')).toBeNull();
    const page = await get('/');
    expect(page.headers.get('cache-control')).toBeNull();
    expect(page.headers.get('expires')).toBeNull();
  });

  it('never stores config.json', async () => {
    const config = await get(CONFIG);
    expect(config.status).toBe(200);
    expect(config.headers.get('cache-control')).toBe('no-store');
  });

  it('says Vary: Accept-Encoding on the 304 of a file it compresses, as on its 200', async () => {
    const base = gzipNginx?.base ?? '';
    const compressed = await fetch(`${base}${FRESH}`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(compressed.headers.get('content-encoding')).toBe('gzip');
    expect(compressed.headers.get('vary')).toMatch(/accept-encoding/i);
    const revalidated = await fetch(`${base}${FRESH}`, {
      headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': compressed.headers.get('etag') ?? '' },
    });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('vary')).toMatch(/accept-encoding/i);
  });
});

describe('the Cloudflare Worker (its handler over a static assets stand-in)', () => {
  const worker = createSiteWorker(() => new MemoryPaymentBook());
  /** What Workers static assets answer: the file with an ETag and no modification time. */
  const assets = {
    fetch: async (request: Request): Promise<Response> => {
      const { pathname } = new URL(request.url);
      if (pathname === '/404.html') return new Response('not found', { status: 404 });
      const known = [FRESH, HALF_AGED, OLD, CONFIG].includes(pathname);
      return known
        ? new Response(BODY, { headers: { 'Content-Type': 'application/json', ETag: '"a1"' } })
        : new Response('', { status: 404 });
    },
  };
  const get = (path: string) => worker.fetch(new Request(`https://emi.test${path}`), { ASSETS: assets });

  it('revalidates every free file at each use: it cannot know when one was written', async () => {
    for (const path of [FRESH, HALF_AGED, OLD]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('cache-control'), path).toBe('no-cache');
      expect(answer.headers.get('etag'), path).toMatch(/"a1"/);
    }
  });

  it('never stores config.json', async () => {
    expect((await get(CONFIG)).headers.get('cache-control')).toBe('no-store');
  });
});
