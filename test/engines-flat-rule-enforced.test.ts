// MOVE_RULE, published in the main brain's `method`, says a flat price's "trend, momentum and directional movement
// read no direction". Two readings broke it: the regime's median trend counted a flat asset's 20-hour average above
// its 50-hour one (seven flat assets drifting up read "the typical asset's trend points up"), and the ADX sentence
// named "upward directional movement leading" for a flat price whose steady drift gave a high ADX.
import { describe, expect, it } from 'vitest';
import { analyzeAsset } from '../generator/engines/asset-analysis.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { FIXTURE_CLOCK, fixtureAsset, fixtureSnapshot, pricePath, SEVEN } from './helpers/market-fixtures.ts';

/** A steady rise of 0.01 % an hour with little noise: 0.5 % in 48 hours (flat), ADX high, the averages in order. */
const creeping = (start: number, seed: number) =>
  pricePath(start, [{ hours: 240, drift: 0.0001, noise: 0.00005 }], seed);

describe('a flat price reads no direction everywhere', () => {
  const assets = SEVEN.map((symbol, i) => fixtureAsset(symbol, creeping(10 + 10 * i, i + 1)));
  const analyses = assets.map((asset) => analyzeAsset(asset, [], 'simulated'));

  it('each asset is flat, with its 20-hour average above the 50-hour one and a high ADX', () => {
    for (const a of analyses) {
      expect(a.trend!.flat, a.symbol).toBe(true);
      expect(a.trend!.ema20, a.symbol).toBeGreaterThan(a.trend!.ema50);
      expect(a.trend!.adx, a.symbol).toBeGreaterThanOrEqual(25);
      expect(a.bias, a.symbol).toBe('neutral');
    }
  });

  it('the ADX sentence names no leading direction', () => {
    for (const a of analyses) {
      const adx = a.reasonPoints.find((p) => p.startsWith('ADX reads'));
      expect(adx, a.symbol).toMatch(
        /^ADX reads \d+, but the price is flat: its directional movement reads no direction\.$/,
      );
      expect(a.reasonPoints.join(' '), a.symbol).not.toMatch(/upward|downward/);
    }
  });

  it('the regime’s median trend reads flat, as each asset’s does', () => {
    const regime = buildFreeSnapshots(fixtureSnapshot(assets), FIXTURE_CLOCK).marketRegime;
    expect(regime.regime.trend.median_direction).toBe('flat');
    expect(regime.regime.trend.description).toBe(
      "The typical asset's 20-hour average is close to its 50-hour average.",
    );
    expect(regime.regime.evidence.join(' ')).not.toMatch(/trend points (up|down)/);
  });
});
