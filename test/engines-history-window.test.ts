// Every reading has a window of its own and an older candle never changes it: each trend part reads only the last
// candles it needs to settle (PROVISIONAL_RULE), the volatility percentile ranks 20 days (REGIME_RULE), relative
// volume reads 20 days of 24-hour blocks. So a venue that sends 500 hourly candles and one that sends 169 publish the same trend and confidence, and
// cutting a settled history can never raise a confidence (before, 500 -> 200 candles raised one by a point in 5 of
// 280 simulated asset readings, and failed a CI run of the live-candles test on one of them).
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { MOMENTUM_SETTLED_CANDLES, readTrend } from '../generator/engines/trend.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { collectSimulatedMarket } from '../generator/sources/collect.ts';
import { REGIME_RULE } from '../schemas/market-regime.ts';
import { candlesFrom, FIXTURE_CLOCK, HOUR, pricePath, SEVEN } from './helpers/market-fixtures.ts';

/** The snapshot with every asset's candles cut to their last `bars`. */
const cutTo = (snapshot: MarketSnapshot, bars: number): MarketSnapshot => ({
  ...snapshot,
  assets: snapshot.assets.map((a) =>
    a.candles ? { ...a, candles: { ...a.candles, value: a.candles.value.slice(-bars) } } : a,
  ),
});

describe('the trend reading', () => {
  it('reads a 500-candle history exactly as its last 169 candles, whatever came before them', () => {
    // A long fall, then a rise: the old fall must leave no trace in the averages or in ADX.
    const closes = pricePath(
      100,
      [
        { hours: 330, drift: -0.003, noise: 0.006 },
        { hours: 170, drift: 0.002, noise: 0.004 },
      ],
      3,
    );
    const candles = candlesFrom(closes);
    expect(candles.length).toBeGreaterThanOrEqual(500);
    const long = readTrend(candles)!;
    const settled = readTrend(candles.slice(-MOMENTUM_SETTLED_CANDLES))!;
    expect(long.candles).toBe(candles.length);
    expect(settled.candles).toBe(MOMENTUM_SETTLED_CANDLES);
    expect({ ...long, candles: 0 }).toEqual({ ...settled, candles: 0 });
    expect(long.unsettled).toEqual([]);
  });

  it('gives every simulated asset the same bias, confidence and summary from 500, 200 or 169 candles', async () => {
    const changed: string[] = [];
    for (let k = 0; k < 6; k++) {
      // Hours and minutes apart, so the market differs from one reading to the next.
      const asOf = FIXTURE_CLOCK.asOf + k * 7 * HOUR + k * 13 * 60_000;
      const clock = { ...FIXTURE_CLOCK, asOf, generatedAt: asOf, nextUpdateDue: asOf + 60_000 };
      const market = await collectSimulatedMarket({ seed: 7 + k, asOf, symbols: SEVEN, candleLimit: 500 });
      const read = (bars: number) => buildFreeSnapshots(cutTo(market, bars), clock).mainBrain.coins;
      const full = read(500);
      expect(Object.keys(full)).toHaveLength(SEVEN.length);
      for (const bars of [200, MOMENTUM_SETTLED_CANDLES]) {
        const cut = read(bars);
        for (const [symbol, coin] of Object.entries(full)) {
          const other = cut[symbol]!;
          const pick = (c: typeof coin) => ({ bias: c.bias, confidence: c.confidence, summary: c.summary });
          if (JSON.stringify(pick(other)) !== JSON.stringify(pick(coin)))
            changed.push(
              `${symbol} at ${asOf}: 500 -> ${bars} candles ${coin.confidence} -> ${other.confidence}`,
            );
        }
      }
    }
    expect(changed).toEqual([]);
  });
});

describe('a history longer than every window', () => {
  it('publishes every free and paid body exactly as the last 481 candles do (480 hours of returns)', async () => {
    const asOf = FIXTURE_CLOCK.asOf + 5 * HOUR + 17 * 60_000;
    const clock = { ...FIXTURE_CLOCK, asOf, generatedAt: asOf, nextUpdateDue: asOf + 60_000 };
    const market = await collectSimulatedMarket({ seed: 11, asOf, symbols: SEVEN, candleLimit: 900 });
    expect(Math.max(...market.assets.map((a) => a.candles?.value.length ?? 0))).toBe(900);
    const bodiesOf = (bars: number) => {
      const free = buildFreeSnapshots(cutTo(market, bars), clock);
      return { free, paid: buildPaidBodies(free, clock) };
    };
    const rank = REGIME_RULE.volatilityRankHours;
    // Before: the volatility percentile, relative volume and every trend figure moved with the older candles.
    expect(bodiesOf(rank + 1)).toEqual(bodiesOf(900));

    // One candle fewer and the percentile ranks 479 hours: said in the evidence and the limitations.
    const regime = bodiesOf(rank).free.marketRegime.regime;
    expect(regime.volatility.percentile).not.toBeNull();
    expect(regime.evidence).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `at percentile \\d+ of its rolling 24-hour readings over the last ${rank - 1} hours \\(see`,
        ),
      ),
    );
    // The one older reading could lie below the current one or above it: 456 of the 457 are known.
    const bounded = regime.limitations
      .map((l) =>
        new RegExp(
          `^Only ${rank - 1} hours of market returns, so volatility is ranked against them, not the last 20 ` +
            'days: the full window could put its percentile anywhere from (\\d+) to (\\d+)\\.$',
        ).exec(l),
      )
      .find((m) => m !== null);
    expect(bounded, regime.limitations.join(' | ')).toBeDefined();
    const [lo, hi] = [Number(bounded![1]), Number(bounded![2])];
    expect(hi - lo).toBeLessThanOrEqual(1);
    expect(lo).toBeLessThanOrEqual(regime.volatility.percentile!);
    expect(hi).toBeGreaterThanOrEqual(regime.volatility.percentile! - 1);
    expect(bodiesOf(rank).free.marketRegime.status).toBe('degraded');
    const full = bodiesOf(900).free.marketRegime.regime;
    expect(full.evidence.join(' ')).toMatch(
      /at percentile \d+ of its rolling 24-hour readings over the last 20 days\./,
    );
    expect(full.limitations.join(' ')).not.toMatch(/volatility is ranked against/);
  });
});

describe('the market regime with fewer candles', () => {
  it('never reads more confident from a shorter history of the same market', async () => {
    const cuts = [500, 481, 300, 200, 169, 150, 100, 72];
    const risen: string[] = [];
    for (let k = 0; k < 8; k++) {
      const asOf = FIXTURE_CLOCK.asOf + k * 11 * HOUR + (k % 17) * 60_000;
      const clock = { ...FIXTURE_CLOCK, asOf, generatedAt: asOf, nextUpdateDue: asOf + 60_000 };
      const market = await collectSimulatedMarket({
        seed: 7 + (k % 3),
        asOf,
        symbols: SEVEN,
        candleLimit: 500,
      });
      const confidence = cuts.map(
        (bars) => buildFreeSnapshots(cutTo(market, bars), clock).marketRegime.confidence,
      );
      for (let i = 1; i < cuts.length; i++)
        if (confidence[i]! > confidence[i - 1]!)
          risen.push(`${asOf}: ${cuts[i - 1]} candles ${confidence[i - 1]} -> ${cuts[i]} ${confidence[i]}`);
    }
    // Before: 36 rises in 30 such markets (e.g. 300 candles 58 -> 200 candles 64): a shorter window ranked
    // volatility against less history and nothing counted what the longer one could have said.
    expect(risen).toEqual([]);
  });
});
