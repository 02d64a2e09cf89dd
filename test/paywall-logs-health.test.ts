// The paywall's log under load and on failures: /x402/health asks the facilitator once per window and logs only a
// change of its state; a path that stops selling stale data says so once, and once when it sells again; a failure
// nothing handled is one line with its time and its request, from the app, the Node listener and the preview server.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FacilitatorClient } from '@x402/core/server';
import type { SupportedResponse } from '@x402/core/types';
import { createPaywallApp } from '../paywall-worker/app.ts';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import { FACILITATOR_HEALTH_TTL_MS } from '../paywall-worker/core/health.ts';
import type { PayeeGate } from '../paywall-worker/core/payee-gate.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
const LISTEN_PORT = 19690;
const PREVIEW_PORT = 19692;
/** Nothing listens here: a forward to it fails. */
const CLOSED_PORT = 19691;

const SUPPORTED: SupportedResponse = {
  kinds: [
    {
      x402Version: 2,
      scheme: 'exact',
      network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=',
      extra: {},
    },
  ],
  extensions: [],
  signers: {},
};

let paidDir: string;
beforeAll(async () => {
  paidDir = await mkdtemp(join(tmpdir(), 'emi-paylogs-health-'));
  await writePaidFixtures(paidDir);
});
afterAll(async () => {
  if (paidDir) await rm(paidDir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A facilitator that is up or down at the test's word and counts its `/supported` calls. */
function stubFacilitator() {
  const state = { up: false, calls: 0 };
  const client: FacilitatorClient = {
    verify: () => Promise.reject(new Error('not used')),
    settle: () => Promise.reject(new Error('not used')),
    getSupported: () => {
      state.calls += 1;
      if (state.up) return Promise.resolve(SUPPORTED);
      return Promise.reject(
        Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }),
      );
    },
  };
  return { state, client };
}

function paywall(options: {
  facilitator?: FacilitatorClient;
  maxDataAgeSeconds?: number;
  payee?: PayeeGate;
}) {
  const logged: PaywallLogEntry[] = [];
  const clock = { ms: Date.now() };
  const app = createPaywallApp(
    {
      payTo: algosdk.generateAccount().addr.toString(),
      facilitatorUrl: `http://127.0.0.1:${CLOSED_PORT}`,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(paidDir),
      allowSimulated: true,
      maxDataAgeSeconds: options.maxDataAgeSeconds ?? 3600,
    },
    {
      facilitatorClient: options.facilitator ?? stubFacilitator().client,
      payee: options.payee,
      log: (entry) => void logged.push(entry),
      now: () => clock.ms,
    },
  );
  return { app, logged, clock };
}

const events = (logged: PaywallLogEntry[], event: string) => logged.filter((e) => e.event === event);

describe('GET /x402/health', () => {
  it('asks the facilitator once per window and logs a change of its state once', async () => {
    const facilitator = stubFacilitator();
    const { app, logged, clock } = paywall({ facilitator: facilitator.client });
    const down = await Promise.all(Array.from({ length: 200 }, () => app.request('/x402/health')));
    expect(down.every((answer) => answer.status === 503)).toBe(true);
    expect(facilitator.state.calls).toBe(1);
    expect(events(logged, 'facilitator_unhealthy')).toEqual([
      expect.objectContaining({ level: 'error', detail: expect.stringContaining('ECONNREFUSED') }),
    ]);
    // Still down in the next window: asked again, nothing new to log.
    clock.ms += FACILITATOR_HEALTH_TTL_MS;
    await app.request('/x402/health');
    expect(facilitator.state.calls).toBe(2);
    expect(events(logged, 'facilitator_unhealthy')).toHaveLength(1);
    // Back up: one line says so, and 200 checks in the window make no call.
    facilitator.state.up = true;
    clock.ms += FACILITATOR_HEALTH_TTL_MS;
    for (let i = 0; i < 200; i++) expect((await app.request('/x402/health')).status).toBe(200);
    expect(facilitator.state.calls).toBe(3);
    expect(events(logged, 'facilitator_recovered')).toEqual([
      { level: 'info', event: 'facilitator_recovered' },
    ]);
    expect(events(logged, 'facilitator_unhealthy')).toHaveLength(1);
  });
});

describe('a path whose data turns stale', () => {
  it('logs sales_stopped_stale once for ten requests, and sales_resumed once when it sells again', async () => {
    const facilitator = stubFacilitator();
    facilitator.state.up = true;
    const { app, logged, clock } = paywall({ facilitator: facilitator.client, maxDataAgeSeconds: 600 });
    expect((await app.request(resource.path)).status).toBe(402);
    const sellingAt = clock.ms;
    clock.ms += 3600_000;
    for (let i = 0; i < 10; i++) {
      const answer = await app.request(resource.path);
      expect(answer.status).toBe(503);
      expect(((await answer.json()) as { error: string }).error).toBe('data_stale');
    }
    expect(events(logged, 'sales_stopped_stale')).toEqual([
      expect.objectContaining({
        level: 'warn',
        path: resource.path,
        detail: expect.stringMatching(/generated/),
      }),
    ]);
    clock.ms = sellingAt; // as a new generation would make it
    for (let i = 0; i < 3; i++) expect((await app.request(resource.path)).status).toBe(402);
    expect(events(logged, 'sales_resumed')).toEqual([
      { level: 'info', event: 'sales_resumed', path: resource.path },
    ]);
    expect(events(logged, 'sales_stopped_stale')).toHaveLength(1);
  });
});

describe('a path that cannot sell for another reason', () => {
  it('logs payee_not_opted_in once for ten requests, and sales_resumed once when the payee opts in', async () => {
    const facilitator = stubFacilitator();
    facilitator.state.up = true;
    let problem: string | null = 'the payee has not opted in to USDC';
    const payee: PayeeGate = {
      ready: false,
      problem: () => Promise.resolve(problem),
      check: () => Promise.resolve(null),
    };
    const { app, logged } = paywall({ facilitator: facilitator.client, payee });
    for (let i = 0; i < 10; i++) expect((await app.request(resource.path)).status).toBe(503);
    expect(events(logged, 'payee_not_opted_in')).toEqual([
      { level: 'error', event: 'payee_not_opted_in', path: resource.path, detail: problem },
    ]);
    problem = null;
    for (let i = 0; i < 3; i++) expect((await app.request(resource.path)).status).toBe(402);
    expect(events(logged, 'sales_resumed')).toEqual([
      { level: 'info', event: 'sales_resumed', path: resource.path },
    ]);
  });

  it('logs paid_file_unavailable once for ten requests while the file is missing, and sales_resumed once back', async () => {
    const facilitator = stubFacilitator();
    facilitator.state.up = true;
    const { app, logged } = paywall({ facilitator: facilitator.client });
    const file = join(paidDir, resource.file);
    const kept = await readFile(file);
    await rm(file);
    try {
      for (let i = 0; i < 10; i++) expect((await app.request(resource.path)).status).toBe(503);
    } finally {
      await writeFile(file, kept);
    }
    expect(events(logged, 'paid_file_unavailable')).toEqual([
      expect.objectContaining({ level: 'error', path: resource.path }),
    ]);
    for (let i = 0; i < 3; i++) expect((await app.request(resource.path)).status).toBe(402);
    expect(events(logged, 'sales_resumed')).toHaveLength(1);
  });
});

/** A payee gate whose question fails: nothing in the paywall handles that, the app's onError does. */
const brokenPayee: PayeeGate = {
  ready: false,
  problem: () => Promise.reject(new Error('algod answered nonsense', { cause: new Error('inner cause') })),
  check: () => Promise.resolve(null),
};

const stderrLines = (spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] =>
  spy.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>);

