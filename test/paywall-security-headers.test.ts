// The worker's own answers say how a browser may treat them, in both runtimes it ships for: `emi paywall` on Node and
// the Cloudflare Worker in workerd (wrangler dev). Every JSON/API answer (the 402, the paid 200 after settlement, its
// errors, /x402/health, the vote route) carries `X-Content-Type-Options: nosniff`, so that no browser sniffs a body as
// HTML, and `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'` (OWASP's REST recommendation), so
// that a body opened in a browser loads and runs nothing and cannot be framed; the publishers' storefront pages keep
// the site's own policy. Behind the nginx recipe an answer carries one of each: nginx's site set, never two policies.
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { wrapFetchWithPayment } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpRoute } from '../mcp/http.ts';
import { CONTENT_SECURITY_POLICY, MCP_PATH } from '../schemas/delivery.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import type { WranglerDev } from '../deploy/cloudflare/run.ts';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { hasNginx, startNginx } from '../deploy/nginx/run.ts';
import type { RunningNginx } from '../deploy/nginx/run.ts';
import { createDevBuyer } from '../paywall-worker/buy.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { freePort } from './free-port.ts';
import { MCP_INITIALIZE } from './helpers/mcp-initialize.ts';
import { startTestWorker } from './helpers/test-worker.ts';
import { startPaywallCli } from './ops-cli.ts';

/** The policy of a JSON/API answer, spelled out: the test states the contract, not the constant behind it. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";
const ATLAS = resourceById('atlas');
/** Left broken on purpose: its paths answer 503 paid_resource_unavailable, /x402/health 503. */
const BROKEN = resourceById('atlasHumanReport');
const STOREFRONT = '/p/acme/x402-buyer/';

/**
 * fetch joins the lines of a repeated header with ", ": a value read back as exactly one policy or one `nosniff`
 * was sent once (neither value holds a comma).
 */
function expectApiHeaders(response: Response, what: string): void {
  expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(response.headers.get('content-security-policy'), what).toBe(API_CSP);
  expect(response.headers.get('referrer-policy'), what).toBe('no-referrer');
}

/** The built site as `--site` and the assets binding read it: a home page, the buyer page, the 404 page. */
async function writeSite(dist: string): Promise<void> {
  await mkdir(join(dist, 'x402-buyer'), { recursive: true });
  for (const file of ['index.html', 'buyer.css']) {
    await copyFile(join('site/x402-buyer', file), join(dist, 'x402-buyer', file));
  }
  await writeFile(join(dist, 'x402-buyer', 'app.js'), 'console.log("buyer page");\n');
  await writeFile(join(dist, 'index.html'), '<!doctype html><title>home</title>');
  await writeFile(join(dist, '404.html'), '<!doctype html><title>not found page</title>');
}

/** The fixtures, the human report's file replaced by one that fails its schema. */
async function writePaid(paid: string): Promise<void> {
  await mkdir(paid, { recursive: true });
  await writePaidFixtures(paid);
  await writeFile(join(paid, BROKEN.file), JSON.stringify({ broken: true }));
}

/** Pays for `url` with the official @x402/fetch client and a wallet funded by the development facilitator. */
async function buy(url: string, facilitatorUrl: string): Promise<Response> {
  const { client } = await createDevBuyer(facilitatorUrl);
  return wrapFetchWithPayment(fetch, client)(url);
}

/**
 * The answers every runtime must give with the worker's headers; `start` says where the worker answers and where its
 * development facilitator funds buyers. `storefront`: the worker serves a publisher's storefront page too.
 */
