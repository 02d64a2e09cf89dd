// Missing evidence is said to be missing, everywhere it shows: positioning that cannot be read is `unavailable`
// (never a default "balanced") and lowers confidence whatever it would have said; the paid data-quality reading,
// the per-asset risk level, the history's source status and liquidity's `verified` say what is true; descriptions
// say what the code does; the paid regime and main brain carry the simulated notice the atlas carries.
import { describe, expect, it } from 'vitest';
import { analyzeAsset, buildFreeSnapshots, type FreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { marketRowsOf } from '../generator/history/rows.ts';
import { toJsonSchema, type JsonSchema } from '../generator/discovery/json-schema.ts';
import type { AssetMarket, MarketSnapshot, SourceIssue } from '../generator/market/types.ts';
import type { DataMode } from '../schemas/common.ts';
import { DerivativesResponse } from '../schemas/derivatives.ts';
import { LiquidityLiteResponse } from '../schemas/liquidity-lite.ts';
import { Atlas } from '../schemas/paid/atlas.ts';
import { PaidMainBrain } from '../schemas/paid/paid-main-brain.ts';
import { PaidMarketRegime } from '../schemas/paid/paid-market-regime.ts';
import {
  crash,
  downtrend,
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  reversal,
  SEVEN,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

const freeOf = (snapshot: MarketSnapshot) => buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
const bodiesOf = (snapshot: MarketSnapshot) => {
  const free = freeOf(snapshot);
  return { free, paid: buildPaidBodies(free, FIXTURE_CLOCK) };
};

/** Open interest from a venue that gives one point: a value, but no 24-hour change to read. */
const onePointOpenInterest = (asset: AssetMarket): AssetMarket => {
  if (!asset.openInterest) return asset;
  const { valueUsd } = asset.openInterest.value;
  const time = asset.openInterest.provenance.asOf;
  return {
    ...asset,
    openInterest: { ...asset.openInterest, value: { valueUsd, history: [{ time, valueUsd }] } },
  };
};

/** Funding failed and open interest cannot be compared: no positioning reading at all. */
const noPositioning = (asset: AssetMarket): AssetMarket => onePointOpenInterest({ ...asset, funding: null });

describe('positioning that cannot be read counts as missing', () => {
  it('is unavailable, with no vote and no confidence, where it used to read "balanced" and "neutral"', () => {
    const a = analyzeAsset(noPositioning(fixtureAsset('BTC', uptrend())), [], 'simulated');
    expect(a.derivatives.state).toBe('unavailable');
    expect(a.derivatives.vote).toBeNull();
    expect(a.derivatives.confidence).toBeNull();
    expect(a.summary).toMatch(/some evidence was missing/);
    expect(a.summary).not.toMatch(/positioning/);
    expect(a.limitations.join(' ')).toMatch(/BTC: .*positioning is unavailable/);
  });

  it('lowers confidence whatever the missing section would have said (it never rises)', () => {
    const paths = { uptrend, downtrend, crash, reversal };
    const risen: string[] = [];
    for (const [name, path] of Object.entries(paths))
      for (const fundingRate of [-0.001, 0.0001, 0.0012])
        for (const openInterestChange of [-0.08, 0, 0.08]) {
          const full = fixtureAsset('BTC', path(), { fundingRate, openInterestChange });
          const complete = analyzeAsset(full, [], 'simulated');
          const variants: Record<string, AssetMarket> = {
            'no funding': { ...full, funding: null },
            'one-point open interest': onePointOpenInterest(full),
            'no positioning': noPositioning(full),
            'no book': { ...full, book: null },
          };
          for (const [missing, asset] of Object.entries(variants)) {
            const partial = analyzeAsset(asset, [], 'simulated');
            const where = `${name}, funding ${fundingRate}, open interest ${openInterestChange}, ${missing}`;
            // Never above; strictly below when there was enough confidence for rounding to show the fall.
            const ok =
              complete.confidence! >= 20
                ? partial.confidence! < complete.confidence!
                : partial.confidence! <= complete.confidence!;
            if (!ok) risen.push(`${where}: ${complete.confidence} -> ${partial.confidence}`);
            // Positioning's own confidence never rises either.
            const before = complete.derivatives.confidence;
            const after = partial.derivatives.confidence;
            if (after !== null && before !== null && after > before)
              risen.push(`${where}: positioning ${before} -> ${after}`);
          }
        }
    expect(risen).toEqual([]);
  });

  it('counts an estimated liquidation total as no evidence: confidence as without liquidations', () => {
    const liquidations = { longUsd24h: 9e6, shortUsd24h: 1e6, events: 0 };
    const confidenceWith = (options: Parameters<typeof fixtureAsset>[2]) =>
      analyzeAsset(fixtureAsset('BTC', uptrend(), options), [], 'simulated').derivatives.confidence;
    const none = confidenceWith({ liquidations: null });
    expect(confidenceWith({ liquidations: { ...liquidations, estimated: true } })).toBe(none);
    // Observed liquidations are evidence of their own.
    expect(confidenceWith({ liquidations: { ...liquidations, events: 40 } })).toBeGreaterThan(none!);
  });

  it('reads the same in every body: derivatives, main brain, reasoning and the paid bodies', () => {
    const snapshot = fixtureSnapshot([
      noPositioning(fixtureAsset('BTC', uptrend())),
      ...universe(uptrend, {}, ['ETH', 'XRP']),
    ]);
    const { free, paid } = bodiesOf(snapshot);
    const btc = DerivativesResponse.parse(free.derivatives).assets.BTC!;
    expect(btc).toMatchObject({ state: 'unavailable', vote: null, confidence: null, funding: null });
    expect(btc.open_interest?.reading).toBeNull();
    expect(btc.limitations!.join(' ')).toMatch(/no positioning reading/);
    expect(free.derivatives.evidence![0]).toMatch(/^2 of 3 assets have a positioning reading/);

    const complete = bodiesOf(fixtureSnapshot(universe(uptrend, {}, ['BTC', 'ETH', 'XRP'])));
    const coin = free.mainBrain.coins.BTC!;
    expect(coin.confidence!).toBeLessThan(complete.free.mainBrain.coins.BTC!.confidence!);
    expect(coin.summary).toMatch(/some evidence was missing/);
    expect(free.reasoning.BTC!.reasoning.confidence).toBe(coin.confidence);

    const picture = PaidMainBrain.parse(paid.paidMainBrain).coins.BTC!;
    expect(picture.derivatives).toMatchObject({ state: 'unavailable', vote: null });
    expect(picture.agreement_readings.derivatives).toBeNull();
    expect(picture.limitations.join(' ')).toMatch(/No derivatives positioning was available/);
    expect(Atlas.parse(paid.atlas).intelligence_layer.assets.BTC!.derivatives_state).toBe('unavailable');
    expect(PaidMarketRegime.parse(paid.paidMarketRegime).assets.BTC!.note).toMatch(/no positioning reading/);
  });
});

/** A venue that refused the whole run while the fallbacks delivered everything. */
const REFUSAL: SourceIssue = {
  venue: 'binance-usdm',
  symbol: null,
  section: 'funding',
  message: 'venue unavailable for this run (HTTP 451, restricted location)',
};

describe('the paid data-quality reading says what is true', () => {
  it('is not "low" when every asset is partial because a venue refused the run', () => {
    const { free, paid } = bodiesOf(fixtureSnapshot(universe(uptrend), { issues: [REFUSAL] }));
    expect(Object.values(free.mainBrain.coins).every((c) => c.data_status === 'partial')).toBe(true);
    const quality = paid.paidMarketRegime.risk_factors.find((f) => f.factor === 'data_quality')!;
    expect(quality.level).not.toBe('low');
    expect(quality.note).toMatch(/7 had partial data/);
    expect(paid.paidMarketRegime.limitations.join(' ')).toMatch(/HTTP 451/);
  });

  it('counts prices as prices: without candles every asset still had one', () => {
    const { paid } = bodiesOf(fixtureSnapshot(universe(uptrend, { candles: false })));
    const quality = paid.paidMarketRegime.risk_factors.find((f) => f.factor === 'data_quality')!;
    expect(quality.note).toMatch(/^7 of 7 assets had a price and 0 enough hourly candles/);
    expect(quality.level).toBe('elevated');
  });

  it('is low only when nothing was missing', () => {
    const { paid } = bodiesOf(fixtureSnapshot(universe(uptrend)));
    const quality = paid.paidMarketRegime.risk_factors.find((f) => f.factor === 'data_quality')!;
    expect(quality.level).toBe('low');
  });

  it('gives every partial entry a limitation naming it, in the paid regime and in liquidity lite', () => {
    // XLM lacks a derivatives reading, HBAR its order book: only HBAR's liquidity entry is partial.
    const assets = universe(uptrend).map((a) =>
      a.symbol === 'XLM' ? onePointOpenInterest(a) : a.symbol === 'HBAR' ? { ...a, book: null } : a,
    );
    const { free, paid } = bodiesOf(fixtureSnapshot(assets));
    const liquidity = LiquidityLiteResponse.parse(free.liquidityLite);
    expect(liquidity.assets.XLM!.data_status).toBe('partial');
    expect(liquidity.assets.XLM!.status).toBeNull();
    expect(liquidity.assets.HBAR!.status).toBe('partial');
    for (const entry of Object.values(liquidity.assets).filter((e) => e.status === 'partial'))
      expect(
        liquidity.limitations.some((l) => new RegExp(`\\b${entry.asset}\\b`).test(l)),
        entry.asset,
      ).toBe(true);
    const regime = PaidMarketRegime.parse(paid.paidMarketRegime);
    for (const entry of Object.values(regime.assets).filter((e) => e.data_status === 'partial'))
      expect(
        regime.limitations.some((l) => new RegExp(`\\b${entry.asset}\\b`).test(l)),
        entry.asset,
      ).toBe(true);
    expect(regime.assets.XLM!.note).toMatch(/partial data/);
  });
});

/** The published JSON Schema node of `path` (property names, "*" for a map's values) in `schema`. */
const nodeAt = (schema: JsonSchema, path: readonly string[]): JsonSchema => {
  const defs = (schema.$defs ?? {}) as Record<string, JsonSchema>;
  const resolve = (node: JsonSchema): JsonSchema => {
    const ref = node.$ref as string | undefined;
    const branch = ((node.anyOf as JsonSchema[] | undefined) ?? []).find((b) => b.type !== 'null');
    if (ref) return resolve(defs[ref.split('/').at(-1)!]!);
    return branch && !node.properties ? resolve(branch) : node;
  };
  let node = resolve(schema);
  for (const key of path) {
    node =
      key === '*'
        ? (node.additionalProperties as JsonSchema)
        : ((node.properties as Record<string, JsonSchema>)[key] as JsonSchema);
    if (key !== path.at(-1)) node = resolve(node);
  }
  return node;
};
const descriptionAt = (schema: JsonSchema, path: readonly string[]) =>
  String(nodeAt(schema, path).description);

describe('an asset’s risk level is a count of stress signs, and a missing change is missing', () => {
  it('is described as what it counts, not as bands of risk_score', () => {
    const described = [
      descriptionAt(toJsonSchema(PaidMainBrain), ['coins', '*', 'risk_level']),
      descriptionAt(toJsonSchema(Atlas), ['intelligence_layer', 'assets', '*', 'risk_level']),
      descriptionAt(toJsonSchema(PaidMarketRegime), ['assets', '*', 'risk_level']),
    ];
    for (const text of described) {
      expect(text).toMatch(/stress signs/);
      expect(text).not.toMatch(/bands of `risk_score`/);
    }
  });

  it('has no level without a 24-hour change, where a missing change used to count as a 0 % move', () => {
    const free: FreeSnapshots = freeOf(fixtureSnapshot(universe(uptrend)));
    free.mainBrain.coins.BTC = { ...free.mainBrain.coins.BTC!, change_24h: null };
    const paid = buildPaidBodies(free, FIXTURE_CLOCK);
    expect(paid.paidMainBrain.coins.BTC!.risk_level).toBeNull();
    expect(paid.atlas.intelligence_layer.assets.BTC!.risk_level).toBeNull();
    expect(paid.paidMarketRegime.assets.BTC!.risk_level).toBeNull();
    expect(paid.paidMainBrain.coins.ETH!.risk_level).not.toBeNull();
  });
});

describe('history rows carry their own resource’s status', () => {
  it('says degraded for a degraded derivatives body while the regime is clean', () => {
    const assets = universe(uptrend).map((a) => (a.symbol === 'XLM' ? onePointOpenInterest(a) : a));
    const free = freeOf(fixtureSnapshot(assets));
    expect(free.marketRegime.status).toBe('available');
    expect(free.derivatives.status).toBe('degraded');
    const rows = marketRowsOf(free);
    expect(rows['market-regime'].source_status).toBe('ok');
    expect(rows.derivatives.source_status).toBe('degraded');
    expect(rows['main-brain'].source_status).toBe('degraded');
  });

  it('says ok for a clean derivatives body while the regime is degraded', () => {
    const assets = universe(uptrend).map((a) => (a.symbol === 'XLM' ? { ...a, candles: null } : a));
    const free = freeOf(fixtureSnapshot(assets));
    expect(free.marketRegime.status).toBe('degraded');
    expect(free.derivatives.status).toBe('available');
    const rows = marketRowsOf(free);
    expect(rows['market-regime'].source_status).toBe('degraded');
    expect(rows.derivatives.source_status).toBe('ok');
  });
});

describe('liquidity lite says verified only of live data that came in whole', () => {
  const liquidity = (mode: DataMode, assets: AssetMarket[] = universe(uptrend, { mode })) =>
    LiquidityLiteResponse.parse(freeOf(fixtureSnapshot(assets, { mode })).liquidityLite);

  it('never calls simulated or replayed data verified', () => {
    for (const mode of ['simulated', 'replay'] as const) {
      const body = liquidity(mode);
      expect(Object.values(body.assets).map((a) => a.status)).toEqual(SEVEN.map(() => null));
      expect(body.assets_verified).toBe(0);
      expect(body.source_details.degraded).toBe(false);
    }
  });

  it('calls complete live data verified, and a partial asset partial', () => {
    // XLM's gap is in its derivatives (liquidity came in whole); HBAR's is in its order book.
    const assets = universe(uptrend, { mode: 'live' }).map((a) =>
      a.symbol === 'XLM' ? onePointOpenInterest(a) : a.symbol === 'HBAR' ? { ...a, book: null } : a,
    );
    const body = liquidity('live', assets);
    expect(body.assets.BTC!.status).toBe('verified');
    expect(body.assets.XLM!).toMatchObject({ status: 'verified', data_status: 'partial' });
    expect(body.assets.HBAR!).toMatchObject({ status: 'partial', data_status: 'partial' });
    expect(body.assets_verified).toBe(6);
  });

  it('describes the status by what it checks', () => {
    const text = descriptionAt(toJsonSchema(LiquidityLiteResponse), ['assets', '*', 'status']);
    expect(text).toMatch(/live data only/);
    expect(text).toMatch(/null when the data came in whole but is simulated or replayed/);
  });
});

describe('words and units say what the code does', () => {
  it('describes the annualised funding rate as the simple scale it is', () => {
    const text = descriptionAt(toJsonSchema(DerivativesResponse), [
      'assets',
      '*',
      'funding',
      'annualised_pct',
    ]);
    expect(text).not.toMatch(/compounded simply/);
    expect(text).toMatch(/3 x 365 .*not compounded/);
  });

  it('describes high correlation without advice', () => {
    // Seven identical paths: correlation 1, the `high` band.
    const free = freeOf(fixtureSnapshot(SEVEN.map((s) => fixtureAsset(s, uptrend(100, 1)))));
    expect(free.marketRegime.regime.correlation.level).toBe('high');
    const line = free.marketRegime.regime.evidence.find((l) => l.startsWith('Average pairwise correlation'));
    expect(line).toMatch(/moving closely together/);
    expect(line).not.toMatch(/diversif/);
  });

  it('gives the paid regime and main brain the notice the atlas gives simulated and replayed data', () => {
    for (const [mode, label] of [
      ['simulated', 'SIMULATED DATA. '],
      ['replay', 'REPLAYED DATA. '],
    ] as const) {
      const { free, paid } = bodiesOf(fixtureSnapshot(universe(uptrend, { mode }), { mode }));
      const truth = free.marketRegime.truth_statement!;
      expect(paid.atlas.limitations[0]).toBe(truth);
      expect(paid.paidMarketRegime.summary!.startsWith(label)).toBe(true);
      expect(paid.paidMarketRegime.limitations[0]).toBe(truth);
      expect(paid.paidMainBrain.summary.startsWith(label)).toBe(true);
      expect(paid.paidMainBrain.limitations[0]).toBe(truth);
    }
    const live = bodiesOf(fixtureSnapshot(universe(uptrend, { mode: 'live' }), { mode: 'live' })).paid;
    expect(live.paidMarketRegime.summary).not.toMatch(/DATA\./);
    expect(live.paidMainBrain.limitations).toEqual([]);
  });
});
