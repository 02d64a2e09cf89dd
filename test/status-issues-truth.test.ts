// What /status.json and the 402 say about a run's sources, checked against what the run got: a venue skipped or
// refused for the run is never said to have been replaced by one that answered; each issue names its asset; and
// replayed data (recorded real venue answers) is not called simulated, as the bodies' source.simulated says.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { collectFor } from '../generator/market-source.ts';
import type { CollectRequest } from '../generator/market-source.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { VENUE_IDS } from '../generator/sources/venues.ts';
import { PaymentRequiredBody, PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { RunStatus } from '../schemas/status.ts';
import { testConfig } from './live-helpers.ts';
import { resourceById } from './paywall-harness.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 5);
const SYMBOLS = ['BTC', 'ETH', 'SOL'];
/** Nothing listens here (fixc's port range): every venue call is refused. */
const CLOSED_PORT = 19_457;
/** The wording of the defect: an answer claimed whether or not one came. */
const CLAIMED_ANSWER = /came from the next venue|where one answered/;

let dir: string;
let server: ReplayServer | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-status-truth-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

const readStatus = async (): Promise<RunStatus> =>
  RunStatus.parse(JSON.parse(await readFile(join(dir, 'site', 'status.json'), 'utf8')));

/** A pipeline run at AS_OF whose market data comes from `collectFor(source)` with these source settings. */
const runWith = (source: 'live' | 'replay', extra: Partial<CollectRequest>) =>
  runPipeline(
    simulatedRun(dir, AS_OF, {
      source,
      symbols: SYMBOLS,
      now: () => AS_OF + 1_000,
      collector: (request) => collectFor(source, { ...request, env: {}, ...extra }),
    }),
  );

/** The simulator over loopback HTTP; `refuse` venues answer every call with that status instead. */
async function simulatedVenues(refuse: Record<string, number> = {}): Promise<ReplayServer> {
  const simulator = transportHandler(createSimulatedTransport({ seed: 4, asOf: AS_OF }));
  server = await startReplayServer((request) => {
    const status = refuse[request.venue];
    return status ? { status, body: '{"code":"51001","msg":"restricted"}' } : simulator(request);
  });
  return server;
}

const fastConfig = (venues: ReplayServer): SourcesConfigInput =>
  testConfig(venues, { order: SIMULATOR_ORDER, candleLimit: 48, estimateLiquidations: false });

describe('a venue skipped or refused for the run', () => {
  it('is not said to have been replaced by an answer when every venue is unreachable', async () => {
    const closed = `http://127.0.0.1:${CLOSED_PORT}`;
    const config: SourcesConfigInput = {
      order: SIMULATOR_ORDER,
      venues: Object.fromEntries(VENUE_IDS.map((venue) => [venue, { baseUrl: `${closed}/${venue}` }])),
      http: { timeoutMs: 2_000, retries: 0, backoffMs: 5, maxBackoffMs: 20, requestsPerSecond: 1000 },
    };
    const report = await runWith('live', { config });
    expect(report.status).toBe('stale'); // no source delivered a price: nothing published

    const status = await readStatus();
    const runWide = status.sources.issues.filter((issue) => issue.section === 'all');
    expect(runWide.map((issue) => issue.venue)).toContain('binance-spot');
    for (const issue of runWide) {
      expect(issue.message).toMatch(/skipped for this run: .*ECONNREFUSED/);
      expect(issue.message).not.toMatch(CLAIMED_ANSWER);
    }
    // Nothing was ever published: no data served, so none of it is simulated (before: `simulated: true`).
    expect(status).toMatchObject({ mode: 'live', simulated: false, data: { mode: null } });
  });

  it('is not said to have been replaced when it was the only venue of a section (okx answering 451)', async () => {
    const config = fastConfig(await simulatedVenues({ okx: 451 }));
    const report = await runWith('live', { config });
    expect(report.error).toBeNull();
    expect(report.status).toBe('degraded');

    const status = await readStatus();
    const refusal = status.sources.issues.find((issue) => issue.section === 'all');
    expect(refusal?.venue).toBe('okx');
    expect(refusal?.message).toMatch(/^venue unavailable for this run \(HTTP 451, restricted location\)/);
    expect(refusal?.message).not.toMatch(CLAIMED_ANSWER);
    // What the later venues did not deliver is said per asset: okx is the only liquidation venue.
    const brain = JSON.parse(await readFile(join(dir, 'site', 'api', 'main-brain.php'), 'utf8')) as {
      source: { degraded: boolean };
    };
    expect(brain.source.degraded).toBe(true);
  });
});

describe('/status.json issues', () => {
  it('name the asset of each per-asset issue, and null for a run-wide one', async () => {
    const config = fastConfig(await simulatedVenues({ okx: 451 }));
    await runWith('live', { config });

    const issues = (await readStatus()).sources.issues;
    const liquidations = issues.filter((issue) => issue.section === 'liquidations');
    // Before: three identical lines {venue: okx, section: liquidations, message} with no asset.
    expect(liquidations.map((issue) => issue.symbol)).toEqual(SYMBOLS);
    expect(liquidations.every((issue) => issue.venue === 'okx')).toBe(true);
    expect(issues.find((issue) => issue.section === 'all')?.symbol).toBeNull();
  });

  it('read from a status written before `symbol` was recorded (its issues without it)', async () => {
    const config = fastConfig(await simulatedVenues({ okx: 451 }));
    await runWith('live', { config });
    const written = JSON.parse(await readFile(join(dir, 'site', 'status.json'), 'utf8')) as RunStatus;
    const older = {
      ...written,
      sources: {
        ...written.sources,
        issues: written.sources.issues.map(({ symbol: _dropped, ...rest }) => rest),
      },
    };
    expect(RunStatus.safeParse(older).success).toBe(true);
  });
});

describe('a replay of a recorded live run', () => {
  let facilitator: DevFacilitator;
  beforeAll(async () => {
    facilitator = await startDevFacilitator();
  });
  afterAll(async () => {
    await facilitator?.close();
  });

  /** Records a live run of the simulated venues, then replays it through the pipeline. */
  async function replayRun() {
    const venues = await simulatedVenues();
    const config = fastConfig(venues);
    const recording = join(dir, 'recording');
    await collectFor('live', {
      seed: 0,
      asOf: AS_OF,
      symbols: SYMBOLS,
      config,
      env: {},
      recordDir: recording,
    });
    await venues.close();
    server = undefined;
    const report = await runWith('replay', { config, replayDir: recording });
    expect(report).toMatchObject({ mode: 'replay', status: 'ok', error: null });
  }

  it('is not called simulated by /status.json, as its bodies say (data.mode says replay)', async () => {
    await replayRun();
    const brain = JSON.parse(await readFile(join(dir, 'site', 'api', 'main-brain.php'), 'utf8')) as {
      source: { mode: string; simulated: boolean };
    };
    expect(brain.source).toMatchObject({ mode: 'replay', simulated: false });
    const status = await readStatus();
    expect(status).toMatchObject({ mode: 'replay', simulated: false, data: { mode: 'replay' } });
  });

  it('is not called simulated by the 402 either, and a stack that sells live data only still refuses it', async () => {
    await replayRun();
    // The 402 of the paid file this run wrote, on a development stack that may sell non-live data.
    const resource = resourceById('paidMarketRegime');
    const payTo = algosdk.generateAccount().addr.toString();
    facilitator.ledger.optIn(payTo);
    const paywall = (allowSimulated: boolean) =>
      createPaywallApp(
        {
          payTo,
          facilitatorUrl: facilitator.url,
          baseUrl: 'http://127.0.0.1:8080',
          storage: createFsStorage(join(dir, 'paid')),
          allowSimulated,
        },
        { now: () => AS_OF + 5_000, log: () => undefined },
      ).request(resource.path);
    const offered = await paywall(true);
    expect(offered.status).toBe(402);
    expect(PaymentRequiredBody.parse(await offered.json()).data).toMatchObject({
      mode: 'replay',
      simulated: false,
    });
    // Not simulated is not live: `data_not_live` is about the mode, and refuses replayed data before any 402.
    const refused = await paywall(false);
    expect(refused.status).toBe(503);
    expect(PaywallErrorBody.parse(await refused.json()).error).toBe('data_not_live');
  });
});
