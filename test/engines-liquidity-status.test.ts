// A liquidity entry's `status`, the liquidity body's limitations and its degraded flag are judged on what liquidity
// reads (order book, hourly candles, ticker): a derivatives gap belongs to derivatives.php and the asset's overall
// `data_status`. Every default simulated run used to mark XLM and HBAR `partial` (and the body and its history row
// degraded) for an open-interest history too short, although every liquidity metric was there.
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots, type FreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { marketRowsOf } from '../generator/history/rows.ts';
import type { AssetMarket, MarketSnapshot, SourceIssue } from '../generator/market/types.ts';
import { collectSimulatedMarket } from '../generator/sources/collect.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import type { LiquidityLiteResponse } from '../schemas/liquidity-lite.ts';
import { FIXTURE_CLOCK, fixtureSnapshot, universe, uptrend } from './helpers/market-fixtures.ts';

/** The simulated run the audit read (seed 42, the default plan's venue gaps). */
const DEFAULT_AS_OF = Date.parse('2026-11-25T23:00:00Z');
const freeOf = (snapshot: MarketSnapshot): FreeSnapshots => buildFreeSnapshots(snapshot, FIXTURE_CLOCK);

/** A live universe on an uptrend, with `change` applied to XLM and the run's `issues`. */
const liveRun = (change: (xlm: AssetMarket) => void = () => {}, issues: SourceIssue[] = []) => {
  const assets = universe(uptrend, { mode: 'live' });
  change(assets.find((a) => a.symbol === 'XLM')!);
  return fixtureSnapshot(assets, { mode: 'live', issues });
};

/** An open-interest venue that gives one point (no 24-hour change), as Hyperliquid and OKX do. */
const onePointOpenInterest = (asset: AssetMarket): void => {
  const { valueUsd } = asset.openInterest!.value;
  asset.openInterest!.value = {
    valueUsd,
    history: [{ time: asset.openInterest!.provenance.asOf, valueUsd }],
  };
};

const namesAsset = (lines: readonly string[], symbol: string) =>
  lines.some((line) => new RegExp(`\\b${symbol}\\b`).test(line));

/** The body's own consistency: degraded exactly when an entry is partial or unavailable, and each one named. */
const expectConsistent = (body: LiquidityLiteResponse) => {
  const weaker = Object.values(body.assets).filter(
    (a) => a.status === 'partial' || a.status === 'unavailable',
  );
  expect(body.source_details.degraded).toBe(weaker.length > 0);
  for (const entry of weaker) expect(namesAsset(body.limitations, entry.asset), entry.asset).toBe(true);
};

describe('liquidity status reads liquidity inputs only', () => {
  it('the default simulated run: XLM and HBAR keep their whole liquidity reading', async () => {
    const snapshot = await collectSimulatedMarket({ seed: 42, asOf: DEFAULT_AS_OF, symbols: TRACKED_ASSETS });
    const free = freeOf(snapshot);
    const liquidity = free.liquidityLite;
    for (const symbol of ['XLM', 'HBAR']) {
      const entry = liquidity.assets[symbol]!;
      // The derivatives gap is still the asset's and derivatives.php's.
      expect(entry.data_status, symbol).toBe('partial');
      expect(free.derivatives.assets[symbol]!.limitations?.join(' '), symbol).toMatch(
        /open-interest history/,
      );
      // Liquidity itself came in whole: simulated, so null (not verified), never partial.
      expect(entry.metrics, symbol).toMatchObject({ spread_method: 'order_book' });
      expect(entry.status, symbol).toBeNull();
    }
    expect(liquidity.limitations.filter((l) => /open[- ]interest|funding|liquidation/i.test(l))).toEqual([]);
    expect(liquidity.source_details.degraded).toBe(false);
    expectConsistent(liquidity);
    const paid = buildPaidBodies(free, FIXTURE_CLOCK);
    expect(paid.paidMainBrain.coins.XLM!.liquidity?.status).toBeNull();
    const rows = marketRowsOf(free);
    expect(rows['liquidity-lite'].source_status).toBe('ok');
    // The resources the gap belongs to still say so.
    expect(rows.derivatives.source_status).toBe('degraded');
  });

  it('live: a derivatives gap leaves liquidity verified; the asset stays partial', () => {
    const free = freeOf(liveRun(onePointOpenInterest));
    expect(free.liquidityLite.assets.XLM).toMatchObject({ status: 'verified', data_status: 'partial' });
    expect(free.liquidityLite.assets_verified).toBe(7);
    expect(free.derivatives.status).toBe('degraded');
    expectConsistent(free.liquidityLite);
  });

  it('live: a missing derivatives section leaves liquidity verified', () => {
    const free = freeOf(
      liveRun((xlm) => {
        xlm.funding = null;
        xlm.liquidations = null;
      }),
    );
    expect(free.liquidityLite.assets.XLM!.status).toBe('verified');
    expect(free.liquidityLite.limitations).toEqual([]);
    expectConsistent(free.liquidityLite);
  });

  // What liquidity reads still marks its entry partial, named in its limitations.
  const weaker: Array<[string, () => MarketSnapshot, RegExp]> = [
    ['no order book', () => liveRun((xlm) => (xlm.book = null)), /order book/],
    [
      'an empty order book',
      () => liveRun((xlm) => (xlm.book = { ...xlm.book!, value: { bids: [], asks: [] } })),
      /order book/,
    ],
    ['no ticker', () => liveRun((xlm) => (xlm.ticker = null)), /ticker/],
    ['no candles', () => liveRun((xlm) => (xlm.candles = null)), /candles/],
    [
      'too few candles for relative volume',
      () => liveRun((xlm) => (xlm.candles = { ...xlm.candles!, value: xlm.candles!.value.slice(-60) })),
      /relative volume could not be read from the 60 hourly candles/,
    ],
    [
      'a data issue on a section that came in',
      () =>
        liveRun(undefined, [
          {
            venue: 'binance-spot',
            symbol: 'XLM',
            section: 'ticker',
            message: 'price differs beyond threshold',
          },
        ]),
      /^XLM: Data issue at binance-spot \(ticker\): price differs beyond threshold$/,
    ],
  ];
  for (const [name, snapshot, reason] of weaker)
    it(`live: ${name} marks the entry partial and says why`, () => {
      const liquidity = freeOf(snapshot()).liquidityLite;
      expect(liquidity.assets.XLM!.status).toBe('partial');
      expect(liquidity.assets.BTC!.status).toBe('verified');
      expect(liquidity.limitations.filter((l) => /\bXLM\b/.test(l) && reason.test(l))).toHaveLength(1);
      expect(liquidity.source_details.degraded).toBe(true);
      expectConsistent(liquidity);
    });
});
