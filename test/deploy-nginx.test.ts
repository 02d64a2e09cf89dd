// The nginx recipe, run for real: Debian's nginx on loopback with the rendered configuration, a temporary dist/
// and a stand-in paywall worker, checked with real requests.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { ErrorResponse } from '../schemas/error.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { renderNginxSite } from '../deploy/nginx/render.ts';

const NGINX = '/usr/sbin/nginx';
const hasNginx = existsSync(NGINX);
if (!hasNginx)
  console.warn(`deploy-nginx: SKIPPED, ${NGINX} is absent (apt-get install -y nginx; CI installs it)`);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitUntilServing(url: string, nginx: ChildProcess, errorLog: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (nginx.exitCode !== null) break;
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nginx did not start: ${await readFile(errorLog, 'utf8').catch(() => 'no error log')}`);
}

describe.skipIf(!hasNginx)('nginx recipe (deploy/nginx)', () => {
  let root: string;
  let base: string;
  let nginx: ChildProcess;
  let paywall: Server;
  const paywallSaw: IncomingHttpHeaders[] = [];

  const write = async (file: string, body: unknown) => {
    await mkdir(dirname(join(root, 'dist', file)), { recursive: true });
    await writeFile(join(root, 'dist', file), typeof body === 'string' ? body : JSON.stringify(body));
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-nginx-'));
    await chmod(root, 0o755); // nginx workers run as another user when the master is root
    for (const resource of FREE_RESOURCES) await write(resource.file, { file: resource.file });
    for (const asset of TRACKED_ASSETS) await write(`api/reasoning/${asset}.json`, { asset });
    await write('index.html', '<!doctype html><title>home</title>');
    await write('404.html', '<!doctype html><title>not found page</title>');
    await write('openapi.yaml', 'openapi: 3.1.0\n');

    // Stand-in paywall worker: answers 402 with its own CORS and cache headers, which nginx must not double.
    paywall = createServer((request, response) => {
      paywallSaw.push(request.headers);
      response.writeHead(402, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'Access-Control-Allow-Origin': 'https://elsewhere.example',
        'PAYMENT-REQUIRED': Buffer.from(JSON.stringify({ x402Version: 2, path: request.url })).toString(
          'base64',
        ),
      });
      response.end(JSON.stringify({ x402Version: 2, path: request.url }));
    });
    await new Promise<void>((resolve) => paywall.listen(0, '127.0.0.1', resolve));
    const paywallPort = (paywall.address() as AddressInfo).port;

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const site = await renderNginxSite({
      root: join(root, 'dist'),
      listen: `127.0.0.1:${port}`,
      paywallUpstream: `127.0.0.1:${paywallPort}`,
    });
    await writeFile(join(root, 'emi.conf'), site);
    const temp = (name: string) => `${name}_temp_path ${join(root, `${name}-temp`)};`;
    await writeFile(
      join(root, 'nginx.conf'),
      [
        'worker_processes 1;',
        `pid ${join(root, 'nginx.pid')};`,
        `error_log ${join(root, 'error.log')} warn;`,
        'events { worker_connections 64; }',
        'http {',
        '  include /etc/nginx/mime.types;',
        '  default_type application/octet-stream;',
        '  access_log off;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${temp(name)}`),
        `  include ${join(root, 'emi.conf')};`,
        '}',
        '',
      ].join('\n'),
    );
    nginx = spawn(
      NGINX,
      ['-p', root, '-c', join(root, 'nginx.conf'), '-e', join(root, 'error.log'), '-g', 'daemon off;'],
      { stdio: 'ignore' },
    );
    await waitUntilServing(`${base}/`, nginx, join(root, 'error.log'));
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    await new Promise((resolve) => paywall?.close(resolve));
    if (root) await rm(root, { recursive: true, force: true });
  });

  const expectJsonError = async (response: Response, status: number, error: string) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = ErrorResponse.parse(await response.json());
    expect(body.error).toBe(error);
    return body;
  };

  it('serves every free .php file as JSON with CORS and a 60-second cache hint', async () => {
    for (const resource of FREE_RESOURCES) {
      const response = await fetch(`${base}${resource.path}`);
      expect(response.status, resource.path).toBe(200);
      expect(response.headers.get('content-type'), resource.path).toMatch(/^application\/json/);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(await response.json()).toEqual({ file: resource.file });
    }
  });

  it('maps reasoning.php?asset=X to the per-asset file, reasoning.php itself (BTC) without it', async () => {
    for (const asset of TRACKED_ASSETS) {
      const response = await fetch(`${base}/api/reasoning.php?asset=${asset}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(await response.json()).toEqual({ asset });
    }
    expect(await (await fetch(`${base}/api/reasoning.php`)).json()).toEqual({ file: 'api/reasoning.php' });
    expect(await (await fetch(`${base}/api/reasoning.php?lang=en&asset=SOL`)).json()).toEqual({
      asset: 'SOL',
    });
  });

  it('answers an unknown asset with a JSON 400 listing the allowed values', async () => {
    for (const query of ['asset=DOGE', 'asset=btc', 'asset=', 'asset=..%2Fmarket-regime']) {
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

  it('proxies the four x402 paths to the paywall with one set of CORS headers and the payment header', async () => {
    for (const resource of PAID_RESOURCES) {
      const response = await fetch(`${base}${resource.path}`, {
        headers: { 'PAYMENT-SIGNATURE': 'c2lnbmVk' },
      });
      expect(response.status, resource.path).toBe(402);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('payment-required')).toBeTruthy();
      expect(await response.json()).toEqual({ x402Version: 2, path: resource.path });
    }
    expect(paywallSaw.map((headers) => headers['payment-signature'])).toEqual(
      PAID_RESOURCES.map(() => 'c2lnbmVk'),
    );
  });

  it('never lets the atlas be cached (0), and passes the worker’s own cache header on the other paid paths', async () => {
    const atlas = await fetch(`${base}/api/x402-atlas.php`);
    expect(atlas.headers.get('cache-control')).toBe('no-store, max-age=0');
    const report = await fetch(`${base}/api/x402-atlas-human-report.php`);
    expect(report.headers.get('cache-control')).toBe('no-store, max-age=0');
    const regime = await fetch(`${base}/api/x402-market-regime.php`);
    expect(regime.headers.get('cache-control')).toBe('no-store');
  });

  it('answers CORS preflights itself, allowing the PAYMENT-SIGNATURE header', async () => {
    const response = await fetch(`${base}/api/x402-atlas.php`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-headers')).toContain('PAYMENT-SIGNATURE');
    expect(response.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('serves the discovery YAML as YAML and the pages as HTML without the API cache hint', async () => {
    const yaml = await fetch(`${base}/openapi.yaml`);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    const home = await fetch(`${base}/`);
    expect(home.headers.get('content-type')).toMatch(/^text\/html/);
    expect(home.headers.get('cache-control')).toBeNull();
  });

  it('answers 503 JSON when the paywall worker is down', async () => {
    const closed = new Promise((resolve) => paywall.close(resolve));
    paywall.closeAllConnections(); // nginx keeps upstream connections alive
    await closed;
    const response = await fetch(`${base}/api/x402-main-brain.php`);
    await expectJsonError(response, 503, 'paywall_unavailable');
  });
});
