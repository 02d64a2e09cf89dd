// The nginx recipe, run for real: Debian's nginx on loopback with the configuration rendered from the delivery
// policy, a temporary dist/, and in front of it the real paywall worker with the development facilitator. The
// official @x402/fetch client buys through nginx with real-size x402 headers.
import { chmod, cp, lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS, SITE_HEADERS } from '../schemas/delivery.ts';
import { ErrorResponse } from '../schemas/error.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { NGINX, hasNginx } from '../deploy/nginx/run.ts';
import { buyWithDevWallet } from '../paywall-worker/buy.ts';
import { buildInto } from '../generator/site/move-into.ts';
import { fetchChallenge, newBuyer, paymentHeader, resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';
import { freePort } from './free-port.ts';
import { expectCountedDownWithinATick, startNginxSite, withoutCountdown } from './helpers/hosts.ts';
import type { StartedHost } from './helpers/hosts.ts';

/** A free file's cache hint: the seconds left of its CACHE_SECONDS (max-age), or no-cache once older. */
const FREE_CACHE_LEFT = /^(max-age=\d+|no-cache)$/;

if (!hasNginx())
  console.warn(`deploy-nginx: SKIPPED, ${NGINX} is absent (apt-get install -y nginx; CI installs it)`);

describe.skipIf(!hasNginx())('nginx recipe (deploy/nginx) in front of the real worker', () => {
  let root: string;
  let base: string;
  let nginx: StartedHost | undefined;
  let stack: Stack;

  // dist/ is what `emi build` makes of it: a symlink through `.dist.generations/current` to the served build.
  const write = async (file: string, body: unknown) => {
    await mkdir(dirname(join(root, 'src', file)), { recursive: true });
    await writeFile(join(root, 'src', file), typeof body === 'string' ? body : JSON.stringify(body));
  };
  const switchBuild = () =>
    buildInto(join(root, 'dist'), (out) => cp(join(root, 'src'), out, { recursive: true }));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-nginx-'));
    await chmod(root, 0o755); // nginx workers run as another user when the master is root
    for (const resource of FREE_RESOURCES) await write(resource.file, { file: resource.file });
    for (const asset of TRACKED_ASSETS) await write(`api/reasoning/${asset}.json`, { asset });
    await write('index.html', '<!doctype html><title>home</title>');
    await write('404.html', '<!doctype html><title>not found page</title>');
    await write('openapi.yaml', 'openapi: 3.1.0\n');
    await write('api/history/BTC/latest.csv', 'date,close\n2026-01-05,1\n');
    await write('sitemap.xml', '<?xml version="1.0" encoding="UTF-8"?><urlset/>');
    await write('assets/site.js', 'export {};\n');
    await switchBuild();

    stack = await startStack();
    nginx = await startNginxSite({
      dir: join(root, 'nginx'),
      siteRoot: join(root, 'dist'),
      port: await freePort(),
      paywallUpstream: new URL(stack.worker.url).host,
    });
    base = nginx.base;
  });

  afterAll(async () => {
    await nginx?.stop();
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const expectSiteHeaders = (response: Response) => {
    for (const [name, value] of Object.entries(SITE_HEADERS)) {
      expect(response.headers.get(name), `${response.url} ${name}`).toBe(value);
    }
  };

  const expectJsonError = async (response: Response, status: number, error: string) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expectSiteHeaders(response);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = ErrorResponse.parse(await response.json());
    expect(body.error).toBe(error);
    return body;
  };

  it('serves dist/ through its generation symlink, and the next build as soon as it is switched in', async () => {
    expect((await lstat(join(root, 'dist'))).isSymbolicLink()).toBe(true);
    const before = await fetch(`${base}/`);
    expect(await before.text()).toContain('<title>home</title>');
    await write('index.html', '<!doctype html><title>home, next build</title>');
    await switchBuild();
    expect(await (await fetch(`${base}/`)).text()).toContain('<title>home, next build</title>');
  });

  it('buys each of the four paths with the official @x402/fetch through nginx; the ledger moves exactly the price', async () => {
    const { ledger } = stack.facilitator;
    for (const resource of PAID_RESOURCES) {
      const payeeBefore = ledger.assetBalance(stack.payTo);
      const result = await buyWithDevWallet({
        url: `${base}${resource.path}`,
        facilitatorUrl: stack.facilitator.url,
        fundAtomic: '1000000',
      });
      expect(result.status, resource.path).toBe(200);
      expect(result.transaction, resource.path).toMatch(/^[A-Z2-7]{52}$/);
      expect(ledger.assetBalance(stack.payTo) - payeeBefore).toBe(BigInt(resource.amountAtomic));
      expect(ledger.assetBalance(result.payer)).toBe(1_000_000n - BigInt(resource.amountAtomic));
    }
  });

  it('carries the real-size headers both ways, with one set of CORS headers and no-store on the 402 and the paid 200', async () => {
    const resource = resourceById('atlasHumanReport');
    const { response, paymentRequired } = await fetchChallenge(`${base}${resource.path}`);
    expect(response.headers.get('payment-required')!.length).toBeGreaterThan(2000); // over nginx's 1 KB default
    expectSiteHeaders(response);
    expect(response.headers.get('cache-control')).toBe('no-store');

    const buyer = await newBuyer(stack.facilitator);
    const signature = paymentHeader(await buyer.pay(paymentRequired));
    expect(signature['PAYMENT-SIGNATURE']?.length).toBeGreaterThan(3000);
    const paid = await fetch(`${base}${resource.path}`, { headers: signature });
    expect(paid.status).toBe(200);
    expectSiteHeaders(paid);
    expect(paid.headers.get('cache-control')).toBe('no-store');
    expect(decodePaymentResponseHeader(paid.headers.get('payment-response')!).success).toBe(true);
  });

  it('passes a 9 KB payment header (a client echoing a large Bazaar extension) to the worker', async () => {
    const resource = resourceById('paidMainBrain');
    const { paymentRequired } = await fetchChallenge(`${base}${resource.path}`);
    const buyer = await newBuyer(stack.facilitator);
    const payload = await buyer.pay(paymentRequired);
    const padded = { ...payload, extensions: { ...payload.extensions, note: { text: 'x'.repeat(6000) } } };
    const headers = paymentHeader(padded);
    expect(headers['PAYMENT-SIGNATURE']?.length).toBeGreaterThan(9000); // above nginx's 8 KB default
    const paid = await fetch(`${base}${resource.path}`, { headers });
    expect(paid.status).toBe(200);
  });

  it('passes an 8 KB PAYMENT-REQUIRED answer back to the buyer (larger than nginx’s 4 KB proxy buffer)', async () => {
    const big = 'A'.repeat(8 * 1024);
    const upstream = createServer((_request, response) => {
      response.writeHead(402, { 'Content-Type': 'application/json', 'PAYMENT-REQUIRED': big });
      response.end('{}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = await freePort();
    const second = await startNginxSite({
      dir: join(root, 'nginx-big'),
      siteRoot: join(root, 'dist'),
      port,
      paywallUpstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    });
    try {
      const response = await fetch(`http://127.0.0.1:${port}${PAID_RESOURCES[0]!.path}`);
      expect(response.status).toBe(402);
      expect(response.headers.get('payment-required')).toBe(big);
    } finally {
      await second.stop();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('hands every worker path to the worker, whatever its extension or method (the type and 405 rules are the site’s)', async () => {
    const seen: string[] = [];
    const upstream = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end('worker');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = await freePort();
    const second = await startNginxSite({
      dir: join(root, 'nginx-worker-paths'),
      siteRoot: join(root, 'dist'),
      port,
      paywallUpstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    });
    const requests = [
      'GET /p/acme/x402-buyer/app.js',
      'GET /p/acme/x402-buyer/config.json',
      'GET /p/acme/sitemap.xml',
      'PATCH /p/acme/api/x402-atlas.php',
      'POST /mcp',
      'POST /arena/vote',
      `POST ${PAID_RESOURCES[0]!.path}`,
    ];
    try {
      for (const request of requests) {
        const [method, path] = request.split(' ') as [string, string];
        const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
        expect(await response.text(), request).toBe('worker');
      }
      expect(seen).toEqual(requests);
    } finally {
      await second.stop();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('serves the same payment sent twice at once only once, and charges it once', async () => {
    const resource = resourceById('paidMarketRegime');
    const { ledger } = stack.facilitator;
    const { paymentRequired } = await fetchChallenge(`${base}${resource.path}`);
    const buyer = await newBuyer(stack.facilitator);
    const headers = paymentHeader(await buyer.pay(paymentRequired));
    const before = ledger.assetBalance(buyer.address);
    const answers = await Promise.all([1, 2].map(() => fetch(`${base}${resource.path}`, { headers })));
    const statuses = answers.map((a) => a.status).sort();
    // The second is told the payment is in progress (the worker's own 503, passed through, not nginx's "paywall
    // unavailable"), with no challenge inviting a second payment.
    expect(statuses).toEqual([200, 503]);
    const refused = answers.find((a) => a.status === 503)!;
    expect(refused.headers.get('payment-required')).toBeNull();
    expect(((await refused.json()) as { error: string }).error).toBe('payment_in_progress');
    expect(before - ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
  });

  it('serves every free .php file as JSON with the policy’s CORS and cache headers', async () => {
    for (const resource of FREE_RESOURCES) {
      const response = await fetch(`${base}${resource.path}`);
      expect(response.status, resource.path).toBe(200);
      expect(response.headers.get('content-type'), resource.path).toMatch(/^application\/json/);
      expectSiteHeaders(response);
      expect(response.headers.get('access-control-expose-headers')).toBe(EXPOSED_HEADERS);
      // Until the next file is due, counted from the file's writing (`expires modified`, schemas/delivery.ts).
      expect(response.headers.get('cache-control')).toMatch(FREE_CACHE_LEFT);
      expect(await response.json()).toEqual({ file: resource.file });
    }
  });

  it('maps reasoning.php?asset=X (any case) to the per-asset file, reasoning.php itself (BTC) without it', async () => {
    for (const asset of TRACKED_ASSETS) {
      for (const spelling of [asset, asset.toLowerCase()]) {
        const response = await fetch(`${base}/api/reasoning.php?asset=${spelling}`);
        expect(response.status, spelling).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        expect(response.headers.get('cache-control')).toMatch(FREE_CACHE_LEFT);
        expect(await response.json()).toEqual({ asset });
      }
    }
    expect(await (await fetch(`${base}/api/reasoning.php`)).json()).toEqual({ file: 'api/reasoning.php' });
    expect(await (await fetch(`${base}/api/reasoning.php?lang=en&asset=SOL`)).json()).toEqual({
      asset: 'SOL',
    });
  });

  it('answers an unknown asset with a JSON 400 listing the allowed values', async () => {
    for (const query of ['asset=DOGE', 'asset=', 'asset=..%2Fmarket-regime', 'asset=btc2']) {
      const body = await expectJsonError(
        await fetch(`${base}/api/reasoning.php?${query}`),
        400,
        'invalid_asset',
      );
      expect(body.allowed_values).toEqual([...TRACKED_ASSETS]);
    }
  });

  it('answers a missing API file with a JSON 404, a missing page with the HTML 404 page', async () => {
    await expectJsonError(await fetch(`${base}/api/nothing-here.php`), 404, 'not_found');
    await expectJsonError(await fetch(`${base}/api/reasoning/DOGE.json`), 404, 'not_found');
    await expectJsonError(await fetch(`${base}/arena/nothing`), 404, 'not_found');
    const page = await fetch(`${base}/docs/nothing/`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('not found page');
  });

  it('answers CORS preflights itself, allowing every header the official clients send', async () => {
    for (const path of ['/api/x402-atlas.php', '/api/market-regime.php']) {
      const response = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://agent.example',
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'payment-signature,access-control-expose-headers',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-headers')).toBe(ALLOWED_REQUEST_HEADERS);
      expect(response.headers.get('access-control-max-age')).toBe('600');
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('serves the discovery YAML as YAML and the pages as HTML without the API cache hint', async () => {
    const yaml = await fetch(`${base}/openapi.yaml`);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    const home = await fetch(`${base}/`);
    expect(home.headers.get('content-type')).toMatch(/^text\/html/);
    expect(home.headers.get('cache-control')).toBeNull();
  });

  // The delivery policy is the reference: the preview server (`emi serve`) and the Cloudflare Worker route with it
  // (test/host-cloudflare.test.ts compares the Worker), and nginx must answer as they do, whatever Debian's
  // mime.types or nginx's own query parsing would do.
  it('answers as the delivery policy does (the preview server), request for request', async () => {
    const preview = createPreviewApp({ root: join(root, 'dist') });
    const requests: Array<[string, string]> = [
      ['GET', '/api/history/BTC/latest.csv'],
      ['GET', '/api/history/BTC/nothing.csv'],
      ['GET', '/sitemap.xml'],
      ['GET', '/nothing-here.xml'],
      ['GET', '/assets/site.js'],
      ['GET', '/api/reasoning.php?asset=%45TH'],
      ['GET', '/api/reasoning.php?asset=%65th'],
      ['GET', '/api/reasoning.php?%61sset=SOL'],
      ['GET', '/api/reasoning.php?asset'],
      ['GET', '/api/reasoning.php?asset&lang=en'],
      ['GET', '/api/reasoning.php?ASSET=ETH'],
      ['GET', '/api/reasoning.php?asset=ETH&asset=BTC'],
      ['GET', '/api/reasoning.php?asset=E+TH'],
      ['GET', '/api/reasoning.php?asset=%ZZ'],
      ['POST', '/api/market-regime.php'],
      ['DELETE', '/api/history/BTC/latest.csv'],
      ['PUT', '/'],
    ];
    const view = async (response: Response) => {
      const text = await response.text();
      const json = /json/.test(response.headers.get('content-type') ?? '')
        ? (JSON.parse(text) as object)
        : null;
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        cache: withoutCountdown(response.headers.get('cache-control')),
        allow: response.headers.get('allow'),
        cors: response.headers.get('access-control-allow-origin'),
        body: json && 'error' in json ? (json as { error: string }).error : text,
      };
    };
    const expected: Record<string, unknown> = {};
    const actual: Record<string, unknown> = {};
    const hint = (response: Response) => response.headers.get('cache-control');
    for (const [method, path] of requests) {
      const first = await preview.request(path, { method });
      const later = await fetch(`${base}${path}`, { method });
      expected[`${method} ${path}`] = await view(first);
      actual[`${method} ${path}`] = await view(later);
      expectCountedDownWithinATick(hint(later), hint(first), `${method} ${path}`);
    }
    expect(actual).toEqual(expected);
  });

  it('answers 503 JSON with CORS when the paywall worker is down', async () => {
    await stack.worker.close();
    const response = await fetch(`${base}/api/x402-main-brain.php`);
    await expectJsonError(response, 503, 'paywall_unavailable');
    expect(response.headers.get('retry-after')).toBe('30');
  });
});
