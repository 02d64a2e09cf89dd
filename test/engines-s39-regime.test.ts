// The market regime reads a provisional 50-hour average (fewer than 125 candles) as asset analysis does: it counts,
// is named provisional in the regime's evidence and limitations, and confidence counts it as if its settled value
// could have read either way, so it lowers confidence instead of reading as a full average.
import { describe, expect, it } from 'vitest';
import { analyzeAsset } from '../generator/engines/asset-analysis.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { analyzeRegime, type RiskComponent } from '../generator/engines/regime.ts';
import { EMA_SETTLED_CANDLES } from '../generator/engines/trend.ts';
import type { AssetMarket } from '../generator/market/types.ts';
import { FIXTURE_CLOCK, fixtureAsset, fixtureSnapshot, pricePath, SEVEN } from './helpers/market-fixtures.ts';

/** Seven rising assets; the first `short` of them keep only their last `candles` candles. */
const market = (short: number, candles: number): AssetMarket[] =>
  SEVEN.map((s, i) => {
    const closes = pricePath(10 + i, [{ hours: 300, drift: 0.002, noise: 0.004 }], i + 1);
    return fixtureAsset(s, i < short ? closes.slice(-candles) : closes);
  });

const regimeOf = (assets: AssetMarket[], leaveOut: RiskComponent[] = []) =>
  analyzeRegime(
    assets,
    assets.map((a) => analyzeAsset(a, [], 'simulated')),
    { leaveOut },
  );

describe('a provisional 50-hour average in the market regime', () => {
  it('is named provisional in breadth, the median trend and the limitations, and degrades the reading', () => {
    const r = regimeOf(market(3, 100));
    expect(r.evidence[0]).toBe(
      '7 of 7 assets trade above their 50-hour exponential average (provisional for BTC, ETH and XRP: fewer ' +
        `than ${EMA_SETTLED_CANDLES} hourly candles for the average to settle).`,
    );
    expect(r.evidence[1]).toMatch(/^The typical asset's trend points up, read partly from a provisional/);
    expect(r.limitations).toContain(
      `BTC, ETH and XRP: fewer than ${EMA_SETTLED_CANDLES} hourly candles, so the 50-hour average is ` +
        'provisional; breadth and the median trend count it, and confidence counts it as if its settled value ' +
        'could put the asset on either side of it and move its trend within the provisional margin the main ' +
        'brain’s method describes.',
    );
    expect(r.degraded).toBe(true);
    // Settled averages (130 candles: the drawdown window is still short) are not called provisional.
    const settled = regimeOf(market(3, 130));
    expect(settled.evidence.join(' ')).not.toMatch(/provisional/);
  });

  it('counts breadth as unread when every average is provisional: confidence no higher than without breadth', () => {
    const assets = market(7, 100);
    const r = regimeOf(assets);
    // Breadth still counts in the score (7 of 7 above), but it could have read anything.
    expect(r.breadth).toMatchObject({ above: 7, withData: 7 });
    expect(r.riskScore).not.toBe(regimeOf(assets, ['breadth']).riskScore);
    expect(r.confidence).toBeLessThanOrEqual(regimeOf(assets, ['breadth']).confidence);
  });

  it('the published range of what did not come in includes what the provisional averages could change', () => {
    const provisional = buildFreeSnapshots(fixtureSnapshot(market(3, 100)), FIXTURE_CLOCK).marketRegime;
    const partialRange = provisional.regime.limitations.find((l) => l.startsWith('Partial evidence'))!;
    // The unread breadth of three assets alone could move the score by their share of breadth's part.
    const [from, to] = /anywhere from (\d+) to (\d+)/.exec(partialRange)!.slice(1).map(Number);
    expect(to! - from!).toBeGreaterThanOrEqual(8);
  });
});
