// The Netlify recipe in Netlify's own local runtime (`netlify dev`, offline): the static site with the rendered
// _headers and _redirects, the invalid-asset function, and the paid paths proxied to the real paywall worker. The
// official @x402/fetch client buys through Netlify's proxy. (Content-Type and Cache-Control from _headers are not
// applied to static files by `netlify dev`: that part is listed as unverified in deploy/README.md.)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS } from '../schemas/delivery.ts';
import { ErrorResponse, invalidAssetError, notFoundError } from '../schemas/error.ts';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import {
  INSTALL_HINT,
  NETLIFY_CLI,
  hasNetlifyCli,
  prepareNetlifyProject,
  startNetlifyDev,
} from '../deploy/netlify/run.ts';
import type { NetlifyDev } from '../deploy/netlify/run.ts';
import { buyWithDevWallet } from '../paywall-worker/buy.ts';
import { resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';
import { freePort } from './free-port.ts';

if (!hasNetlifyCli())
  console.warn(`host-netlify: SKIPPED, no ${NETLIFY_CLI} (${INSTALL_HINT}; CI installs it)`);

describe.skipIf(!hasNetlifyCli())('Netlify recipe in netlify dev', { timeout: 120_000 }, () => {
  let root: string;
  let stack: Stack;
  let netlify: NetlifyDev;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-netlify-'));
    const dist = join(root, 'dist');
    const write = async (file: string, body: unknown) => {
      await mkdir(dirname(join(dist, file)), { recursive: true });
      await writeFile(join(dist, file), typeof body === 'string' ? body : JSON.stringify(body));
    };
    for (const resource of FREE_RESOURCES) await write(resource.file, { file: resource.file });
    for (const asset of TRACKED_ASSETS) await write(`api/reasoning/${asset}.json`, { asset });
    await write('errors/not-found.json', notFoundError());
    await write('index.html', '<!doctype html><title>home</title>');
    await write('404.html', '<!doctype html><title>not found page</title>');
    stack = await startStack();
    await prepareNetlifyProject(join(root, 'project'), dist, stack.worker.url);
    netlify = await startNetlifyDev(join(root, 'project'), await freePort());
  }, 300_000);

  afterAll(async () => {
    await netlify?.stop();
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('buys a paid path with the official @x402/fetch through Netlify’s proxy; the ledger moves exactly the price', async () => {
    const resource = resourceById('paidMainBrain');
    const before = stack.facilitator.ledger.assetBalance(stack.payTo);
    const result = await buyWithDevWallet({
      url: `${netlify.url}${resource.path}`,
      facilitatorUrl: stack.facilitator.url,
      fundAtomic: '1000000',
    });
    expect(result.status).toBe(200);
    expect(result.transaction).toMatch(/^[A-Z2-7]{52}$/);
    expect(stack.facilitator.ledger.assetBalance(stack.payTo) - before).toBe(BigInt(resource.amountAtomic));
  });

  it('maps reasoning.php?asset= (upper and lower case) and answers the policy’s JSON 400 for other values', async () => {
    expect(await (await fetch(`${netlify.url}/api/reasoning.php?asset=SOL`)).json()).toEqual({
      asset: 'SOL',
    });
    expect(await (await fetch(`${netlify.url}/api/reasoning.php?asset=eth`)).json()).toEqual({
      asset: 'ETH',
    });
    expect(await (await fetch(`${netlify.url}/api/reasoning.php`)).json()).toEqual({
      file: 'api/reasoning.php',
    });
    // Mixed case, which the static rules do not list: redirected to the upper-case spelling (any case is read).
    const mixed = await fetch(`${netlify.url}/api/reasoning.php?asset=Eth`, { redirect: 'manual' });
    expect(mixed.status).toBe(301);
    expect(mixed.headers.get('location')).toBe('/api/reasoning.php?asset=ETH');
    expect(mixed.headers.get('access-control-allow-origin')).toBe('*');
    expect(await (await fetch(`${netlify.url}/api/reasoning.php?asset=hBaR`)).json()).toEqual({
      asset: 'HBAR',
    });
    const invalid = await fetch(`${netlify.url}/api/reasoning.php?asset=DOGE`);
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('content-type')).toMatch(/^application\/json/);
    expect(invalid.headers.get('cache-control')).toBe('no-store');
    expect(ErrorResponse.parse(await invalid.json())).toEqual(invalidAssetError());
  });

  it('answers a missing API file with the JSON 404 and a missing page with the HTML 404 page', async () => {
    const missing = await fetch(`${netlify.url}/api/nothing.php`);
    expect(missing.status).toBe(404);
    expect(ErrorResponse.parse(await missing.json()).error).toBe('not_found');
    const page = await fetch(`${netlify.url}/docs/nothing/`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('not found page');
  });

  it('sends the policy’s CORS headers on free files', async () => {
    const response = await fetch(`${netlify.url}/api/market-regime.php`);
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toBe(ALLOWED_REQUEST_HEADERS);
    expect(response.headers.get('access-control-expose-headers')).toBe(EXPOSED_HEADERS);
  });
});
