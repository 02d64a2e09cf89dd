// Netlify and Cloudflare Pages recipes: their rule files agree with the registry, and the Pages worker does the
// query mapping, the JSON errors and the paywall proxying (run here with a stand-in ASSETS binding).
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { invalidAssetError, notFoundError } from '../schemas/error.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import worker, {
  INVALID_ASSET,
  NOT_FOUND,
  PAID_PATHS,
  TRACKED_ASSETS as WORKER_ASSETS,
} from '../deploy/cloudflare/_worker.js';
import type { PagesEnv } from '../deploy/cloudflare/_worker.js';

const read = (file: string) => readFile(new URL(`../deploy/${file}`, import.meta.url), 'utf8');
const rulesOf = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(/\s+/));

/** `_headers`: path line, then indented "Name: value" lines. */
function headerBlocks(text: string): Map<string, Record<string, string>> {
  const blocks = new Map<string, Record<string, string>>();
  let current: Record<string, string> | null = null;
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    if (!/^\s/.test(line)) blocks.set(line.trim(), (current = {}));
    else if (current) {
      const [name, ...value] = line.trim().split(':');
      current[(name ?? '').toLowerCase()] = value.join(':').trim();
    }
  }
  return blocks;
}

describe('Netlify recipe', () => {
  it('forces one query rule per tracked asset, then a JSON 400 for any other value', async () => {
    const rules = rulesOf(await read('netlify/_redirects'));
    const reasoning = rules.filter(([from]) => from === '/api/reasoning.php');
    expect(reasoning.slice(0, TRACKED_ASSETS.length)).toEqual(
      TRACKED_ASSETS.map((asset) => [
        '/api/reasoning.php',
        `asset=${asset}`,
        `/api/reasoning/${asset}.json`,
        '200!',
      ]),
    );
    expect(reasoning.at(-1)).toEqual([
      '/api/reasoning.php',
      'asset=:other',
      '/errors/invalid-asset.json',
      '400!',
    ]);
  });

  it('proxies exactly the paid paths to the paywall and shadows no free file', async () => {
    const rules = rulesOf(await read('netlify/_redirects'));
    const proxied = rules.filter(([, to]) => to?.startsWith('PAYWALL_ORIGIN'));
    expect(proxied).toEqual(PAID_RESOURCES.map((r) => [r.path, `PAYWALL_ORIGIN${r.path}`, '200!']));
    const forced = rules.filter((rule) => rule.at(-1)?.endsWith('!')).map(([from]) => from);
    for (const resource of FREE_RESOURCES.filter((r) => r.id !== 'reasoning'))
      expect(forced).not.toContain(resource.path);
  });

  it('sends JSON content type, CORS and the 60-second cache hint for every free file, and none on paid paths', async () => {
    for (const file of ['netlify/_headers', 'cloudflare/_headers']) {
      const blocks = headerBlocks(await read(file));
      expect(blocks.get('/*')).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-headers': expect.stringContaining('PAYMENT-SIGNATURE'),
        'access-control-expose-headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE',
      });
      const freePaths = [...FREE_RESOURCES.map((r) => r.path), '/api/reasoning/*'];
      for (const path of freePaths.map((p) => (p.startsWith('/arena/') ? '/arena/*' : p))) {
        expect(blocks.get(path), `${file} ${path}`).toEqual({
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'public, max-age=60',
        });
      }
      // No rule that sets a cache header may match a paid path: a CDN must never keep a paid body.
      for (const [pattern, headers] of blocks) {
        if (!('cache-control' in headers)) continue;
        const matcher = new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
        for (const paid of PAID_RESOURCES) expect(matcher.test(paid.path), `${file} ${pattern}`).toBe(false);
      }
    }
  });
});

describe('Cloudflare Pages worker', () => {
  let paywall: Server;
  const seen: IncomingHttpHeaders[] = [];
  const files = new Map<string, unknown>([
    ['/api/reasoning.php', { asset: 'BTC', default: true }],
    ...TRACKED_ASSETS.map((asset): [string, unknown] => [`/api/reasoning/${asset}.json`, { asset }]),
    ['/api/market-regime.php', { file: 'regime' }],
  ]);
  // Stand-in for the Pages asset binding: serves the map above, 404 for anything else.
  const ASSETS = {
    fetch: async (request: Request) => {
      const body = files.get(new URL(request.url).pathname);
      return body === undefined
        ? new Response('not found', { status: 404 })
        : new Response(JSON.stringify(body), { headers: { 'Content-Type': 'application/octet-stream' } });
    },
  };
  let env: PagesEnv;
  const get = (path: string, init?: RequestInit, environment = env) =>
    worker.fetch(new Request(`https://emi.test${path}`, init), environment);

  beforeAll(async () => {
    paywall = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(402, {
        'Content-Type': 'application/json',
        'Access-Control-Allow-Origin': 'https://x.example',
      });
      response.end(JSON.stringify({ path: request.url }));
    });
    await new Promise<void>((resolve) => paywall.listen(0, '127.0.0.1', resolve));
    env = { ASSETS, PAYWALL_ORIGIN: `http://127.0.0.1:${(paywall.address() as AddressInfo).port}` };
  });
  afterAll(async () => {
    await new Promise((resolve) => paywall.close(resolve));
  });

  it('keeps its lists and error bodies equal to the registry and schemas/error.ts', () => {
    expect(WORKER_ASSETS).toEqual([...TRACKED_ASSETS]);
    expect(PAID_PATHS).toEqual(PAID_RESOURCES.map((r) => r.path));
    expect(INVALID_ASSET).toEqual(invalidAssetError());
    expect(NOT_FOUND).toEqual(notFoundError());
  });

  it('maps ?asset=X to the per-asset file as JSON with CORS and the cache hint', async () => {
    for (const asset of TRACKED_ASSETS) {
      const response = await get(`/api/reasoning.php?asset=${asset}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({ asset });
    }
    expect(await (await get('/api/reasoning.php')).json()).toEqual({ asset: 'BTC', default: true });
  });

  it('answers JSON 400 for an unknown asset and JSON 404 for a missing API file', async () => {
    const bad = await get('/api/reasoning.php?asset=DOGE');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual(invalidAssetError());
    const missing = await get('/api/none.php');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(notFoundError());
  });

  it('proxies the paid paths with the payment header, one CORS origin, and never caches the atlas', async () => {
    for (const resource of PAID_RESOURCES) {
      const response = await get(resource.path, { headers: { 'PAYMENT-SIGNATURE': 'c2ln' } });
      expect(response.status).toBe(402);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({ path: resource.path });
    }
    expect(seen.map((headers) => headers['payment-signature'])).toEqual(PAID_RESOURCES.map(() => 'c2ln'));
    expect((await get('/api/x402-atlas.php')).headers.get('cache-control')).toBe('no-store, max-age=0');
    const unconfigured = await get('/api/x402-atlas.php', undefined, { ASSETS });
    expect(unconfigured.status).toBe(503);
  });
});
