// The words for a move's size and the lean of a flat price follow a written rule (MOVE_RULE, published in the main
// brain's `method`): a price that moved less than 1 % in 48 hours, its 20-hour average within 1 % of its 50-hour
// one, reads neutral whatever the calm market's volatility-scaled signals say; a move of 10 % or more reads large
// whatever the volatility it came with (a crash raises the volatility that scales it).
import { describe, expect, it } from 'vitest';
import { analyzeAsset } from '../generator/engines/asset-analysis.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { MOVE_RULE } from '../generator/engines/trend.ts';
import { FIXTURE_CLOCK, fixtureAsset, fixtureSnapshot, pricePath, SEVEN } from './helpers/market-fixtures.ts';

/** Hourly closes: `hours` bars alternating ±`swing` (log) around a steady `drift` per bar. */
const zigzag = (start: number, legs: ReadonlyArray<{ hours: number; drift: number; swing: number }>) => {
  const closes = [start];
  for (const { hours, drift, swing } of legs)
    for (let h = 0; h < hours; h++)
      closes.push(closes[closes.length - 1]! * Math.exp(drift + (h % 2 === 0 ? swing : -swing)));
  return closes;
};
/** Quiet for 200 hours, then a 48-hour move of `movePct` percent in swings of `swing`. */
const moveOf = (movePct: number, swing: number) =>
  zigzag(100, [
    { hours: 192, drift: 0, swing },
    { hours: 48, drift: Math.log(1 + movePct / 100) / 48, swing },
  ]);

const moveWords = (closes: readonly number[]) =>
  analyzeAsset(fixtureAsset('BTC', closes), [], 'simulated').reasonPoints.find((p) =>
    p.startsWith('Price changed'),
  )!;

describe('a flat market reads neutral', () => {
  // Calm random walks: every 48-hour move well under 1 %, yet large against their tiny volatility.
  const calm = SEVEN.map((s, i) =>
    fixtureAsset(s, pricePath(10 + 10 * i, [{ hours: 240, drift: 0, noise: 0.0005 }], i + 1)),
  );

  it('every asset leans neutral and says its price is flat; the main brain and reasoning agree', () => {
    const free = buildFreeSnapshots(fixtureSnapshot(calm), FIXTURE_CLOCK);
    for (const a of calm.map((x) => analyzeAsset(x, [], 'simulated'))) {
      expect(a.bias, a.symbol).toBe('neutral');
      expect(a.trend!.flat, a.symbol).toBe(true);
      expect(moveWords(calm.find((x) => x.symbol === a.symbol)!.candles!.value.map((c) => c.close))).toMatch(
        /, flat \(less than 1% either way\)\.$/,
      );
      expect(free.reasoning[a.symbol]!.reasoning.prediction, a.symbol).toBe('NEUTRAL');
    }
    // Before: 4 of the 7 leaned bullish and 2 bearish, the market `bullish`.
    expect(free.mainBrain.brain.leaning).toEqual({ bullish: 0, bearish: 0, neutral: 7 });
    expect(free.mainBrain.brain.overall_bias).toBe('neutral');
  });

  it('the flat threshold is 1 %: a 0.9 % move is flat, a 1.1 % move is not (and is large for so calm a market)', () => {
    expect(moveWords(moveOf(0.9, 0.0002))).toMatch(
      /^Price changed \+0\.9% .*, flat \(less than 1% either way\)\.$/,
    );
    expect(moveWords(moveOf(1.1, 0.0002))).toMatch(/^Price changed \+1\.1% .*, a large move\.$/);
    const moved = analyzeAsset(fixtureAsset('BTC', moveOf(1.1, 0.0002)), [], 'simulated');
    expect(moved.trend!.flat).toBe(false);
    expect(MOVE_RULE.flatBelowPct).toBe(1);
  });
});

describe('a crash reads as a large move', () => {
  it('a one-hour 33 % drop is large, though it lifts the volatility that scales it', () => {
    const crash = pricePath(
      100,
      [
        { hours: 200, drift: 0, noise: 0.003 },
        { hours: 1, drift: -0.4, noise: 0 },
        { hours: 39, drift: 0, noise: 0.003 },
      ],
      2,
    );
    const a = analyzeAsset(fixtureAsset('BTC', crash), [], 'simulated');
    expect(moveWords(crash)).toMatch(/^Price changed -3\d\.\d% over the last 48 hours, a large move\.$/);
    // Under 2 expected moves of the volatility it lifted: before, worded "a moderate move".
    expect(Math.abs(a.trend!.momentumZ)).toBeLessThan(2);
  });

  it('the large threshold is 10 %: in a volatile market -10.5 % is large, -9.5 % within its usual range', () => {
    expect(moveWords(moveOf(-10.5, 0.03))).toMatch(/^Price changed -10\.5% .*, a large move\.$/);
    expect(moveWords(moveOf(-9.5, 0.03))).toMatch(
      /^Price changed -9\.5% .*, within its usual range for its recent volatility\.$/,
    );
    expect(MOVE_RULE.largeFromPct).toBe(10);
  });

  it('the thresholds are published in the main brain’s method', () => {
    const method = buildFreeSnapshots(fixtureSnapshot([fixtureAsset('BTC', moveOf(0, 0.001))]), FIXTURE_CLOCK)
      .mainBrain.brain.method;
    expect(method).toContain('less than 1% either way over the last 48 hours');
    expect(method).toContain('within 1% of its 50-hour average, is flat');
    expect(method).toContain('its lean is neutral');
    expect(method).toContain('A move of 10% or more either way is worded large');
    expect(method).toContain('large from 2 times the move its recent volatility leads one to expect');
  });
});
