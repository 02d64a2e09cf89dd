// A short history is weaker evidence, not none: an asset's confidence grades with the candles it has, from 0 at
// the first trend reading (60 candles) up to the reading of a settled history (169), never above what a longer
// history of the same market gives, with the provisional parts still named and the rule published in the main
// brain's `method`.
import { describe, expect, it } from 'vitest';
import { analyzeAsset } from '../generator/engines/asset-analysis.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import {
  MIN_TREND_CANDLES,
  MOMENTUM_SETTLED_CANDLES,
  provisionalRange,
  unsettledShare,
} from '../generator/engines/trend.ts';
import { FIXTURE_CLOCK, fixtureAsset, fixtureSnapshot, pricePath } from './helpers/market-fixtures.ts';

/** 500 hours of one market: its last `n` candles are the same market with less of its history. */
const PATHS = {
  up: pricePath(100, [{ hours: 500, drift: 0.002, noise: 0.004 }], 3),
  down: pricePath(100, [{ hours: 500, drift: -0.002, noise: 0.004 }], 3),
  turn: pricePath(
    100,
    [
      { hours: 420, drift: 0.0015, noise: 0.004 },
      { hours: 80, drift: -0.002, noise: 0.004 },
    ],
    5,
  ),
} as const;
const COUNTS = Array.from({ length: 500 - MIN_TREND_CANDLES + 1 }, (_, i) => MIN_TREND_CANDLES + i);

const readingOf = (closes: readonly number[], n: number) =>
  analyzeAsset(fixtureAsset('BTC', closes.slice(-n)), [], 'simulated');

describe('the margin a provisional part is counted with', () => {
  it('is the whole range at the first trend reading, narrows with every candle, and is nothing once settled', () => {
    for (const name of ['ema', 'momentum', 'dmi'] as const) {
      expect(unsettledShare(name, MIN_TREND_CANDLES), name).toBe(1);
      expect(provisionalRange(name, 0.8, MIN_TREND_CANDLES), name).toEqual({ min: -1, max: 1 });
      let previous = Infinity;
      for (const n of COUNTS) {
        const { min, max } = provisionalRange(name, 0.3, n);
        expect(max - min, `${name} at ${n}`).toBeLessThanOrEqual(previous);
        previous = max - min;
      }
      expect(provisionalRange(name, 0.3, MOMENTUM_SETTLED_CANDLES), name).toEqual({ min: 0.3, max: 0.3 });
    }
  });
});

describe('an asset’s confidence with fewer candles', () => {
  it('grades with the candles instead of jumping at 169: a strong trend has most of its confidence by 140', () => {
    for (const [name, closes] of Object.entries(PATHS).filter(([n]) => n !== 'turn')) {
      const at = (n: number) => readingOf(closes, n).confidence!;
      // Before: 0 below 125, 11 from 125 to 168, then 95 at 169.
      expect(at(MOMENTUM_SETTLED_CANDLES), name).toBe(95);
      expect(at(140), name).toBeGreaterThanOrEqual(at(MOMENTUM_SETTLED_CANDLES) / 2);
      expect(at(110), name).toBeGreaterThan(at(90));
      expect(at(MIN_TREND_CANDLES), name).toBe(0);
    }
  });

  it('rises monotonically with the candles of a steady trend and never exceeds the full history’s', () => {
    for (const [name, closes] of Object.entries(PATHS)) {
      const full = readingOf(closes, 500).confidence!;
      const series = COUNTS.map((n) => readingOf(closes, n).confidence!);
      const above = series.flatMap((c, i) => (c > full ? [`${COUNTS[i]}: ${c} > ${full}`] : []));
      expect(above, name).toEqual([]);
      if (name === 'turn') continue; // the market itself changes over its last 80 hours
      const falls = series.flatMap((c, i) =>
        i > 0 && c < series[i - 1]! ? [`${COUNTS[i - 1]}: ${series[i - 1]} -> ${COUNTS[i]}: ${c}`] : [],
      );
      expect(falls, name).toEqual([]);
    }
  });

  it('keeps naming the provisional parts and marking the asset partial below 169 candles', () => {
    for (const n of [62, 100, 140, 168]) {
      const a = readingOf(PATHS.up, n);
      expect(a.dataStatus, `${n}`).toBe('partial');
      expect(a.gaps.join(' '), `${n}`).toMatch(
        new RegExp(
          `only ${n} hourly candles, fewer than the trend reading needs to settle .*it is provisional`,
        ),
      );
    }
    expect(readingOf(PATHS.up, MOMENTUM_SETTLED_CANDLES).gaps).toEqual([]);
  });

  it('is published: the main brain’s method states the rule with the counts the engine uses', () => {
    const free = buildFreeSnapshots(fixtureSnapshot([fixtureAsset('BTC', PATHS.up)]), FIXTURE_CLOCK);
    const method = free.mainBrain.brain.method;
    for (const words of [
      '125 hourly candles for the 50-hour average',
      '70 for ADX',
      '169 for the week of volatility',
      `the first trend reading (${MIN_TREND_CANDLES} candles)`,
      'narrows with each further candle',
    ])
      expect(method).toContain(words);
  });
});