describe('a failure nothing handled', () => {
  it('is logged by the paywall app through its logger, with the request and the cause', async () => {
    const { app, logged } = paywall({ payee: brokenPayee });
    const answer = await app.request(resource.path);
    expect(answer.status).toBe(500);
    expect(events(logged, 'unhandled')).toEqual([
      {
        level: 'error',
        event: 'unhandled',
        method: 'GET',
        path: resource.path,
        detail: 'Error: algod answered nonsense <- Error: inner cause',
      },
    ]);
  });

  it('is one line with its time from the default logger, the Node listener and the preview server', async () => {
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
    const app = createPaywallApp(
      {
        payTo: algosdk.generateAccount().addr.toString(),
        facilitatorUrl: `http://127.0.0.1:${CLOSED_PORT}`,
        baseUrl: 'http://127.0.0.1:8080',
        storage: createFsStorage(paidDir),
        allowSimulated: true,
      },
      { payee: brokenPayee },
    );
    expect((await app.request(resource.path)).status).toBe(500);

    const server = await listen(
      {
        fetch: () => {
          throw new Error('the app itself failed');
        },
      },
      LISTEN_PORT,
    );
    try {
      expect((await fetch(`${server.url}/anything`)).status).toBe(500);
    } finally {
      await server.close();
    }

    const preview = createPreviewApp({ root: paidDir, devFacilitatorUrl: `http://127.0.0.1:${CLOSED_PORT}` });
    const previewServer = await listen(preview, PREVIEW_PORT); // the forward answers loopback callers only
    try {
      const forwarded = await fetch(`${previewServer.url}/x402-dev-facilitator/v2/transactions/params`);
      expect(forwarded.status).toBe(500);
    } finally {
      await previewServer.close();
    }

    const lines = stderrLines(stderr).filter((line) => line.event === 'unhandled');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.level).toBe('error');
      expect(Date.parse(String(line.at))).not.toBeNaN();
    }
    expect(lines[0]).toMatchObject({ path: resource.path, detail: expect.stringContaining('inner cause') });
    expect(lines[1]).toMatchObject({ detail: 'Error: the app itself failed' });
    expect(lines[2]).toMatchObject({
      method: 'GET',
      path: '/x402-dev-facilitator/v2/transactions/params',
      detail: expect.stringContaining('ECONNREFUSED'),
    });
  });
});
