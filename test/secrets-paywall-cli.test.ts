// The operator's secrets stay out of what `emi paywall` says to anyone: hosted algod services (QuickNode,
// Chainstack) put the API token in EMI_ALGOD_URL's path, and a facilitator's error body may repeat its key. The real
// CLI, on loopback, in front of an algod and a facilitator that refuse every request (401, the body naming a
// secret): /x402/health and the paid paths give the facilitator's reason in a few words, the log keeps its words; a
// refused start names algod by its host; a facilitator or indexer URL carrying credentials, a query or a fragment
// (which can never work: fetch refuses credentials, and the client appends `/supported` after the query) is refused
// before anything starts, as a usage mistake.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../paywall-worker/node-listen.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { errorLines, expectUsageMistake, runEmi, startEmi } from './ops-cli.ts';
import type { Running } from './ops-cli.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';
import { account } from './publishers-harness.ts';

const ALGOD_SECRET = 'qn-SECRET-TOKEN-abc123';
const FACILITATOR_SECRET = 'fac-SECRET-KEY-xyz789';
const resource = resourceById('atlas');
/** Ends a paywall that started although it should have been refused, so that the test fails rather than hangs. */
const REFUSAL_TIMEOUT_MS = 20_000;

/** A server on loopback refusing every request with 401, its body naming `secret` as some services' bodies do. */
async function refusingServer(secret: string) {
  const app = new Hono().all('*', (c) => c.json({ message: `invalid API key ${secret}` }, 401));
  return listen(app, 0, '127.0.0.1');
}

let algod: Awaited<ReturnType<typeof listen>>;
let facilitator: Awaited<ReturnType<typeof listen>>;
let dir: string;
const running: Running[] = [];

beforeAll(async () => {
  algod = await refusingServer(ALGOD_SECRET);
  facilitator = await refusingServer(FACILITATOR_SECRET);
});
afterAll(async () => {
  await algod?.close();
  await facilitator?.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-secrets-cli-'));
  await writePaidFixtures(dir);
});
afterEach(async () => {
  for (const run of running.splice(0)) {
    run.stop();
    await run.done;
  }
  await rm(dir, { recursive: true, force: true });
});

const facilitatorUrl = () => `http://127.0.0.1:${facilitator.port}/x402`;

/** `emi paywall` on a free port with a configured facilitator, the fixtures for sale. */
const paywallArgs = (url = facilitatorUrl()) => [
  'paywall',
  '--port',
  '0',
  '--pay-to',
  account(),
  '--facilitator-url',
  url,
  '--paid',
  dir,
];
const paywallEnv = (more: Record<string, string> = {}) => ({
  EMI_STATE_DIR: dir,
  EMI_INDEXER_URL: facilitatorUrl(),
  EMI_ALLOW_SIMULATED: '1', // the fixtures are the simulated examples
  ...more,
});

describe('emi paywall in front of a facilitator that refuses, its body naming a secret', () => {
  async function startPaywall(): Promise<{ base: string; run: Running }> {
    const run = startEmi(dir, paywallArgs(), paywallEnv());
    running.push(run);
    await run.waitFor(/x402 paywall listening on http:\/\/\S+/);
    const base = /x402 paywall listening on (http:\/\/\S+)/.exec(run.output())?.[1] ?? '';
    return { base, run };
  }

  it('says in /x402/health only "HTTP 401", and nothing of it on the paid path; its words go to the log', async () => {
    const { base, run } = await startPaywall();
    const response = await fetch(`${base}/x402/health`);
    const text = await response.text();
    expect(text).not.toContain(FACILITATOR_SECRET);
    expect(response.status).toBe(503);
    const health = JSON.parse(text) as { facilitator: unknown };
    expect(health.facilitator).toEqual({ answers: false, detail: 'HTTP 401' });
    await run.waitFor(FACILITATOR_SECRET); // the operator's log keeps the whole answer
    expect(run.output()).toMatch(/"event":"facilitator_unhealthy"/);
    // The paid path, which needs the same facilitator for its 402, names nothing of it either.
    const paid = await fetch(`${base}${resource.path}`);
    const paidText = await paid.text();
    expect(paidText).not.toContain(FACILITATOR_SECRET);
    expect(paid.status).toBeGreaterThanOrEqual(500);
    expect(PaywallErrorBody.safeParse(JSON.parse(paidText)).success).toBe(true);
  });

  it('says "unreachable" in /x402/health for a facilitator nobody answers for', async () => {
    const closed = await listen(new Hono(), 0, '127.0.0.1');
    await closed.close(); // a port nobody listens on any more
    const run = startEmi(dir, paywallArgs(`http://127.0.0.1:${closed.port}/x402`), paywallEnv());
    running.push(run);
    await run.waitFor(/x402 paywall listening on http:\/\/\S+/);
    const base = /x402 paywall listening on (http:\/\/\S+)/.exec(run.output())?.[1] ?? '';
    const health = (await (await fetch(`${base}/x402/health`)).json()) as { facilitator: unknown };
    expect(health.facilitator).toEqual({ answers: false, detail: 'unreachable' });
  });
});

