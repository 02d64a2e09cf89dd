// What nginx tells a buyer when the paywall worker gives it no answer. "Nothing was charged" only where that is
// certain (the worker never got the request); a worker that is too slow or fails mid-request may have settled the
// payment, so the answer says the outcome is unknown and how to collect it. And the worker's own deadline, the
// facilitator timeout, is bounded below the proxy's, so a settlement in progress is not cut off by nginx.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorResponse } from '../schemas/error.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { SITE_HEADERS } from '../schemas/delivery.ts';
import {
  MAX_FACILITATOR_TIMEOUT_MS,
  PaywallConfigError,
  checkSettings,
  resolveConfig,
  settingsFromEnv,
} from '../paywall-worker/config.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { hasNginx, startNginx } from '../deploy/nginx/run.ts';
import type { RunningNginx } from '../deploy/nginx/run.ts';
import { freePort } from './free-port.ts';

const PAID_PATH = PAID_RESOURCES[0]!.path;
const PAYMENT = { 'PAYMENT-SIGNATURE': 'eyJ4NDAyVmVyc2lvbiI6Mn0=' }; // its content does not matter here
const PROXY_TIMEOUT_SECONDS = 1; // the rendered value is minutes long: shortened here, all else as rendered

describe.skipIf(!hasNginx())('nginx recipe: the answer when the worker gives none', () => {
  let root: string;
  const running: Array<{ nginx: RunningNginx; upstream: Server | null }> = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-nginx-outcome-'));
    await mkdir(join(root, 'dist'));
    await writeFile(join(root, 'dist', 'index.html'), '<!doctype html><title>home</title>');
  });
  afterAll(async () => {
    for (const { nginx, upstream } of running) {
      await nginx.stop();
      upstream?.closeAllConnections();
      await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve(null)));
    }
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** nginx in front of `upstream` (null: a port nothing listens on), with a short proxy read timeout. */
  async function nginxBefore(upstream: Server | null): Promise<string> {
    const upstreamPort = upstream
      ? await new Promise<number>((resolve) =>
          upstream.listen(0, '127.0.0.1', () => resolve((upstream.address() as AddressInfo).port)),
        )
      : await freePort();
    const port = await freePort();
    const rendered = await renderNginxSite({
      root: join(root, 'dist'),
      listen: `127.0.0.1:${port}`,
      paywallUpstream: `127.0.0.1:${upstreamPort}`,
    });
    expect(rendered).toMatch(/proxy_read_timeout \d+s;/);
    const site = rendered.replace(
      /proxy_read_timeout \d+s;/,
      `proxy_read_timeout ${PROXY_TIMEOUT_SECONDS}s;`,
    );
    const nginx = await startNginx(join(root, `nginx-${port}`), site, `http://127.0.0.1:${port}/`);
    running.push({ nginx, upstream });
    return `http://127.0.0.1:${port}`;
  }

  async function errorOf(response: Response) {
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    for (const [name, value] of Object.entries(SITE_HEADERS)) expect(response.headers.get(name)).toBe(value);
    return ErrorResponse.parse(await response.json());
  }

  it('a worker slower than the proxy (a settle held past its timeout): 504, outcome unknown, never "nothing was charged"', async () => {
    const slow = createServer((_request, response) => {
      setTimeout(() => {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end('{"paid":true}');
      }, 2500);
    });
    const base = await nginxBefore(slow);
    const response = await fetch(`${base}${PAID_PATH}`, { headers: PAYMENT });
    expect(response.status).toBe(504);
    const body = await errorOf(response);
    expect(body.message).not.toMatch(/nothing was charged/i);
    expect(body.error).toBe('paywall_outcome_unknown');
    expect(body.message).toMatch(/same payment again/i);
    expect(body.message).toMatch(/not charged twice/i);
  });

  it('a worker that fails mid-request (a crash during settle): 502, outcome unknown', async () => {
    const crashing = createServer((request) => request.socket.destroy());
    const base = await nginxBefore(crashing);
    const response = await fetch(`${base}${PAID_PATH}`, { headers: PAYMENT });
    expect(response.status).toBe(502);
    const body = await errorOf(response);
    expect(body.message).not.toMatch(/nothing was charged/i);
    expect(body.error).toBe('paywall_outcome_unknown');
  });

  it('a worker that is not running (the request never reached it): 503, nothing was charged', async () => {
    const base = await nginxBefore(null);
    const response = await fetch(`${base}${PAID_PATH}`, { headers: PAYMENT });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('30');
    const body = await errorOf(response);
    expect(body.error).toBe('paywall_unavailable');
    expect(body.message).toMatch(/nothing was charged/i);
  });
});

describe('the facilitator timeout stays under the proxies’ read timeouts', () => {
  it('EMI_FACILITATOR_TIMEOUT_MS above the bound is refused, naming the variable and the bound', () => {
    expect(MAX_FACILITATOR_TIMEOUT_MS).toBeGreaterThanOrEqual(10_000); // the default stays allowed
    const settings = settingsFromEnv({ EMI_FACILITATOR_TIMEOUT_MS: '65000' });
    expect(() => checkSettings(settings)).toThrow(PaywallConfigError);
    expect(() => checkSettings(settings)).toThrow(
      new RegExp(`EMI_FACILITATOR_TIMEOUT_MS.*at most ${MAX_FACILITATOR_TIMEOUT_MS}`),
    );
    expect(() => checkSettings(settingsFromEnv({ EMI_FACILITATOR_TIMEOUT_MS: '10000' }))).not.toThrow();
    const config = {
      payTo: algosdk.generateAccount().addr.toString(),
      facilitatorUrl: 'http://127.0.0.1:9',
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(tmpdir()),
    };
    expect(() => resolveConfig({ ...config, facilitatorTimeoutMs: 65_000 })).toThrow(
      /EMI_FACILITATOR_TIMEOUT_MS/,
    );
    expect(
      resolveConfig({ ...config, facilitatorTimeoutMs: MAX_FACILITATOR_TIMEOUT_MS }).facilitatorTimeoutMs,
    ).toBe(MAX_FACILITATOR_TIMEOUT_MS);
  });

  it('nginx waits for the worker longer than the worker can wait on the facilitator and the indexer', async () => {
    const rendered = await renderNginxSite({
      root: '/srv/emi/dist',
      listen: '80',
      paywallUpstream: '127.0.0.1:8402',
    });
    const seconds = Number(/proxy_read_timeout (\d+)s;/.exec(rendered)?.[1]);
    // A paid request may wait in turn on /supported, settle, and the indexer's two lookups before and after a
    // second settle of a payment whose first answer was lost: six calls, each bounded by the facilitator timeout,
    // plus the payee's opt-in check (10 s).
    expect(seconds * 1000).toBeGreaterThan(6 * MAX_FACILITATOR_TIMEOUT_MS + 10_000);
  });
});
