// Fewer candles never read as stronger evidence. The real `emi generate --source live` runs against a loopback
// server answering as every venue from one simulated market minute, Binance spot's hourly klines cut to the last N
// bars: confidence never rises as bars go missing, a history too short for the trend's averages to settle is named
// and marks the asset partial, a degraded main brain says why (the regime's gaps too), the paid data quality is not
// `low` while the regime rests on partial evidence, and breadth gets no level the unread assets could change.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer, ServedRequest } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { marketClockInsideTheHour, writeLiveConfig } from './live-helpers.ts';
import { liveGenerateArgs, runEmi } from './ops-cli.ts';
import {
  downtrend,
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  SEVEN,
  uptrend,
} from './helpers/market-fixtures.ts';

/** One market for every run of this file, so that runs differ only by how many bars the klines keep. */
let MARKET_AS_OF = 0;
// Every run of this file reads one market hour (marketClockInsideTheHour): a run past the hour would read a bar more.
beforeAll(async () => {
  MARKET_AS_OF = await marketClockInsideTheHour(240_000);
}, 240_000 + 10_000);

const isKlines = (request: ServedRequest) =>
  request.venue === 'binance-spot' && request.path.split('?')[0]!.endsWith('/api/v3/klines');

/** Every venue from the simulator; Binance spot's klines keep only their last `bars` bars. */
function venueServer(bars: number): Promise<ReplayServer> {
  const simulated = transportHandler(createSimulatedTransport({ seed: 7, asOf: MARKET_AS_OF }));
  return startReplayServer(async (request) => {
    const answer = await simulated(request);
    if (!isKlines(request) || answer.status !== 200) return answer;
    return { ...answer, body: JSON.stringify((JSON.parse(answer.body) as unknown[]).slice(-bars)) };
  });
}

interface Coin {
  confidence: number | null;
  data_status: string;
}
interface RiskFactor {
  factor: string;
  level: string;
  note: string;
}
interface Run {
  output: string;
  coins: Record<string, Coin>;
  brainStatus: string;
  brainLimitations: string[];
  regimeStatus: string;
  regimeLimitations: string[];
  paidBrainLimitations: string[];
  riskFactors: RiskFactor[];
}

const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T;

const dirs: string[] = [];
const servers: ReplayServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The real `emi generate --source live`, every venue routed to a server whose klines keep `bars` bars. */
async function generate(bars: number): Promise<Run> {
  const server = await venueServer(bars);
  servers.push(server);
  const dir = await mkdtemp(join(tmpdir(), 'emi-candles-'));
  dirs.push(dir);
  const run = await runEmi(dir, liveGenerateArgs(await writeLiveConfig(dir, server, { candleLimit: 500 })));
  const output = run.stdout + run.stderr;
  expect(run.code, output).toBe(0);
  const brain = await readJson<{
    status: string;
    coins: Record<string, Coin>;
    brain: { limitations: string[] };
  }>(join(dir, 'site', 'api', 'main-brain.php'));
  const regime = await readJson<{ status: string; regime: { limitations: string[] } }>(
    join(dir, 'site', 'api', 'market-regime.php'),
  );
  const paidBrain = await readJson<{ limitations: string[] }>(join(dir, 'paid', 'x402-main-brain.json'));
  const paidRegime = await readJson<{ risk_factors: RiskFactor[] }>(
    join(dir, 'paid', 'x402-market-regime.json'),
  );
  return {
    output,
    coins: brain.coins,
    brainStatus: brain.status,
    brainLimitations: brain.brain.limitations,
    regimeStatus: regime.status,
    regimeLimitations: regime.regime.limitations,
    paidBrainLimitations: paidBrain.limitations,
    riskFactors: paidRegime.risk_factors,
  };
}

/** Bars kept, longest first. The last bar of an answer may be the open hour, which is not read. */
const CUTS = [500, 200, 150, 100, 72, 62] as const;
/**
 * Under this many candles the trend is provisional: EMA50 needs 125 for its seed to weigh under 5 %, ADX 70, and
 * momentum's volatility scale a week of returns (169 candles).
 */
const SETTLED = 169;

