// Pins published rules of the engines that a mutation audit could change by one line with no test noticing:
// MOVE_RULE's flat price needs both a small 48-hour move and the 20-hour average within 1 % of the 50-hour one;
// positioning confidence counts funding without 30 days of history as weaker, and `crowded_shorts` needs a negative
// rate (schemas/derivatives.ts: "shorts pay"); a section that failed at every venue is counted once (its missing
// section), not again as an issue on data that came in; a tie between bullish and bearish reads neutral; the order
// book leans only when its published imbalance is above 0.2 either way. These rules are published with the bodies,
// so the code must keep to them.
import { describe, expect, it } from 'vitest';
import { analyzeAsset } from '../generator/engines/asset-analysis.ts';
import { overallBias } from '../generator/engines/aggregate.ts';
import { bookLeanOf } from '../generator/engines/agreement.ts';
import { readDerivatives, readFunding } from '../generator/engines/positioning.ts';
import { readTrend } from '../generator/engines/trend.ts';
import type { SourceIssue } from '../generator/market/types.ts';
import { candlesFrom, fixtureAsset, pricePath, uptrend } from './helpers/market-fixtures.ts';

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
