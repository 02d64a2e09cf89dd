// The cross-venue funding check against a loopback server answering as every venue (the simulator, in each venue's
// documented format), with XRP's funding rewritten at Binance USDⓈ-M and Bybit: the real `emi generate --source live`
// then publishes a funding rate two venues disagree on with a limitation naming both and a lower confidence, says when
// no other venue could confirm a rate, and checks nothing when the plan has a single funding venue.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { collectFor } from '../generator/market-source.ts';
import { loadSourcesConfig } from '../generator/sources/config.ts';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer, ServedRequest } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { marketClockInsideTheHour, testConfig, writeLiveConfig } from './live-helpers.ts';
import { liveGenerateArgs, runEmi } from './ops-cli.ts';

type FundingVenue = 'binance-usdm' | 'bybit' | 'okx';

/** XRP's current funding rate (per 8 h, as the venue states it) per venue; `missing` drops it, `down` answers 503. */
interface Faults {
  xrp?: Partial<Record<FundingVenue, string>>;
  down?: string[];
}

/** The call of each venue that states XRP's current funding rate. */
const XRP_RATE_CALLS: Record<FundingVenue, (r: ServedRequest) => boolean> = {
  'binance-usdm': (r) => r.path.startsWith('/fapi/v1/premiumIndex') && /XRPUSDT/.test(r.path),
  bybit: (r) => r.path.startsWith('/v5/market/tickers'),
  okx: (r) => r.path.startsWith('/api/v5/public/funding-rate?') && /XRP/.test(r.path),
};

type Json = Record<string, unknown> & { result?: { list: Json[] }; data?: Json[] };

/** Sets XRP's current rate in the venue's own shape: Binance's premium index, Bybit's tickers, OKX's funding rate. */
function setXrpRate(venue: FundingVenue, answer: Json, rate: string): Json {
  if (venue === 'binance-usdm') return { ...answer, lastFundingRate: rate };
  const rows = venue === 'bybit' ? answer.result!.list : answer.data!;
  for (const row of rows) if (/^XRP/.test(String(row.symbol ?? row.instId))) row.fundingRate = rate;
  return answer;
}

/** Rewrites XRP's rate where a fault names the venue; other answers pass as they are. */
function rewrite(request: ServedRequest, body: string, faults: Faults): { status?: number; body: string } {
  const venue = request.venue as FundingVenue;
  const rate = faults.xrp?.[venue];
  if (rate === undefined || !XRP_RATE_CALLS[venue]?.(request)) return { body };
  if (rate === 'missing') return { status: 400, body: '{"code":-1121,"msg":"Invalid symbol."}' };
  return { body: JSON.stringify(setXrpRate(venue, JSON.parse(body) as Json, rate)) };
}

/** One market for the CLI runs of this file, so that they differ only by their faults. */
let MARKET_AS_OF = 0;
// Every run of this file reads one market hour (marketClockInsideTheHour): a run past the hour would read a bar more.
beforeAll(async () => {
  MARKET_AS_OF = await marketClockInsideTheHour(120_000);
}, 120_000 + 10_000);

function venueServer(faults: Faults, asOf = MARKET_AS_OF): Promise<ReplayServer> {
  const simulated = transportHandler(createSimulatedTransport({ seed: 7, asOf }));
  return startReplayServer(async (request) => {
    if (faults.down?.includes(request.venue))
      return { status: 503, body: '{"message":"service unavailable"}' };
    const answer = await simulated(request);
    if (answer.status !== undefined && answer.status !== 200) return answer;
    const { status, body } = rewrite(request, answer.body, faults);
    return { ...answer, status: status ?? answer.status, body };
  });
}

interface Published {
  code: number | null;
  output: string;
  limitations: string[];
  paidLimitations: string[];
  xrpFunding: { rate_8h_pct: number; crowding: string; venue: string };
  /** derivatives.php's own entry for XRP: its positioning reading's confidence and limitations. */
  xrpPositioning: { confidence: number | null; limitations: string[] };
  lastRun: { status: string };
}

const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T;

