// The preview (`emi serve`, `emi up`, `npm start`) answers conditional requests as nginx does: every static file
// carries an ETag and a Last-Modified from the file's identity, and a GET or HEAD that already has the current
// version gets a bodiless 304. Error answers and the paid paths (the paywall's) never do. A direct request for the
// 404 page is answered as a missing file. All over real HTTP.
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';

let root: string;
let server: Listening;
const paywallSaw: Headers[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-preview-validators-'));
  await mkdir(join(root, 'api/reasoning'), { recursive: true });
  await writeFile(join(root, 'api/main-brain.php'), '{"endpoint":"main-brain"}\n');
  await writeFile(join(root, 'api/reasoning.php'), '{"asset":"BTC"}\n');
  await writeFile(join(root, 'api/reasoning/ETH.json'), '{"asset":"ETH"}\n');
  await writeFile(join(root, 'index.html'), '<!doctype html><title>home</title>');
  await writeFile(join(root, '404.html'), '<!doctype html><title>not found page</title>');
  const paywall = {
    fetch: (request: Request) => {
      paywallSaw.push(request.headers);
      return new Response('{"x402Version":2}', { status: 402, headers: { 'Cache-Control': 'no-store' } });
    },
  };
  server = await listen(createPreviewApp({ root, paywall }), 0);
});

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`${server.url}${path}`, { method, headers });

/** Writes a new version the way the generator does: a new file renamed over the old one. */
async function replace(file: string, text: string): Promise<void> {
  await writeFile(join(root, `${file}.tmp`), text);
  await rename(join(root, `${file}.tmp`), join(root, file));
}

describe('preview: validators and 304', () => {
  it('sends an ETag and the file’s Last-Modified with every static file', async () => {
    for (const path of ['/api/main-brain.php', '/', '/api/reasoning.php?asset=ETH']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('etag'), path).toMatch(/^"[^"]+"$/);
      expect(res.headers.get('last-modified'), path).toMatch(/ GMT$/);
    }
    const { mtimeMs } = await stat(join(root, 'api/main-brain.php'));
    const lastModified = (await get('/api/main-brain.php')).headers.get('last-modified');
    expect(Date.parse(lastModified ?? '')).toBe(Math.floor(mtimeMs / 1000) * 1000);
    // The asset query names its own file, so its own validators.
    expect((await get('/api/reasoning.php?asset=ETH')).headers.get('etag')).not.toBe(
      (await get('/api/reasoning.php')).headers.get('etag'),
    );
  });

  it('answers If-None-Match with the current tag (strong, weak, in a list, or *) with a bodiless 304', async () => {
    const first = await get('/api/main-brain.php');
    const etag = first.headers.get('etag') ?? '';
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      for (const method of ['GET', 'HEAD']) {
        const res = await get('/api/main-brain.php', { 'If-None-Match': ifNoneMatch }, method);
        expect(res.status, `${method} ${ifNoneMatch}`).toBe(304);
        expect(await res.text()).toBe('');
        // What a cache needs to refresh its copy, and the headers every answer carries.
        expect(res.headers.get('etag')).toBe(etag);
        // The seconds left of the file's 60 (schemas/delivery.ts freeCacheFor): it was written moments ago.
        expect(res.headers.get('cache-control')).toMatch(/^max-age=(5\d|60)$/);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
      }
    }
    const other = await get('/api/main-brain.php', { 'If-None-Match': '"other"' });
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual({ endpoint: 'main-brain' });
  });

  it('answers If-Modified-Since with the file’s own Last-Modified with 304, unless If-None-Match says otherwise', async () => {
    const lastModified = (await get('/')).headers.get('last-modified') ?? '';
    expect((await get('/', { 'If-Modified-Since': lastModified })).status).toBe(304);
    expect((await get('/', { 'If-Modified-Since': lastModified }, 'HEAD')).status).toBe(304);
    // If-None-Match decides when both are sent (RFC 9110 13.2.2).
    expect((await get('/', { 'If-Modified-Since': lastModified, 'If-None-Match': '"other"' })).status).toBe(
      200,
    );
    expect((await get('/', { 'If-Modified-Since': 'not a date' })).status).toBe(200);
    expect((await get('/', { 'If-Modified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).status).toBe(200);
  });

  it('gives a replaced file a new ETag, so a cached copy is not confirmed', async () => {
    const before = await get('/api/main-brain.php');
    const etag = before.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[^"]+"$/);
    await replace('api/main-brain.php', '{"endpoint":"main-brain","run":2}\n');
    const after = await get('/api/main-brain.php', { 'If-None-Match': etag });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect(await after.json()).toEqual({ endpoint: 'main-brain', run: 2 });
  });

  it('never answers an error or a paid path with a validator or a 304', async () => {
    for (const path of ['/api/nope.php', '/docs/nope/', '/api/reasoning.php?asset=DOGE']) {
      const res = await get(path, { 'If-None-Match': '*' });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('etag'), path).toBeNull();
      expect(res.headers.get('last-modified'), path).toBeNull();
    }
    const paid = await get('/api/x402-atlas.php', { 'If-None-Match': '*' });
    expect(paid.status).toBe(402);
    expect(paid.headers.get('etag')).toBeNull();
    // The conditional header reaches the paywall untouched: the paid path is its business alone.
    expect(paywallSaw.at(-1)?.get('if-none-match')).toBe('*');
  });
});

describe('preview: the 404 page', () => {
  it('answers a direct request for /404.html as a missing file: 404, with the page', async () => {
    for (const path of ['/404.html', '/%34%30%34.html', '/docs/../404.html']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(await res.text(), path).toContain('not found page');
      expect(res.headers.get('etag'), path).toBeNull();
    }
    expect((await get('/404.html', {}, 'HEAD')).status).toBe(404);
  });
});
