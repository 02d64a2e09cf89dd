// Pins published rules of the engines that a mutation audit could change by one line with no test noticing:
// MOVE_RULE's flat price needs both a small 48-hour move and the 20-hour average within 1 % of the 50-hour one;
// positioning confidence counts funding without 30 days of history as weaker, and `crowded_shorts` needs a negative
// rate (schemas/derivatives.ts: "shorts pay"); a section that failed at every venue is counted once (its missing
// section), not again as an issue on data that came in; a tie between bullish and bearish reads neutral; the order
// book leans only when its published imbalance is above 0.2 either way; the move sizes of MOVE_RULE_TEXT and the
// candles a trend part needs to settle (PROVISIONAL_RULE); FUNDING_RULE's marks, bands and z-scores, each "at or
// above" / "at or below" its value, and crowded longs only above the base rate; LIQUIDITY_CONTEXT_RULE's spreads and
// depths at their edges; a replayed run is not labelled simulated; a market context or regime that is not sound
// makes the bodies built on it degraded; the prevailing positioning state and the run-wide data notes; a z-score from
// exactly FUNDING_RULE.minHistory (10) settled rates, a positioning state read from open interest alone when funding
// is missing, and no leverage proxy against a spot volume of 0. These rules are published with the bodies, so the
// code must keep to them.
import { describe, expect, it } from 'vitest';
import { analyzeAsset, type AssetAnalysis } from '../generator/engines/asset-analysis.ts';
import { missingDataNotes, overallBias, prevailingState } from '../generator/engines/aggregate.ts';
import { bookLeanOf } from '../generator/engines/agreement.ts';
import { analyzeSnapshot } from '../generator/engines/analysis.ts';
import { sourceInfo } from '../generator/engines/labels.ts';
import { readLiquidity } from '../generator/engines/liquidity.ts';
import { mainBrainBody } from '../generator/engines/main-brain-body.ts';
import { marketRegimeBody } from '../generator/engines/market-regime-body.ts';
import { readDerivatives, readFunding } from '../generator/engines/positioning.ts';
import { moveSizeOf, readTrend } from '../generator/engines/trend.ts';
import type { AssetMarket, Funding, SourceIssue } from '../generator/market/types.ts';
import { NO_PERFORMANCE_HISTORY } from '../schemas/performance.ts';
import type { DerivativesState } from '../schemas/derivatives.ts';
import {
  candlesFrom,
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  pricePath,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

describe('MOVE_RULE: flat needs the 20-hour average within 1 % of the 50-hour one', () => {
  // A quiet stretch, a 60-hour move of 0.6 % an hour, then 48 quiet hours: the 48-hour move is under 1 %, but the
  // 20-hour average has caught up with the new price while the 50-hour one still lags by about 2 %.
  const afterMove = (drift: number) =>
    pricePath(
      100,
      [
        { hours: 100, drift: 0, noise: 0.0005 },
        { hours: 60, drift, noise: 0.0005 },
        { hours: 48, drift: 0, noise: 0.0005 },
      ],
      3,
    );
  const bare = { fundingRate: null, openInterestChange: null, book: false, liquidations: null } as const;

  for (const [drift, lean] of [
    [0.006, 'bullish'],
    [-0.006, 'bearish'],
  ] as const) {
    it(`a small 48-hour move after a ${lean === 'bullish' ? 'rise' : 'fall'} is not flat and leans ${lean}`, () => {
      const closes = afterMove(drift);
      const trend = readTrend(candlesFrom(closes))!;
      expect(trend.moveSize).toBe('flat');
      expect(Math.abs(trend.ema20 - trend.ema50) / trend.ema50).toBeGreaterThan(0.01);
      expect(trend.flat).toBe(false);
      expect(analyzeAsset(fixtureAsset('BTC', closes, bare), [], 'simulated').bias).toBe(lean);
    });
  }
});

describe('funding without 30 days of history is weaker evidence', () => {
  it('the same rate without settled history gives a lower positioning confidence', () => {
    const withHistory = fixtureAsset('BTC', uptrend());
    const withoutHistory = fixtureAsset('BTC', uptrend());
    withoutHistory.funding!.value.history8h = [];
    const full = readDerivatives(withHistory, 0.01, 1e6);
    const short = readDerivatives(withoutHistory, 0.01, 1e6);
    expect(full.funding!.z).not.toBeNull();
    expect(short.funding!.z).toBeNull();
    expect(full.funding!.level).toBe('normal');
    expect(short.funding!.level).toBe('normal');
    expect(full.confidence).toBe(95);
    expect(short.confidence).toBe(85);
  });

  it('funding alone: 18 with history, 15 without', () => {
    const bare = { openInterestChange: null, liquidations: null } as const;
    const withHistory = fixtureAsset('BTC', uptrend(), bare);
    const withoutHistory = fixtureAsset('BTC', uptrend(), bare);
    withoutHistory.funding!.value.history8h = [];
    expect(readDerivatives(withHistory, 0.01, 1e6).confidence).toBe(18);
    expect(readDerivatives(withoutHistory, 0.01, 1e6).confidence).toBe(15);
  });
});

describe('crowded shorts need a negative rate', () => {
  it('a rate of 0 far below its history is extreme_low, but no one pays to stay short', () => {
    const reading = readFunding(
      {
        rate8h: 0,
        rateKind: 'predicted',
        intervalHours: 8,
        markPrice: null,
        indexPrice: null,
        history8h: Array.from({ length: 90 }, () => 0.0001),
      },
      'binance-usdm',
    );
    expect(reading.z).toBe(-10);
    expect(reading.level).toBe('extreme_low');
    expect(reading.levelBasis).toBe('history');
    expect(reading.crowding).toBe('none');
  });

  it('a negative rate far below its history is crowded short', () => {
    const reading = readFunding(
      {
        rate8h: -0.00001,
        rateKind: 'predicted',
        intervalHours: 8,
        markPrice: null,
        indexPrice: null,
        history8h: Array.from({ length: 90 }, () => 0.0001),
      },
      'binance-usdm',
    );
    expect(reading.level).toBe('extreme_low');
    expect(reading.crowding).toBe('crowded_shorts');
  });
});

describe('a section that failed at every venue is counted once', () => {
  it('funding missing with its issue has the same confidence as funding missing alone', () => {
    const issue: SourceIssue = {
      venue: 'binance-usdm',
      symbol: 'BTC',
      section: 'funding',
      message: 'HTTP 451',
    };
    const asset = fixtureAsset('BTC', uptrend(), { fundingRate: null });
    const alone = analyzeAsset(asset, [], 'simulated');
    const withIssue = analyzeAsset(asset, [issue], 'simulated');
    expect(alone.confidence).toBeGreaterThan(0);
    expect(withIssue.confidence).toBe(alone.confidence);
    // The issue is still reported.
    expect(withIssue.limitations).toContain('BTC: Data issue at binance-usdm (funding): HTTP 451');
  });
});

describe('overall bias', () => {
  it('a tie between bullish and bearish reads neutral, even with fewer neutral assets', () => {
    expect(overallBias({ bullish: 3, bearish: 3, neutral: 1 })).toBe('neutral');
    expect(overallBias({ bullish: 4, bearish: 3, neutral: 1 })).toBe('bullish');
  });
});

describe('the order book leans only above 0.2 either way, read at the published 3 decimals', () => {
  it.each([
    [0.2, 'neutral'],
    [0.2004, 'neutral'],
    [0.2006, 'bullish'],
    [-0.2, 'neutral'],
    [-0.2004, 'neutral'],
    [-0.2006, 'bearish'],
  ] as const)('book imbalance %s leans %s', (imbalance, lean) => {
    expect(bookLeanOf(imbalance)).toBe(lean);
  });
});

describe('MOVE_RULE: move sizes at their edges', () => {
  it.each([
    [0.01, 0, 'usual'],
    [0.1, 0, 'large'],
    [-0.1, 0, 'large'],
    [0.02, 2, 'large'],
    [0.02, -2, 'large'],
    [0.02, 1, 'moderate'],
    [0.02, -1, 'moderate'],
    [0.02, 0.99, 'usual'],
    [0.0099, 5, 'flat'],
  ] as const)('a move of %s with z %s is %s', (move, z, size) => {
    expect(moveSizeOf(move, z)).toBe(size);
  });
});

describe('PROVISIONAL_RULE: the 50-hour average settles at 125 hourly candles', () => {
  const closes = uptrend();
  it('125 candles: the average is settled; 124: it is still provisional', () => {
    expect(readTrend(candlesFrom(closes.slice(-125)))!.unsettled).not.toContain('ema');
    expect(readTrend(candlesFrom(closes.slice(-124)))!.unsettled).toContain('ema');
  });
});

describe('FUNDING_RULE: each mark, band and z-score applies at its value', () => {
  const funding = (rate8h: number, history8h: number[] = []): Funding => ({
    rate8h,
    rateKind: 'predicted',
    intervalHours: 8,
    markPrice: null,
    indexPrice: null,
    history8h,
  });
  // 90 equal settled rates: the spread is the floor of 0.001 % per 8 h, so z = (rate - 0.01 %) / 0.001 %.
  const flatHistory = Array.from({ length: 90 }, () => 0.0001);
  const read = (rate8h: number, history8h?: number[]) =>
    readFunding(funding(rate8h, history8h), 'binance-usdm');

  it('a rate of exactly +0.1 % per 8 h is extreme_high by the fixed mark', () => {
    expect(read(0.001)).toMatchObject({ level: 'extreme_high', levelBasis: 'fixed_mark' });
  });

  it('a rate of exactly -0.05 % per 8 h is extreme_low by the fixed mark', () => {
    expect(read(-0.0005)).toMatchObject({ level: 'extreme_low', levelBasis: 'fixed_mark' });
  });

  it('without history, exactly +0.03 % is high and exactly -0.01 % is low by the fixed bands', () => {
    expect(read(0.0003)).toMatchObject({ level: 'high', levelBasis: 'fixed_band', z: null });
    expect(read(-0.0001)).toMatchObject({ level: 'low', levelBasis: 'fixed_band', z: null });
  });

  it.each([
    [0.000125, 2.5, 'extreme_high'],
    [0.000115, 1.5, 'high'],
    [0.000085, -1.5, 'low'],
    [0.000075, -2.5, 'extreme_low'],
  ] as const)('a rate of %s per 8 h is z %s against its history: %s', (rate, z, level) => {
    const reading = read(rate, flatHistory);
    expect(reading.z).toBeCloseTo(z, 6);
    expect(reading).toMatchObject({ level, levelBasis: 'history' });
  });

  it('extreme_high at exactly the 0.01 % base rate is no crowding; above it, crowded longs', () => {
    const lowHistory = Array.from({ length: 90 }, () => 0.00005);
    const atBase = read(0.0001, lowHistory);
    expect(atBase).toMatchObject({ level: 'extreme_high', levelBasis: 'history', crowding: 'none' });
    expect(read(0.00011, lowHistory)).toMatchObject({ level: 'extreme_high', crowding: 'crowded_longs' });
  });
});

describe('LIQUIDITY_CONTEXT_RULE at its edges (spreads and depths as published)', () => {
  // A book of one level a side around a mid of 10 000: the spread in bps and the USD depth of each side as given.
  const withBook = (spreadBps: number, depthUsd: number): AssetMarket => {
    const asset = fixtureAsset('BTC', uptrend());
    const bid = 10_000 * (1 - spreadBps / 20_000);
    const ask = 10_000 * (1 + spreadBps / 20_000);
    const book = { bids: [[bid, depthUsd / bid]], asks: [[ask, depthUsd / ask]] } as {
      bids: Array<[number, number]>;
      asks: Array<[number, number]>;
    };
    return { ...asset, book: { value: book, provenance: asset.book!.provenance } };
  };
  const context = (spreadBps: number, depthUsd: number) =>
    readLiquidity(withBook(spreadBps, depthUsd)).context;

  it('a spread of exactly 25 bps with 200 000 USD a side is moderate, not thin', () => {
    expect(readLiquidity(withBook(25, 200_000)).spreadBps).toBeCloseTo(25, 9);
    expect(context(25, 200_000)).toBe('moderate');
    expect(context(25.02, 200_000)).toBe('thin');
  });

  it('exactly 100 000 USD a side is not thin', () => {
    expect(context(2, 100_000)).toBe('moderate');
    expect(context(2, 99_999)).toBe('thin');
  });

  it('a spread of exactly 5 bps with 1 000 000 USD a side is deep', () => {
    expect(context(5, 1_000_000)).toBe('deep');
    expect(context(5.02, 1_000_000)).toBe('moderate');
  });

  it('exactly 1 000 000 USD a side with 2 bps is deep', () => {
    expect(context(2, 1_000_000)).toBe('deep');
    expect(context(2, 999_999)).toBe('moderate');
  });
});

describe('a replayed run is labelled as replayed, not simulated', () => {
  it('sourceInfo of a replay says simulated false and seed null', () => {
    const replay = fixtureSnapshot([], { mode: 'replay', seed: 7 });
    const info = sourceInfo(replay, [], FIXTURE_CLOCK, false);
    expect(info.mode).toBe('replay');
    expect(info.simulated).toBe(false);
    expect(info.seed).toBeNull();
    const simulated = sourceInfo(fixtureSnapshot([], { seed: 7 }), [], FIXTURE_CLOCK, false);
    expect(simulated).toMatchObject({ simulated: true, seed: 7 });
  });
});

describe('a body built on an unsound market context is degraded', () => {
  const sound = () => analyzeSnapshot(fixtureSnapshot(universe(uptrend)));
  const performance = { ...NO_PERFORMANCE_HISTORY };

  it('the fixture is sound: no asset and no regime degraded', () => {
    const analysis = sound();
    expect(analysis.assets.some((a) => a.degraded)).toBe(false);
    expect(analysis.regime.degraded).toBe(false);
    expect(mainBrainBody(analysis, FIXTURE_CLOCK, performance).source.degraded).toBe(false);
    expect(marketRegimeBody(analysis, FIXTURE_CLOCK).source.degraded).toBe(false);
  });

  it('an UNKNOWN regime makes the market-regime body degraded', () => {
    const analysis = sound();
    analysis.regime = { ...analysis.regime, mode: 'UNKNOWN', degraded: false };
    const body = marketRegimeBody(analysis, FIXTURE_CLOCK);
    expect(body.source.degraded).toBe(true);
    expect(body.status).toBe('degraded');
  });

  it('sound assets with a partial regime make the main brain degraded', () => {
    const analysis = sound();
    analysis.regime = { ...analysis.regime, degraded: true, limitations: ['Volatility: history too short.'] };
    const body = mainBrainBody(analysis, FIXTURE_CLOCK, performance);
    expect(body.source.degraded).toBe(true);
    expect(body.status).toBe('degraded');
  });
});

describe('prevailing positioning state', () => {
  const withStates = (...states: DerivativesState[]): AssetAnalysis[] =>
    states.map((state) => ({ derivatives: { state } }) as unknown as AssetAnalysis);

  it('a tie at the top is mixed', () => {
    expect(prevailingState(withStates('new_longs', 'deleveraging'))).toBe('mixed');
  });

  it('unavailable assets are not counted: two unavailable and one balanced read balanced', () => {
    expect(prevailingState(withStates('unavailable', 'unavailable', 'balanced'))).toBe('balanced');
    expect(prevailingState(withStates('unavailable', 'unavailable'))).toBeNull();
  });
});

describe('run-wide data notes list only issues of no asset', () => {
  it("an asset's issue is not a run-wide note; an issue of the whole run is", () => {
    const issues: SourceIssue[] = [
      { venue: 'binance-usdm', symbol: 'BTC', section: 'funding', message: 'HTTP 451' },
      { venue: 'okx', symbol: null, section: 'all', message: 'HTTP 503' },
    ];
    const snapshot = fixtureSnapshot(universe(uptrend), { issues });
    expect(missingDataNotes(snapshot, ['funding'])).toEqual(['Data issue at okx (all): HTTP 503']);
  });
});

describe('the positioning lean at the edge of its dead band (±0.15 votes neutral)', () => {
  // Open interest's lean plus crowding's: in binary -0.25 + 0.4 is 0.15000000000000002, which voted bullish.
  it('deleveraging (-0.25) with crowded shorts (+0.4) is a lean of 0.15 and votes neutral', () => {
    const asset = fixtureAsset('BTC', uptrend(), { fundingRate: -0.0002, openInterestChange: -0.05 });
    const reading = readDerivatives(asset, -0.05, 1e6);
    expect([reading.openInterest?.reading, reading.funding?.crowding]).toEqual([
      'deleveraging',
      'crowded_shorts',
    ]);
    expect(reading.lean).toBe(0.15);
    expect(reading.vote).toBe('neutral');
  });

  it('short covering (+0.25) with crowded longs (-0.4) is a lean of -0.15 and votes neutral', () => {
    const asset = fixtureAsset('BTC', uptrend(), { fundingRate: 0.0012, openInterestChange: -0.05 });
    const reading = readDerivatives(asset, 0.05, 1e6);
    expect([reading.openInterest?.reading, reading.funding?.crowding]).toEqual([
      'short_covering',
      'crowded_longs',
    ]);
    expect(reading.lean).toBe(-0.15);
    expect(reading.vote).toBe('neutral');
  });
});

describe('positioning: the funding history bound, a reading without funding, no spot volume', () => {
  const funding = (history8h: number[]): Funding => ({
    rate8h: 0.0001,
    rateKind: 'predicted',
    intervalHours: 8,
    markPrice: null,
    indexPrice: null,
    history8h,
  });
  const rates = (n: number) => Array.from({ length: n }, () => 0.0001);

  it('exactly 10 settled rates (FUNDING_RULE.minHistory) give a z-score; 9 do not', () => {
    expect(readFunding(funding(rates(10)), 'binance-usdm')).toMatchObject({ z: 0, levelBasis: 'history' });
    expect(readFunding(funding(rates(9)), 'binance-usdm')).toMatchObject({
      z: null,
      levelBasis: 'fixed_band',
    });
  });

  it('no funding but a 24-hour open-interest reading: the state is the reading, not unavailable', () => {
    const asset = fixtureAsset('BTC', uptrend(), { fundingRate: null, openInterestChange: 0.05 });
    const reading = readDerivatives(asset, 0.05, 1e6);
    expect(reading.funding).toBeNull();
    expect(reading.openInterest?.reading).toBe('new_longs');
    expect(reading.state).toBe('new_longs');
    expect(reading.vote).toBe('bullish');
  });

  it('a spot volume of 0 USD gives no leverage proxy (never Infinity); 1 000 000 USD gives 50', () => {
    const asset = fixtureAsset('BTC', uptrend());
    const none = readDerivatives(asset, 0.01, 0);
    expect(none.openInterest?.leverageProxy).toBeNull();
    expect(none.openInterest?.volumeVenue).toBeNull();
    expect(none.evidence.join(' ')).not.toContain('times the day');
    // The fixture's open interest is 50 000 000 USD.
    expect(readDerivatives(asset, 0.01, 1e6).openInterest?.leverageProxy).toBe(50);
  });
});