/** The real `emi generate --source live`, every venue routed to the server by the config's base URLs. */
async function generate(dir: string, server: ReplayServer): Promise<Published> {
  const run = await runEmi(dir, liveGenerateArgs(await writeLiveConfig(dir, server, { candleLimit: 60 })));
  const brain = await readJson<{ brain: { limitations: string[] } }>(
    join(dir, 'site', 'api', 'main-brain.php'),
  );
  const derivatives = await readJson<{
    assets: Record<string, Published['xrpPositioning'] & { funding: Published['xrpFunding'] }>;
  }>(join(dir, 'site', 'api', 'derivatives.php'));
  const paid = await readJson<{ limitations: string[] }>(join(dir, 'paid', 'x402-main-brain.json'));
  return {
    code: run.code,
    output: run.stdout + run.stderr,
    limitations: brain.brain.limitations,
    paidLimitations: paid.limitations,
    xrpFunding: derivatives.assets.XRP!.funding,
    xrpPositioning: derivatives.assets.XRP!,
    lastRun: await readJson(join(dir, 'var', 'last-run.json')),
  };
}

const dirs: string[] = [];
const servers: ReplayServer[] = [];
const serve = async (faults: Faults, asOf?: number) => {
  const server = await venueServer(faults, asOf);
  servers.push(server);
  return server;
};
const scratch = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'emi-crosscheck-funding-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const xrpFundingLines = (lines: readonly string[]) => lines.filter((l) => /^XRP: .*\(funding\)/.test(l));

describe('emi generate --source live: cross-venue funding check', { timeout: 120_000 }, () => {
  let agreeing: Published;
  beforeAll(async () => {
    // Both venues at +0.2 % per 8 h: crowded longs, confirmed.
    agreeing = await generate(
      await scratch(),
      await serve({ xrp: { 'binance-usdm': '0.002', bybit: '0.002' } }),
    );
    expect(agreeing.code, agreeing.output).toBe(0);
  });

  it('a rate the next venue confirms carries no funding limitation', () => {
    expect(agreeing.xrpFunding).toMatchObject({ rate_8h_pct: 0.2, crowding: 'crowded_longs' });
    expect(xrpFundingLines(agreeing.limitations)).toEqual([]);
    expect(agreeing.lastRun.status).toBe('ok');
  });

  it('two venues on opposite sides: a limitation names both rates, free and paid', async () => {
    const run = await generate(
      await scratch(),
      await serve({ xrp: { 'binance-usdm': '0.002', bybit: '-0.0006' } }),
    );
    expect(run.code, run.output).toBe(0);
    expect(run.xrpFunding).toMatchObject({ rate_8h_pct: 0.2, venue: 'binance-usdm' });
    const disagree = expect.stringMatching(
      /^XRP: Data issue at binance-usdm \(funding\): funding \+0\.2000 % per 8 h differs from bybit \(-0\.0600 %\) by 0\.2600 points per 8 h, beyond the 0\.05-point cross-venue threshold/,
    );
    expect(run.limitations).toContainEqual(disagree);
    expect(run.paidLimitations).toContainEqual(disagree);
    expect(run.lastRun.status).toBe('degraded');
    // derivatives.php's own XRP entry, whose reading the disagreement is about, says it and is less confident.
    expect(run.xrpPositioning.limitations).toContainEqual(disagree);
    expect(agreeing.xrpPositioning.confidence).not.toBeNull();
    expect(run.xrpPositioning.confidence!).toBeLessThan(agreeing.xrpPositioning.confidence!);
  });

  it('says a rate was not cross-checked, and why, when no other funding venue answers', async () => {
    const server = await serve({ xrp: { 'binance-usdm': '0.002' }, down: ['bybit', 'okx', 'hyperliquid'] });
    const run = await generate(await scratch(), server);
    expect(run.code, run.output).toBe(0);
    expect(run.limitations).toContainEqual(
      expect.stringMatching(
        /^XRP: Data issue at binance-usdm \(funding\): funding \+0\.2000 % per 8 h not cross-checked: no other venue gave a current funding rate \(bybit: HTTP 503.*; okx: HTTP 503.*; hyperliquid: HTTP 503.*\)$/,
      ),
    );
    // Bounded: OKX, down, is asked once for XRP's funding by the check, not retried by it.
    const okxXrpFunding = server.requests.filter(
      (r) => r.venue === 'okx' && r.path.startsWith('/api/v5/public/funding-rate?') && /XRP/.test(r.path),
    );
    expect(okxXrpFunding).toHaveLength(1);
  });
});

