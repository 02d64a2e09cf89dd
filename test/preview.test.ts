import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { tempDir } from './helpers/temp-dir.ts';

let server: Listening;

beforeAll(async () => {
  const root = await tempDir('emi-preview-');
  await mkdir(join(root, 'api/reasoning'), { recursive: true });
  await writeFile(join(root, 'api/main-brain.php'), '{"endpoint":"main-brain"}\n');
  await writeFile(join(root, 'api/reasoning.php'), '{"asset":"BTC"}\n');
  await writeFile(join(root, 'api/reasoning/ETH.json'), '{"asset":"ETH"}\n');
  await writeFile(join(root, 'index.html'), '<!doctype html><title>home</title>');
  await mkdir(join(root, 'docs'));
  await writeFile(join(root, 'docs/index.html'), '<!doctype html><title>docs</title>');
  await writeFile(join(root, '..', 'outside-secret.txt'), 'secret').catch(() => undefined);
  server = await listen(createPreviewApp({ root }), 0);
});

afterAll(() => server.close());

const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);

describe('preview server', () => {
  it('serves .php as JSON with CORS and a 60 s cache header', async () => {
    const res = await get('/api/main-brain.php');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    // The seconds left of the file's 60, counted from its writing moments ago (schemas/delivery.ts freeCacheFor).
    expect(res.headers.get('cache-control')).toMatch(/^max-age=(5\d|60)$/);
    expect(await res.json()).toEqual({ endpoint: 'main-brain' });
  });

  it('maps reasoning.php?asset=X to the asset file and no query to the default asset', async () => {
    expect(await (await get('/api/reasoning.php?asset=ETH')).json()).toEqual({ asset: 'ETH' });
    expect(await (await get('/api/reasoning.php')).json()).toEqual({ asset: 'BTC' });
  });

  it('answers an unknown asset with a JSON 400 listing the allowed values', async () => {
    const res = await get('/api/reasoning.php?asset=DOGE');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const body = (await res.json()) as { success: boolean; error: string; allowed_values: string[] };
    expect(body.success).toBe(false);
    expect(body.error).toBe('invalid_asset');
    expect(body.allowed_values).toEqual([...TRACKED_ASSETS]);
  });

  it('answers unknown paths and escapes from the root with a JSON 404', async () => {
    for (const path of ['/api/nope.php', '/..%2Foutside-secret.txt', '/%2e%2e/outside-secret.txt']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe('not_found');
    }
  });

  it('serves folders through their index page and answers preflight requests', async () => {
    const home = await get('/');
    expect(home.headers.get('content-type')).toMatch(/^text\/html/);
    const preflight = await get('/api/main-brain.php', { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('sends a folder asked for without its trailing slash to the slashed URL, as nginx does', async () => {
    // Served as is, the page's relative links (app.js, buyer.css) would resolve one folder too high.
    const bare = await get('/docs?from=home', { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/docs/?from=home');
    expect((await get('/docs/')).status).toBe(200);
  });

  it('refuses methods other than GET, HEAD and OPTIONS with JSON', async () => {
    const res = await get('/api/main-brain.php', { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(((await res.json()) as { error: string }).error).toBe('method_not_allowed');
  });
});
