// The engines read hourly windows by time, not by position from the end of each series: a venue may deliver its
// last hourly bar an hour late (the freshness check allows it), and a bar may be missing inside a series. Read by
// position, two assets with the very same prices, one a bar behind, correlated at -0.03 ("low") and the market's
// volatility fell by a third, with no limitation; and a missing bar stretched an asset's "last 48 hours" and its
// 24-hour change by an hour. Found by recomputing the published figures with independent libraries
// (technicalindicators, trading-signals) on the same candles.
import { describe, expect, it } from 'vitest';
import { analyzeAsset } from '../generator/engines/asset-analysis.ts';
import { analyzeRegime, marketReturns } from '../generator/engines/regime.ts';
import { readTrend } from '../generator/engines/trend.ts';
import type { AssetMarket, Candle } from '../generator/market/types.ts';
import { candlesFrom, completePath, fixtureAsset, HOUR, SEVEN } from './helpers/market-fixtures.ts';

const regimeOf = (assets: AssetMarket[]) =>
  analyzeRegime(
    assets,
    assets.map((a) => analyzeAsset(a, [], 'simulated')),
  );

/** The asset with its candles replaced (same provenance). */
const withCandles = (asset: AssetMarket, value: Candle[]): AssetMarket => ({
  ...asset,
  candles: { ...asset.candles!, value },
});

const closes = completePath(100, [{ hours: 600, drift: 0.0005, noise: 0.01 }], 3);
const btc = fixtureAsset('BTC', closes);
const twin = (symbol: string) => fixtureAsset(symbol, closes);

describe('the market regime reads returns by hour', () => {
  it('two assets with the same prices correlate at 1 when one of them is a bar behind', () => {
    const behind = withCandles(twin('ETH'), btc.candles!.value.slice(0, -1));
    const late = regimeOf([btc, behind]);
    expect(late.correlation.average).toBe(1);
    expect(late.correlation.level).toBe('high');
    // The same readings as two assets whose histories both end at the earlier hour.
    const both = regimeOf([withCandles(btc, btc.candles!.value.slice(0, -1)), behind]);
    expect(late.volatility).toEqual(both.volatility);
    expect(late.correlation).toEqual(both.correlation);
  });

  it('names the later candles left out of the market readings, and the hour the readings end with', () => {
    const behind = withCandles(twin('ETH'), btc.candles!.value.slice(0, -1));
    const lastShared = behind.candles!.value.at(-1)!.openTime;
    const { limitations } = regimeOf([btc, behind]);
    const line = limitations.find((l) => l.startsWith('Market volatility and correlation end'));
    expect(line).toBe(
      `Market volatility and correlation end with the hour that opened at ${new Date(lastShared)
        .toISOString()
        .slice(0, 16)
        .replace(
          'T',
          ' ',
        )} UTC, the latest every asset's candles reach: the later candles of BTC are left out of them.`,
    );
    // Histories that end together need no such line.
    expect(regimeOf([btc, twin('ETH')]).limitations.join(' ')).not.toMatch(/later candles/);
  });

  it('a bar missing inside one series leaves that hour out of its pairs instead of shifting every older hour', () => {
    const candles = btc.candles!.value;
    const holed = withCandles(twin('ETH'), [...candles.slice(0, -11), ...candles.slice(-10)]);
    expect(regimeOf([btc, holed]).correlation.average).toBe(1);
  });

  it('the market return of an hour averages the assets that have that hour, oldest first', () => {
    const a = candlesFrom([100, 110, 121]);
    // b's bars open an hour after a's: its last (66) is left out, and its 60 pairs with a's 121.
    const b = candlesFrom([50, 60, 66]).map((c) => ({ ...c, openTime: c.openTime + HOUR }));
    const r = marketReturns([a, b]);
    expect(r).toHaveLength(2);
    expect(r[0]).toBeCloseTo(Math.log(1.1));
    expect(r[1]).toBeCloseTo((Math.log(1.1) + Math.log(1.2)) / 2);
  });

  it('seven assets a bar behind but one: the same readings as all seven ending an hour earlier', () => {
    const full = SEVEN.map((symbol, i) =>
      fixtureAsset(symbol, completePath(10 + i, [{ hours: 600, drift: 0.0003, noise: 0.008 }], i + 1)),
    );
    const mixed = full.map((a, i) => (i === 0 ? a : withCandles(a, a.candles!.value.slice(0, -1))));
    const earlier = full.map((a) => withCandles(a, a.candles!.value.slice(0, -1)));
    const [late, aligned] = [regimeOf(mixed), regimeOf(earlier)];
    expect(late.volatility).toEqual(aligned.volatility);
    expect(late.correlation).toEqual(aligned.correlation);
    expect(late.evidence.find((l) => l.startsWith('Market volatility'))).toBe(
      aligned.evidence.find((l) => l.startsWith('Market volatility')),
    );
  });
});

describe("an asset's windows are read by time", () => {
  // A bar missing 10 hours ago: the hour had no trade, so the close before it stands for it.
  const candles = btc.candles!.value;
  const holed = [...candles.slice(0, -11), ...candles.slice(-10)];
  const lastOpen = holed.at(-1)!.openTime;
  const closeOfBarOpenedAt = (t: number) => candles.find((c) => c.openTime === t)!.close;

  it('the 48-hour move reads the close 48 hours back, not 48 candles back', () => {
    const trend = readTrend(holed)!;
    expect(trend.momentumHours).toBe(48);
    expect(trend.momentumReturn).toBeCloseTo(
      Math.log(holed.at(-1)!.close / closeOfBarOpenedAt(lastOpen - 48 * HOUR)),
      12,
    );
    // Without the hole, the same reading as before.
    expect(readTrend(candles)!.momentumReturn).toBeCloseTo(
      Math.log(candles.at(-1)!.close / candles.at(-49)!.close),
      12,
    );
  });

  it('the 24-hour change from candles (no ticker) spans 24 hours', () => {
    const asset = withCandles(fixtureAsset('BTC', closes, { ticker: false }), holed);
    const { change24h } = analyzeAsset(asset, [], 'simulated');
    expect(change24h).toBeCloseTo(holed.at(-1)!.close / closeOfBarOpenedAt(lastOpen - 24 * HOUR) - 1, 12);
  });
});

describe('the volatility sentence', () => {
  it('states the rank as a percentile, not as "higher than" a share it may not exceed', () => {
    // A flat last day and a half: the current reading is 0, the lowest, tied with others.
    const flatTail = [...closes.slice(0, -36), ...Array<number>(36).fill(closes.at(-37)!)];
    const r = regimeOf(SEVEN.map((symbol) => fixtureAsset(symbol, flatTail)));
    const line = r.evidence.find((l) => l.startsWith('Market volatility'))!;
    expect(r.volatility.annualised).toBe(0);
    expect(line).toMatch(/is 0% annualised, at percentile \d+ of its rolling 24-hour readings/);
    expect(line).not.toMatch(/higher than/);
  });
});