function describeApiAnswers(
  name: string,
  start: () => { base: string; facilitatorUrl: string },
  storefront: boolean,
) {
  describe(name, () => {
    it('sends nosniff and the API policy with the 402, keeping PAYMENT-REQUIRED readable across origins', async () => {
      const { base } = start();
      const response = await fetch(`${base}${ATLAS.path}`);
      expect(response.status).toBe(402);
      expect(response.headers.get('payment-required')).toBeTruthy();
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');
      expectApiHeaders(response, '402');
    });

    it('sends them with the paid 200 the official @x402/fetch client gets after settlement', async () => {
      const { base, facilitatorUrl } = start();
      const paid = await buy(`${base}${ATLAS.path}`, facilitatorUrl);
      expect(paid.status).toBe(200);
      expect(paid.headers.get('payment-response')).toBeTruthy();
      expect(paid.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
      expect(((await paid.json()) as { payment_status: string }).payment_status).toBe('settled');
      expectApiHeaders(paid, 'paid 200');
    });

    it('sends them with the worker’s errors (503, 405, 404), /x402/health and the vote route’s 400', async () => {
      const { base } = start();
      const unavailable = await fetch(`${base}${BROKEN.path}`);
      expect(unavailable.status).toBe(503);
      expect(PaywallErrorBody.parse(await unavailable.json()).error).toBe('paid_resource_unavailable');
      expectApiHeaders(unavailable, '503');

      const method = await fetch(`${base}${ATLAS.path}`, { method: 'POST' });
      expect(method.status).toBe(405);
      expectApiHeaders(method, '405');

      const missing = await fetch(`${base}/p/acme/api/x402-nothing.php`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
      expectApiHeaders(missing, '404');

      const health = await fetch(`${base}/x402/health`);
      expect(health.status).toBe(503); // the broken file is not for sale
      expectApiHeaders(health, 'health');

      const vote = await fetch(`${base}/arena/vote`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(vote.status).toBe(400);
      expectApiHeaders(vote, 'vote');
    });

    if (storefront) {
      it('keeps the site’s own policy on a publisher’s storefront page', async () => {
        const { base } = start();
        const page = await fetch(`${base}${STOREFRONT}`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(await page.text()).toContain('acme Research');
        expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
        expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      });
    }
  });
}

const cleanups: Array<() => unknown> = [];

/** The Cloudflare Worker in workerd and its development facilitator, the site in its assets, R2 still empty. */
interface InWorkerd {
  facilitator: DevFacilitator;
  worker: WranglerDev;
  root: string;
  persistTo: string;
}

async function startInWorkerd(): Promise<InWorkerd> {
  const root = await mkdtemp(join(tmpdir(), 'emi-security-headers-cf-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  await writeSite(join(root, 'dist'));
  const persistTo = join(root, 'state');
  const facilitator = await startDevFacilitator();
  cleanups.push(() => facilitator.close());
  const payTo = account();
  const publisher = account();
  for (const address of [payTo, publisher]) facilitator.ledger.optIn(address);
  const worker = await startTestWorker({
    persistTo,
    assetsDir: join(root, 'dist'),
    payTo,
    facilitatorUrl: facilitator.url,
    vars: {
      EMI_PUBLISHERS: JSON.stringify([publisherEntry('acme', publisher)]),
      EMI_ADMIN_TOKEN: 'operator-admin-token-of-32-chars',
    },
  });
  cleanups.push(() => worker.stop());
  return { facilitator, worker, root, persistTo };
}

/**
 * The Worker's start (wrangler and workerd, the longest set-up here) begins with the file and goes on while the Node
 * runtime's tests run; its describe awaits it (and fails with its error), then puts the paid files in R2.
 */
let inWorkerd: Promise<InWorkerd> | undefined;
beforeAll(() => {
  inWorkerd = startInWorkerd();
  inWorkerd.catch(() => undefined);
});
afterAll(async () => {
  await inWorkerd?.catch(() => undefined); // every process it started is in `cleanups` once it settled
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 180_000);

/**
 * `emi paywall` as an operator runs it in `root`, the development facilitator on a free port; with `site`, also
 * `--site dist` and a config file naming the publisher `acme` (its storefront page).
 */
async function startEmiPaywall(
  root: string,
  site: boolean,
): Promise<{ base: string; facilitatorUrl: string }> {
  const config = join(root, 'emi.config.json');
  await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', account())] }));
  const paywall = await startPaywallCli(
    root,
    [
      ...['--paid', 'paid', '--base-url', 'https://emi.example'],
      ...['--state', site ? 'state-site' : 'state', ...(site ? ['--site', 'dist'] : [])],
    ],
    site ? { EMI_CONFIG: config } : {},
  );
  cleanups.push(paywall.close);
  return { base: paywall.base, facilitatorUrl: paywall.facilitatorUrl };
}

describe('emi paywall on Node', () => {
  let root: string;
  let plain: { base: string; facilitatorUrl: string };
  let withSite: { base: string; facilitatorUrl: string };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-security-headers-'));
    await chmod(root, 0o755); // nginx workers run as another user when the master is root
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeSite(join(root, 'dist'));
    await writePaid(join(root, 'paid'));
    [plain, withSite] = await Promise.all([startEmiPaywall(root, false), startEmiPaywall(root, true)]);
  }, 60_000);

  describeApiAnswers('its answers', () => plain, false);
  // The storefront app wraps the paywall here and adds the site's set where an answer has none: the worker's own
  // headers must be there first.
  describeApiAnswers('its answers with --site and a publisher', () => withSite, true);

  it('still answers a CORS preflight allowing the x402 headers, with nosniff', async () => {
    const response = await fetch(`${plain.base}${ATLAS.path}`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://agent.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'payment-signature',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toContain('PAYMENT-SIGNATURE');
    expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('sends them with its own JSON 431 for headers over Node’s limit', async () => {
    const response = await fetch(`${plain.base}${ATLAS.path}`, {
      headers: { 'PAYMENT-SIGNATURE': 'A'.repeat(20 * 1024) },
    });
    expect(response.status).toBe(431);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expectApiHeaders(response, '431');
  });

  describe.skipIf(!hasNginx())('behind the nginx recipe (deploy/nginx)', () => {
    let nginx: RunningNginx;
    let base: string;

    beforeAll(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      const site = await renderNginxSite({
        root: join(root, 'dist'),
        listen: `127.0.0.1:${port}`,
        paywallUpstream: new URL(withSite.base).host,
      });
      nginx = await startNginx(join(root, 'nginx'), site, `${base}/`);
    }, 30_000);
    afterAll(async () => {
      await nginx?.stop();
    });

    it('sends one nosniff and one policy, the site’s, with the 402 and the paid 200', async () => {
      const challenge = await fetch(`${base}${ATLAS.path}`);
      const paid = await buy(`${base}${ATLAS.path}`, withSite.facilitatorUrl);
      expect([challenge.status, paid.status]).toEqual([402, 200]);
      expect(paid.headers.get('payment-response')).toBeTruthy();
      for (const [what, response] of [
        ['402', challenge],
        ['paid 200', paid],
      ] as const) {
        expect(response.headers.get('server'), what).toMatch(/nginx/);
        expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');
        expect(response.headers.get('content-security-policy'), what).toBe(CONTENT_SECURITY_POLICY);
        expect(response.headers.get('referrer-policy'), what).toBe('no-referrer');
        expect(response.headers.get('access-control-allow-origin'), what).toBe('*');
      }
    });

    it('sends one policy with a storefront page, where the page and nginx both name the site’s', async () => {
      const page = await fetch(`${base}${STOREFRONT}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    });
  });
});

describe('the Cloudflare Worker in workerd (wrangler dev)', { timeout: 120_000 }, () => {
  let facilitator: DevFacilitator;
  let worker: WranglerDev;

  beforeAll(async () => {
    const started = await (inWorkerd as Promise<InWorkerd>);
    ({ facilitator, worker } = started);
    // The paid files are written and uploaded now, not with the Worker's start: it sells no file older than its
    // maximum age (120 s), and the Node runtime's tests ran meanwhile. It reads R2 at each request (the preview
    // uploads to a running one the same way).
    await writePaid(join(started.root, 'paid'));
    await uploadPaidFiles(join(started.root, 'paid'), { persistTo: started.persistTo });
  }, 180_000);

  describeApiAnswers('its answers', () => ({ base: worker.url, facilitatorUrl: facilitator.url }), true);

  it('sends them with the publishers’ admin route (the operator’s credits and statements), refusals included', async () => {
    const refused = await fetch(`${worker.url}/p/acme/admin/statement`);
    expect(refused.status).toBe(401);
    expectApiHeaders(refused, 'admin 401');
    const statement = await fetch(`${worker.url}/p/acme/admin/statement`, {
      headers: { Authorization: 'Bearer operator-admin-token-of-32-chars' },
    });
    expect(statement.status).toBe(200);
    expectApiHeaders(statement, 'admin 200');
  });
});

describe('the MCP route (/mcp, served by emi serve, emi paywall --site and the site Worker)', () => {
  const route = createMcpRoute(() => new McpServer({ name: 'headers-test', version: '1.0.0' }));

  it('sends nosniff and the API policy with a JSON-RPC answer and with its 405', async () => {
    const initialize = await route.request(MCP_PATH, MCP_INITIALIZE);
    expect(initialize.status).toBe(200);
    expect(((await initialize.json()) as { result?: unknown }).result).toBeDefined();
    expectApiHeaders(initialize, 'initialize');

    const get = await route.request(MCP_PATH);
    expect(get.status).toBe(405);
    expectApiHeaders(get, 'GET /mcp');
  });
});