describe('emi generate --source live with fewer hourly candles', { timeout: 300_000 }, () => {
  const runs = new Map<number, Run>();
  beforeAll(async () => {
    for (const bars of CUTS) runs.set(bars, await generate(bars));
  }, 300_000);
  const run = (bars: number) => runs.get(bars)!;

  it('never gives an asset a higher confidence for fewer bars', () => {
    const risen: string[] = [];
    const symbols = Object.keys(run(500).coins);
    expect(symbols.length).toBeGreaterThan(0);
    for (const symbol of symbols)
      for (let i = 1; i < CUTS.length; i++) {
        const more = run(CUTS[i - 1]!).coins[symbol]!.confidence ?? 0;
        const fewer = run(CUTS[i]!).coins[symbol]!.confidence ?? 0;
        if (fewer > more) risen.push(`${symbol}: ${CUTS[i - 1]} bars ${more} -> ${CUTS[i]} bars ${fewer}`);
      }
    // Before: BTC 500 bars 43, 100 bars 44, 72 bars 62, 62 bars 67 ("high"), all labelled `available`.
    expect(risen).toEqual([]);
  });

  it('labels a history too short for the trend to settle: a limitation naming it, the asset partial', () => {
    for (const bars of CUTS.filter((b) => b < SETTLED)) {
      const { coins, brainLimitations, paidBrainLimitations } = run(bars);
      for (const [symbol, coin] of Object.entries(coins))
        expect(coin.data_status, `${symbol} at ${bars} bars`).toBe('partial');
      const named = brainLimitations.find((l) =>
        /: only \d+ hourly candles, fewer than the trend reading needs to settle \(.*\); it is provisional, and confidence counts those parts as if they could have read either way\.$/.test(
          l,
        ),
      );
      expect(named, `${bars} bars: ${brainLimitations.join(' | ')}`).toBeDefined();
      expect(paidBrainLimitations).toContain(named);
    }
    // Each part is named with the candles it needs: at 150 only momentum's week, at 100 the average too, at 62 ADX.
    const needs = (bars: number) =>
      /needs to settle \((.*)\); it is/.exec(run(bars).brainLimitations.join(' '))?.[1];
    expect(needs(150)).toBe('169 for the week of volatility that scales momentum');
    expect(needs(100)).toBe(
      '125 for the 50-hour average and 169 for the week of volatility that scales momentum',
    );
    expect(needs(62)).toBe(
      '125 for the 50-hour average, 169 for the week of volatility that scales momentum and 70 for ADX',
    );
    // A settled history is no gap.
    for (const bars of CUTS.filter((b) => b >= SETTLED))
      expect(run(bars).brainLimitations.join(' ')).not.toMatch(/fewer than the trend reading needs/);
  });

  it('names every reason a degraded main brain is degraded, the market regime’s short history too', () => {
    for (const bars of CUTS) {
      const r = run(bars);
      if (r.brainStatus !== 'degraded') continue;
      expect(r.brainLimitations.length, `${bars} bars`).toBeGreaterThan(0);
      if (r.regimeStatus === 'degraded')
        for (const line of r.regimeLimitations) {
          expect(r.brainLimitations, `${bars} bars`).toContain(line);
          expect(r.paidBrainLimitations, `${bars} bars`).toContain(line);
        }
    }
    // 150 bars: the drawdown is read from a window under the 7-day high.
    const r = run(150);
    expect(r.regimeStatus).toBe('degraded');
    expect(r.brainStatus).toBe('degraded');
    expect(r.brainLimitations).toContainEqual(
      expect.stringMatching(/only \d+ hourly candles, so drawdown is measured from the \d+-hour high/),
    );
  });

  it('reads paid data quality as `low` only when nothing was missing, the regime’s own gaps included', () => {
    const quality = (bars: number) => run(bars).riskFactors.find((f) => f.factor === 'data_quality')!;
    for (const bars of CUTS.filter((b) => b < 168)) {
      const q = quality(bars);
      expect(q.level, `${bars} bars: ${q.note}`).not.toBe('low');
      expect(q.note).toMatch(
        /the market regime rests on partial evidence, its drawdown read from a \d+-hour window/,
      );
    }
    // Before: `low`, "every asset had all of its data", beside the regime's "only 61 hourly candles".
    expect(quality(62).level).toBe('moderate');
  });
});

describe('paid breadth is a counted factor', () => {
  /** `above` assets in an uptrend, `below` in a downtrend, `unread` without candles (no trend reading), of seven. */
  const breadthOf = (above: number, below: number, unread: number) => {
    const paths = [
      ...Array<typeof uptrend>(above).fill(uptrend),
      ...Array<typeof downtrend>(below).fill(downtrend),
      ...Array<null>(unread).fill(null),
    ];
    const assets = SEVEN.map((symbol, i) => {
      const path = paths[i] ?? null;
      return path
        ? fixtureAsset(symbol, path(10 + 10 * i, i + 1))
        : { ...fixtureAsset(symbol, uptrend(10 + 10 * i, i + 1)), candles: null };
    });
    const free = buildFreeSnapshots(fixtureSnapshot(assets), FIXTURE_CLOCK);
    expect(free.marketRegime.regime.breadth).toMatchObject({
      assets_above_ema50: above,
      assets_with_trend_data: above + below,
    });
    const body = buildPaidBodies(free, FIXTURE_CLOCK).paidMarketRegime;
    return { factor: body.risk_factors.find((f) => f.factor === 'breadth'), limitations: body.limitations };
  };

  it('gets no level from "4 of 6" when the seventh could make it 4 of 7 (moderate) or 5 of 7 (low)', () => {
    const { factor, limitations } = breadthOf(4, 2, 1);
    // Before: `low` from 4 of 6.
    expect(factor).toBeUndefined();
    expect(limitations).toContain(
      'Breadth (assets above their 50-hour average) was read for 6 of 7 assets: the 1 without a reading could put ' +
        'its level anywhere from low to moderate, so it is missing from the risk factors.',
    );
    expect(breadthOf(1, 5, 1).limitations.join(' ')).toMatch(/anywhere from elevated to high/);
  });

  it('keeps its level when the unread assets could not change it, or when every asset was read', () => {
    expect(breadthOf(5, 1, 1).factor).toEqual({
      factor: 'breadth',
      level: 'low',
      note: '5 of 6 assets trade above their 50-hour average.',
    });
    expect(breadthOf(4, 3, 0).factor).toMatchObject({ level: 'moderate' });
    expect(breadthOf(0, 0, 7).limitations).toContain(
      'Breadth could not be measured, so it is missing from the risk factors.',
    );
  });
});