describe('collectFor live at a fixed clock: what the funding check compares', { timeout: 60_000 }, () => {
  /** A market where XRP's confidence is above 0, so that a drop shows. */
  const AS_OF = Date.UTC(2025, 0, 15, 12, 0, 0);
  const collect = async (faults: Faults, extra: SourcesConfigInput = {}) =>
    collectFor('live', {
      seed: 0,
      asOf: AS_OF,
      symbols: ['BTC', 'XRP'],
      env: {},
      config: testConfig(await serve(faults, AS_OF), { candleLimit: 250, ...extra }),
    });
  const xrpFunding = (snapshot: MarketSnapshot) =>
    snapshot.issues.filter((i) => i.symbol === 'XRP' && i.section === 'funding').map((i) => i.message);
  const xrpCoin = (snapshot: MarketSnapshot) => {
    const clock = { asOf: AS_OF, generatedAt: AS_OF, nextUpdateDue: AS_OF + 60_000 };
    return buildFreeSnapshots(snapshot, clock).mainBrain.coins.XRP!;
  };

  it('a disagreement lowers the asset’s confidence through its issue, like a price disagreement', async () => {
    const agreeing = await collect({ xrp: { 'binance-usdm': '0.002', bybit: '0.002' } });
    const disagreeing = await collect({ xrp: { 'binance-usdm': '0.002', bybit: '-0.0006' } });
    expect(xrpFunding(agreeing)).toEqual([]);
    expect(xrpFunding(disagreeing)).toHaveLength(1);
    const before = xrpCoin(agreeing).confidence ?? 0;
    expect(before).toBeGreaterThan(0);
    expect(xrpCoin(disagreeing).confidence).toBeLessThan(before);
  });

  it('when the first venue lacks the asset, the rate from the next is checked against the one after', async () => {
    // Binance USDⓈ-M has no XRP: Bybit's -0.06 % (crowded shorts) is published, and OKX, next, says +0.01 %.
    const snapshot = await collect({ xrp: { 'binance-usdm': 'missing', bybit: '-0.0006', okx: '0.0001' } });
    expect(snapshot.assets.find((a) => a.symbol === 'XRP')!.funding!.provenance.venue).toBe('bybit');
    expect(xrpFunding(snapshot)).toEqual([
      expect.stringMatching(
        /^funding -0\.0600 % per 8 h differs from okx \(\+0\.0100 %\) by 0\.0700 points per 8 h, beyond the 0\.05-point cross-venue threshold/,
      ),
    ]);
  });

  it('a gap within the threshold (0.05 points per 8 h, inclusive) is no issue', async () => {
    const snapshot = await collect({ xrp: { 'binance-usdm': '0.0006', bybit: '0.0001' } });
    expect(snapshot.assets.find((a) => a.symbol === 'XRP')!.funding!.value.rate8h).toBe(0.0006);
    expect(xrpFunding(snapshot)).toEqual([]);
  });

  it('the operator sets the threshold (fundingDisagreementPct8h, EMI_FUNDING_DISAGREEMENT_PCT_8H)', async () => {
    // A 0.07-point gap: beyond the default 0.05, within 0.1; the threshold the issue names is the one in force.
    const faults: Faults = { xrp: { 'binance-usdm': 'missing', bybit: '-0.0006', okx: '0.0001' } };
    expect(xrpFunding(await collect(faults, { fundingDisagreementPct8h: 0.1 }))).toEqual([]);
    expect(xrpFunding(await collect(faults, { fundingDisagreementPct8h: 0.02 }))).toEqual([
      expect.stringContaining('by 0.0700 points per 8 h, beyond the 0.02-point cross-venue threshold'),
    ]);
    const config = await loadSourcesConfig({ env: { EMI_FUNDING_DISAGREEMENT_PCT_8H: '0.1' } });
    expect(config.fundingDisagreementPct8h).toBe(0.1);
    expect((await loadSourcesConfig({ env: {} })).fundingDisagreementPct8h).toBe(0.05);
    await expect(loadSourcesConfig({ env: { EMI_FUNDING_DISAGREEMENT_PCT_8H: '-1' } })).rejects.toThrow(
      /^invalid source configuration in environment: EMI_FUNDING_DISAGREEMENT_PCT_8H: Too small/,
    );
  });

  it('a plan with one funding venue checks nothing and labels nothing', async () => {
    const snapshot = await collect(
      { xrp: { 'binance-usdm': '0.002', bybit: '-0.0006' } },
      { order: { funding: ['binance-usdm'] } },
    );
    expect(snapshot.issues.filter((i) => i.section === 'funding')).toEqual([]);
  });
});