describe('emi paywall with EMI_ALGOD_URL holding a token in its path, algod refusing (401)', () => {
  it('refuses to start in one line naming algod by its host, never the token in its path', async () => {
    const algodUrl = `http://127.0.0.1:${algod.port}/${ALGOD_SECRET}/`;
    const run = await runEmi(dir, paywallArgs(), paywallEnv({ EMI_ALGOD_URL: algodUrl }), {
      timeoutMs: REFUSAL_TIMEOUT_MS,
    });
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout + run.stderr).not.toContain(ALGOD_SECRET);
    expect(errorLines(run)).toEqual([
      expect.stringMatching(
        new RegExp(
          `could not be checked at http://127\\.0\\.0\\.1:${algod.port}/… \\(HTTP 401\\): check EMI_ALGOD_URL$`,
        ),
      ),
    ]);
  });
});

describe('a facilitator or indexer URL carrying credentials, a query or a fragment', () => {
  it.each([
    [
      { EMI_FACILITATOR_URL: 'http://operator:pw-SECRET@127.0.0.1:1/x402' },
      [],
      /^emi: EMI_FACILITATOR_URL .*user name or password/,
    ],
    [
      {},
      ['--facilitator-url', 'http://127.0.0.1:1/x402?key=SECRET'],
      /^emi: --facilitator-url .*query string/,
    ],
    [{ EMI_INDEXER_URL: 'https://idx.example/v2#SECRET' }, [], /^emi: EMI_INDEXER_URL .*fragment/],
  ])(
    'emi paywall refuses %j %j: exit 2, one line naming the setting, never the secret',
    async (env, args, line) => {
      const run = await runEmi(
        dir,
        ['paywall', '--port', '0', '--pay-to', account(), '--paid', dir, ...args],
        { EMI_STATE_DIR: dir, EMI_FACILITATOR_URL: 'http://127.0.0.1:1/x402', ...env },
        { timeoutMs: REFUSAL_TIMEOUT_MS },
      );
      expectUsageMistake(run, line);
      expect(run.stdout + run.stderr).not.toContain('SECRET');
    },
  );

  it('emi up refuses it too, before it generates anything', async () => {
    const run = await runEmi(
      dir,
      [
        'up',
        '--port',
        '0',
        ...['--paid', join(dir, 'paid'), '--out', join(dir, 'site'), '--dist', join(dir, 'dist')],
        ...['--state', join(dir, 'var')],
      ],
      {
        EMI_PAYTO: account(),
        EMI_FACILITATOR_URL: 'http://operator:pw-SECRET@127.0.0.1:1/x402',
      },
      { timeoutMs: REFUSAL_TIMEOUT_MS },
    );
    expectUsageMistake(run, /^emi: EMI_FACILITATOR_URL .*user name or password/);
    expect(run.stdout + run.stderr).not.toContain('SECRET');
  });
});
