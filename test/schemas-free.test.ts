import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { DerivativesResponse } from '../schemas/derivatives.ts';
import { LiquidityLiteResponse } from '../schemas/liquidity-lite.ts';
import { MainBrainResponse } from '../schemas/main-brain.ts';
import { MarketRegimeResponse } from '../schemas/market-regime.ts';
import { ReasoningResponse } from '../schemas/reasoning.ts';
import type { PublicPerformance } from '../schemas/performance.ts';
import {
  crash,
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  reversal,
  SEVEN,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

const scenarios = {
  uptrend: fixtureSnapshot(universe(uptrend)),
  crash: fixtureSnapshot(universe(crash, { openInterestChange: -0.1 }), { mode: 'live' }),
  mixed: fixtureSnapshot(universe(reversal, { book: false, ticker: false }), { mode: 'replay' }),
  empty: fixtureSnapshot(
    SEVEN.map((s) =>
      fixtureAsset(s, uptrend(), {
        candles: false,
        ticker: false,
        book: false,
        fundingRate: null,
        openInterestChange: null,
        liquidations: null,
      }),
    ),
    {
      issues: [{ venue: 'binance-spot', symbol: null, section: 'all', message: 'HTTP 451 from this region' }],
    },
  ),
};

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('every free body validates against its schema', () => {
  for (const [name, snapshot] of Object.entries(scenarios)) {
    it(name, () => {
      const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
      const results = [
        MarketRegimeResponse.safeParse(free.marketRegime),
        MainBrainResponse.safeParse(free.mainBrain),
        LiquidityLiteResponse.safeParse(free.liquidityLite),
        DerivativesResponse.safeParse(free.derivatives),
        ...Object.values(free.reasoning).map((r) => ReasoningResponse.safeParse(r)),
      ];
      for (const r of results) expect(r.error?.issues ?? []).toEqual([]);
      expect(Object.keys(free.reasoning)).toEqual([...SEVEN]);
    });
  }

  it('accepts a recorded track record', () => {
    const performance: PublicPerformance = {
      status: 'available',
      resolved_rounds: 40,
      replayed_rounds: 0,
      window_days: 30,
      hit_rate: { value: 0.55, n: 40, wilson_low: 0.4, wilson_high: 0.69 },
      brier_score: 0.6,
      ranked_probability_score: 0.2,
      skill_vs_base_rate: 0.05,
      note: 'forty rounds',
    };
    const body = buildFreeSnapshots(scenarios.uptrend, FIXTURE_CLOCK, performance).mainBrain;
    expect(MainBrainResponse.safeParse(body).success).toBe(true);
    expect(body.public_performance.resolved_rounds).toBe(40);
  });
});

describe('the schemas are strict', () => {
  const free = buildFreeSnapshots(scenarios.uptrend, FIXTURE_CLOCK);

  it('reject an extra top-level field', () => {
    expect(MarketRegimeResponse.safeParse({ ...clone(free.marketRegime), weights: [0.3] }).success).toBe(
      false,
    );
    expect(MainBrainResponse.safeParse({ ...clone(free.mainBrain), score_internal: 1 }).success).toBe(false);
    expect(LiquidityLiteResponse.safeParse({ ...clone(free.liquidityLite), extra: 1 }).success).toBe(false);
    expect(DerivativesResponse.safeParse({ ...clone(free.derivatives), extra: 1 }).success).toBe(false);
    expect(ReasoningResponse.safeParse({ ...clone(free.reasoning.BTC), extra: 1 }).success).toBe(false);
  });

  it('reject an extra field deep inside', () => {
    const regime = clone(free.marketRegime);
    (regime.regime.volatility as Record<string, unknown>).weight = 0.2;
    expect(MarketRegimeResponse.safeParse(regime).success).toBe(false);

    const brain = clone(free.mainBrain);
    (brain.coins.BTC as Record<string, unknown>).score = 0.8;
    expect(MainBrainResponse.safeParse(brain).success).toBe(false);

    const perf = clone(free.mainBrain);
    (perf.public_performance as Record<string, unknown>).weights = {};
    expect(MainBrainResponse.safeParse(perf).success).toBe(false);

    const source = clone(free.mainBrain);
    (source.source as Record<string, unknown>).internal = true;
    expect(MainBrainResponse.safeParse(source).success).toBe(false);

    const derivatives = clone(free.derivatives);
    (derivatives.assets.BTC!.funding as Record<string, unknown>).median = 0.0001;
    expect(DerivativesResponse.safeParse(derivatives).success).toBe(false);

    const reasoning = clone(free.reasoning.BTC!);
    (reasoning.reasoning as Record<string, unknown>).weights = [1];
    expect(ReasoningResponse.safeParse(reasoning).success).toBe(false);
  });

  it('pin versions, access, enums and ranges', () => {
    expect(free.marketRegime.version).toBe('v1.3');
    expect(free.marketRegime.schema_version).toBe('1.3.0');
    expect(free.liquidityLite.version).toBe('v1');
    expect(free.derivatives.access).toBe('free_public');
    expect(MarketRegimeResponse.safeParse({ ...clone(free.marketRegime), version: 'v1' }).success).toBe(
      false,
    );
    expect(MarketRegimeResponse.safeParse({ ...clone(free.marketRegime), market_mode: 'BULL' }).success).toBe(
      false,
    );
    expect(MarketRegimeResponse.safeParse({ ...clone(free.marketRegime), confidence: 101 }).success).toBe(
      false,
    );
    expect(
      MainBrainResponse.safeParse({ ...clone(free.mainBrain), coins: { btc: free.mainBrain.coins.BTC } })
        .success,
    ).toBe(false);
  });

  it('keep spec nullability: CoinSnapshot fields may be null, the asset may not', () => {
    const brain = clone(free.mainBrain);
    brain.coins.BTC = { ...brain.coins.BTC!, bias: null, confidence: null, price: null, price_source: null };
    expect(MainBrainResponse.safeParse(brain).success).toBe(true);
    (brain.coins.BTC as Record<string, unknown>).asset = null;
    expect(MainBrainResponse.safeParse(brain).success).toBe(false);
  });
});
