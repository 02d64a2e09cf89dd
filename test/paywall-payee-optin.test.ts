// The operator's own payee must be able to receive USDC (the exact scheme's resource server SHOULD ensure it has
// opted in to the asset): with EMI_ALGOD_URL and a configured facilitator, `emi paywall` (and serve, up, mcp, which
// start the same local paywall) refuses to start on a payee that has not opted in, in one line naming the address,
// the asset and what to do; the Cloudflare Worker, which has no start, answers its paid paths 503 before any 402.
// algod is a real HTTP stub on loopback answering `GET /v2/accounts/{address}/assets/{asset}` as algod does.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { toolNameOf } from '../mcp/free-tools.ts';
import { fetchChallenge, resourceById, writePaidFixtures } from './paywall-harness.ts';

const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');
const USDC = '31566704';
const account = () => algosdk.generateAccount().addr.toString();
const optedIn = account();
const notOptedIn = account();
const resource = resourceById('atlas');

const refusalLine = (address: string) =>
  `emi: payTo ${address} has not opted in to USDC (asset ${USDC}), so no payment to it can settle: ` +
  `opt the address in to USDC (asset ${USDC}) from its wallet, or pay to an address that has`;

let algod: Awaited<ReturnType<typeof listen>>;
let algodUrl: string;
/** The same algod behind a token, as a node of one's own is (X-Algo-API-Token). */
let lockedAlgodUrl: string;
const ALGOD_TOKEN = 'a'.repeat(64);
/** The addresses algod was asked about, in order. */
let asked: string[];
// A facilitator the paywall is configured with (not started by it): the development facilitator on its own port.
let facilitator: DevFacilitator;
let dir: string;

beforeAll(async () => {
  const app = new Hono();
  app.get('/v2/accounts/:address/assets/:asset', (c) => {
    asked.push(c.req.param('address'));
    return c.req.param('address') === optedIn && c.req.param('asset') === USDC
      ? c.json({ round: 1, 'asset-holding': { amount: 0, 'asset-id': Number(USDC), 'is-frozen': false } })
      : c.json({ message: 'account asset info not found' }, 404);
  });
  app.use('/locked/*', async (c, next) =>
    c.req.header('X-Algo-API-Token') === ALGOD_TOKEN ? next() : c.json({ message: 'Invalid API Token' }, 401),
  );
  app.get('/locked/v2/accounts/:address/assets/:asset', (c) => {
    asked.push(c.req.param('address'));
    return c.req.param('address') === optedIn && c.req.param('asset') === USDC
      ? c.json({ round: 1, 'asset-holding': { amount: 0, 'asset-id': Number(USDC), 'is-frozen': false } })
      : c.json({ message: 'account asset info not found' }, 404);
  });
  algod = await listen(app, 0, '127.0.0.1');
  algodUrl = `http://127.0.0.1:${algod.port}`;
  lockedAlgodUrl = `${algodUrl}/locked`;
  facilitator = await startDevFacilitator({ port: 0 });
});
afterAll(async () => {
  await facilitator?.close();
  await algod?.close();
});
beforeEach(async () => {
  asked = [];
  dir = await mkdtemp(join(tmpdir(), 'emi-payee-optin-'));
  await writePaidFixtures(dir);
});
afterEach(async () => {
  // No paywall outlives its test, even one that failed.
  for (const run of started.splice(0)) {
    run.stop();
    await run.done;
  }
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  /** Resolves with the paywall's URL once it listens; rejects if the process ends first. */
  listening: Promise<string>;
  done: Promise<{ code: number | null; stderr: string }>;
  stop(): void;
}

const started: Run[] = [];

/** `emi paywall` as an operator runs it, with the EMI_* variables of this machine removed. */
function emiPaywall(payTo: string, env: Record<string, string>): Run {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')));
  const child = spawn(
    process.execPath,
    [EMI, 'paywall', '--port', '0', '--pay-to', payTo, '--facilitator-url', facilitator.url, '--paid', dir],
    {
      cwd: dir,
      env: {
        ...clean,
        EMI_STATE_DIR: dir,
        EMI_INDEXER_URL: facilitator.url,
        EMI_ALLOW_SIMULATED: '1', // the fixtures are the simulated examples
        ...env,
      },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /x402 paywall listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url) resolve(url);
    });
    void done.then(({ code }) => reject(new Error(`emi paywall ended (${code}): ${stdout}${stderr}`)));
  });
  listening.catch(() => {});
  const run = { listening, done, stop: () => void child.kill('SIGTERM') };
  started.push(run);
  return run;
}

