import { describe, expect, it } from 'vitest';
import { emaSeries, mad, median, percentileRank, correlation } from '../generator/engines/math.ts';
import { directionalMovement, readTrend } from '../generator/engines/trend.ts';
import {
  corwinSchultzBps,
  marketStructure,
  readBook,
  relativeVolume,
} from '../generator/engines/liquidity.ts';
import { oiReading, readDerivatives, readFunding } from '../generator/engines/positioning.ts';
import { marketReturns } from '../generator/engines/regime.ts';
import { venueLabel } from '../generator/engines/labels.ts';
import {
  candlesFrom,
  downtrend,
  fixtureAsset,
  pricePath,
  seededRandom,
  uptrend,
} from './helpers/market-fixtures.ts';

describe('math', () => {
  it('seeds the EMA with the simple average and then follows the recursion', () => {
    const e = emaSeries([1, 2, 3, 4], 3);
    expect(e[0]).toBe(2);
    expect(e[1]).toBeCloseTo(4 * 0.5 + 2 * 0.5);
  });

  it('median and MAD resist an outlier', () => {
    expect(median([1, 2, 3, 100])).toBe(2.5);
    expect(mad([1, 2, 3, 4, 1000])).toBe(1);
  });

  it('percentile rank counts ties as half', () => {
    expect(percentileRank([1, 2, 3, 4], 3)).toBe(62.5);
    expect(percentileRank([], 3)).toBeNull();
  });

  it('correlation of a series with its mirror is -1', () => {
    expect(correlation([1, 2, 3, 5], [-1, -2, -3, -5])).toBeCloseTo(-1);
    expect(correlation([1, 1, 1], [1, 2, 3])).toBeNull();
  });
});

describe('trend', () => {
  it('reads an uptrend as positive and a downtrend as negative on every signal', () => {
    const up = readTrend(candlesFrom(uptrend()))!;
    const down = readTrend(candlesFrom(downtrend()))!;
    for (const s of Object.values(up.signals)) expect(s).toBeGreaterThan(0.5);
    for (const s of Object.values(down.signals)) expect(s).toBeLessThan(-0.5);
    expect(up.close).toBeGreaterThan(up.ema50);
  });

  it('finds no trend (ADX < 20) in pure noise', () => {
    // Independent draws around a fixed level (not a random walk, which can wander into a trend).
    const rand = seededRandom(7);
    const flat = Array.from({ length: 240 }, () => 100 * Math.exp(0.01 * (2 * rand() - 1)));
    expect(directionalMovement(candlesFrom(flat))!.adx).toBeLessThan(20);
    expect(directionalMovement(candlesFrom(uptrend()))!.adx).toBeGreaterThan(25);
  });

  it('declines to read fewer than 60 candles', () => {
    expect(readTrend(candlesFrom(uptrend().slice(0, 40)))).toBeNull();
  });
});

describe('liquidity', () => {
  it('measures spread, depth within 1% and imbalance from a book', () => {
    const book = {
      bids: [
        [99.9, 10],
        [99.5, 10],
        [98, 1000], // outside the 1 % band: ignored
      ] as Array<[number, number]>,
      asks: [[100.1, 5]] as Array<[number, number]>,
    };
    const r = readBook(book)!;
    expect(r.spreadBps).toBeCloseTo(20, 5);
    expect(r.bidDepthUsd).toBeCloseTo(999 + 995);
    expect(r.askDepthUsd).toBeCloseTo(500.5);
    expect(r.imbalance!).toBeGreaterThan(0.5);
    expect(readBook({ bids: [[101, 1]], asks: [[100, 1]] })).toBeNull(); // crossed book
  });

  it('the Corwin-Schultz estimate grows with the bid-ask bounce', () => {
    const closes = pricePath(100, [{ hours: 60, drift: 0, noise: 0.0005 }], 3);
    const tight = candlesFrom(closes);
    const wide = tight.map((c) => ({ ...c, high: c.high * 1.004, low: c.low * 0.996 }));
    expect(corwinSchultzBps(wide)!).toBeGreaterThan(corwinSchultzBps(tight)!);
  });

  it('relative volume compares the last day with the usual day', () => {
    const candles = candlesFrom(Array.from({ length: 120 }, () => 10));
    candles.slice(-24).forEach((c) => (c.volumeBase = 3000));
    expect(relativeVolume(candles)).toBeCloseTo(3);
    expect(relativeVolume(candles.slice(-48))).toBeNull(); // fewer than three earlier days
  });

  it('reads market structure from swing pivots', () => {
    const zigzag = (step: number) =>
      Array.from({ length: 120 }, (_, i) => 100 + step * i + 5 * Math.sin((2 * Math.PI * i) / 20));
    expect(marketStructure(candlesFrom(zigzag(0.2)))).toBe('higher_highs_higher_lows');
    expect(marketStructure(candlesFrom(zigzag(-0.2)))).toBe('lower_highs_lower_lows');
    expect(marketStructure(candlesFrom(zigzag(0)))).toBe('range');
  });
});