/** stderr without the build-freshness notice bin/emi.js may add while others edit the sources. */
const ownLines = (stderr: string) =>
  stderr.split('\n').filter((line) => line !== '' && !line.startsWith('emi: build/ is out of date'));

describe('emi paywall with EMI_ALGOD_URL and a configured facilitator', () => {
  it('refuses to start on a payee that has not opted in to USDC: one line, the configuration exit code', async () => {
    const run = emiPaywall(notOptedIn, { EMI_ALGOD_URL: algodUrl });
    // A paywall that starts anyway is stopped at once (and fails the test) rather than left running.
    void run.listening.then(run.stop, () => {});
    const { code, stderr } = await run.done;
    expect(ownLines(stderr)).toEqual([refusalLine(notOptedIn)]);
    // The code a publisher that has not opted in gets from the same command (the CLI's `main`).
    expect(code).toBe(1);
    expect(asked).toEqual([notOptedIn]);
  });

  it('starts on a payee that has opted in, and offers it in the 402', async () => {
    const run = emiPaywall(optedIn, { EMI_ALGOD_URL: algodUrl });
    const url = await run.listening;
    const { paymentRequired } = await fetchChallenge(`${url}${resource.path}`);
    expect(paymentRequired.accepts[0]?.payTo).toBe(optedIn);
    expect(paymentRequired.accepts[0]?.asset).toBe(USDC);
    expect(asked).toEqual([optedIn]);
  });

  it('asks a node of its own with EMI_ALGOD_TOKEN (without it the node refuses, and so does the start)', async () => {
    const withToken = emiPaywall(optedIn, { EMI_ALGOD_URL: lockedAlgodUrl, EMI_ALGOD_TOKEN: ALGOD_TOKEN });
    await withToken.listening;
    expect(asked).toEqual([optedIn]);
    withToken.stop();
    await withToken.done;

    const without = emiPaywall(optedIn, { EMI_ALGOD_URL: lockedAlgodUrl });
    void without.listening.then(without.stop, () => {});
    const { code, stderr } = await without.done;
    expect(code).toBe(1);
    expect(ownLines(stderr).join('\n')).toContain('could not be checked at');
    expect(ownLines(stderr).join('\n')).toContain('(HTTP 401)');
  });

  it('refuses to start when algod cannot be asked, as it does for a publisher', async () => {
    await expect(
      createLocalPaywall({
        paidDir: dir,
        baseUrl: 'http://127.0.0.1:8080',
        payTo: optedIn,
        facilitatorUrl: facilitator.url,
        paymentBookFile: join(dir, 'payments.sqlite'),
        algodUrl: 'http://127.0.0.1:1',
      }),
    ).rejects.toThrow(
      new RegExp(
        `^payTo ${optedIn}: its opt-in to USDC \\(asset ${USDC}\\) could not be checked at http://127\\.0\\.0\\.1:1 `,
      ),
    );
  });

  // A guard, not the defect: the development facilitator keeps its own ledger and opts its payee in there, so a
  // development stack with EMI_ALGOD_URL set (even to an algod that knows nothing of its throwaway payee) starts.
  it('leaves the development facilitator alone', async () => {
    const running = await createLocalPaywall({
      paidDir: dir,
      baseUrl: 'http://127.0.0.1:8080',
      devFacilitatorPort: 0,
      algodUrl,
    });
    await running.close();
    expect(asked).toEqual([]);
  });
});

describe('the Cloudflare Worker with EMI_ALGOD_URL', () => {
  let errors: string[];
  beforeEach(() => {
    errors = [];
    vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void errors.push(parts.join(' ')));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  function siteWorker(payTo: string) {
    const body = JSON.stringify({
      ...(PAID_EXAMPLES[resource.id] as Record<string, unknown>),
      updated: new Date().toISOString(),
    });
    const env = {
      EMI_PAYTO: payTo,
      EMI_FACILITATOR_URL: facilitator.url,
      EMI_INDEXER_URL: facilitator.url,
      EMI_BASE_URL: 'http://127.0.0.1:8080',
      EMI_ALLOW_SIMULATED: '1',
      EMI_ALGOD_URL: algodUrl,
      PAID_KV: { get: async (key: string) => (key === resource.file ? body : null) },
      ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
    };
    const site = createSiteWorker(() => new MemoryPaymentBook());
    return (request: Request) => site.fetch(request, env);
  }

  function worker(payTo: string) {
    const site = siteWorker(payTo);
    return () => site(new Request(`http://127.0.0.1:8080${resource.path}`));
  }

  it('answers the paid paths 503 with a JSON error, never a 402, while the payee has not opted in', async () => {
    const request = worker(notOptedIn);
    for (let i = 0; i < 2; i++) {
      const response = await request();
      expect(response.status).toBe(503);
      expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
      const body = PaywallErrorBody.parse(await response.json());
      expect(body.error).toBe('payee_not_opted_in');
      expect(`emi: ${body.message}`).toBe(refusalLine(notOptedIn));
    }
    // Asked again at each request until the address has opted in; logged once, when the path stopped selling
    // (a line per request would let anyone fill the log).
    expect(asked).toEqual([notOptedIn, notOptedIn]);
    expect(errors.filter((line) => line.includes('"payee_not_opted_in"'))).toHaveLength(1);
  });

  it('asks once per isolate and then offers an opted-in payee', async () => {
    const request = worker(optedIn);
    for (let i = 0; i < 2; i++) {
      const response = await request();
      expect(response.status).toBe(402);
      expect(response.headers.get('PAYMENT-REQUIRED')).not.toBeNull();
    }
    expect(asked).toEqual([optedIn]);
  });

  it('says in /x402/health why nothing is for sale, and asks again until the payee has opted in', async () => {
    const health = async (payTo: string) => {
      const response = await siteWorker(payTo)(new Request('http://127.0.0.1:8080/x402/health'));
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const refused = await health(notOptedIn);
    expect(refused.status).toBe(503);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.payee).toEqual({
      checked: true,
      problem: refusalLine(notOptedIn).slice('emi: '.length),
    });

    const accepted = await health(optedIn);
    expect(accepted.body.payee).toEqual({ checked: true, problem: null });
    expect(asked).toEqual([notOptedIn, optedIn]);
  });

  it('refuses the paid MCP tools with the same reason, before any PaymentRequired', async () => {
    const site = siteWorker(notOptedIn);
    const host = new Hono().all('*', (c) => site(c.req.raw));
    const server = await listen(host, 0, '127.0.0.1');
    const client = new Client({ name: 'emi-payee-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`)));
      const result = (await client.callTool({
        name: toolNameOf(resource.id),
        arguments: {},
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      const refusal = result.structuredContent as Record<string, unknown>;
      expect(refusal).toMatchObject({ error: 'payee_not_opted_in', status: 503 });
      expect(refusal.accepts).toBeUndefined();
      expect(`emi: ${String(refusal.message)}`).toBe(refusalLine(notOptedIn));
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('emi paywall /x402/health', () => {
  it('reports the payee as checked and payable when EMI_ALGOD_URL is set, unchecked when it is not', async () => {
    const payeeOf = async (env: Record<string, string>) => {
      const run = emiPaywall(optedIn, env);
      const response = await fetch(`${await run.listening}/x402/health`);
      return ((await response.json()) as { payee: unknown }).payee;
    };
    expect(await payeeOf({ EMI_ALGOD_URL: algodUrl })).toEqual({ checked: true, problem: null });
    expect(await payeeOf({})).toEqual({ checked: false, problem: null });
    // Asked once, at the start: the health check does not ask again once the payee was payable.
    expect(asked).toEqual([optedIn]);
  });
});