describe('positioning', () => {
  it('gives the four readings of open interest against price', () => {
    expect(oiReading(0.05, 0.02)).toBe('new_longs');
    expect(oiReading(-0.05, 0.02)).toBe('short_covering');
    expect(oiReading(0.05, -0.02)).toBe('new_shorts');
    expect(oiReading(-0.05, -0.02)).toBe('deleveraging');
    expect(oiReading(0.01, 0.05)).toBe('flat');
  });

  it('reads the same positioning, vote and confidence for a price a hair up or a hair down', () => {
    const asset = fixtureAsset('BTC', uptrend(100, 1), { openInterestChange: 0.06 });
    const [up, down] = [0.001, -0.001].map((change) => readDerivatives(asset, change, 1e9));
    expect(up!.openInterest?.reading).toBe('new_positions');
    expect(up!.state).toBe('balanced');
    expect({ ...down, evidence: [] }).toEqual({ ...up, evidence: [], openInterest: down!.openInterest });
    expect(up!.evidence.join(' ')).toMatch(
      /price changed \+0\.10%: positions opened with the price too flat/,
    );
    // Outside the band the side is named again, and the lean moves with it.
    const rising = readDerivatives(asset, 0.03, 1e9);
    expect(rising.state).toBe('new_longs');
    expect(rising.lean).toBeGreaterThan(up!.lean);
  });

  it('annualises 8-hour funding and scores it against its history', () => {
    const history = Array.from({ length: 90 }, (_, i) => 0.0001 + (i % 3) * 0.00001);
    const base = {
      rate8h: 0.0001,
      rateKind: 'predicted' as const,
      intervalHours: 8,
      markPrice: 101,
      indexPrice: 100,
      history8h: history,
    };
    const calm = readFunding(base, 'v');
    expect(calm.annualised).toBeCloseTo(0.1095);
    expect(calm.level).toBe('normal');
    expect(calm.crowding).toBe('none');
    expect(calm.basis).toBeCloseTo(0.01);
    const hot = readFunding({ ...base, rate8h: 0.0006 }, 'v');
    expect(hot.z!).toBeGreaterThan(2.5);
    expect(hot.crowding).toBe('crowded_longs');
    expect(readFunding({ ...base, rate8h: -0.0006 }, 'v').crowding).toBe('crowded_shorts');
    const young = readFunding({ ...base, history8h: [0.0001] }, 'v');
    expect(young.z).toBeNull();
    expect(readFunding({ ...base, markPrice: null }, 'v').basis).toBeNull();
  });
});

describe('regime helpers', () => {
  it('averages returns across assets from the latest bar backwards', () => {
    const a = candlesFrom([100, 110, 121]);
    const b = candlesFrom([50, 50]);
    const r = marketReturns([a, b]);
    expect(r).toHaveLength(2);
    expect(r[1]).toBeCloseTo(Math.log(1.1) / 2);
    expect(r[0]).toBeCloseTo(Math.log(1.1));
  });

  it('labels venues honestly', () => {
    expect(venueLabel('sim:binance-spot', 'simulated')).toBe('binance-spot (simulated)');
    expect(venueLabel('binance-spot', 'replay')).toBe('binance-spot (replayed)');
    expect(venueLabel('binance-spot', 'live')).toBe('binance-spot');
  });
});
