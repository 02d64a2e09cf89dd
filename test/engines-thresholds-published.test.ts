// A label never contradicts the number published beside it: at each threshold the engines read the funding rate,
// its z-score, the open-interest change, the spread and the depth as the bodies publish them (rounded), so a rate
// published as +0.1 % reads `extreme_high` ("at or above +0.1 %"), a change published as 2 % is not `flat` ("less
// than 2 %"), a spread published as 25 bps is not `thin` ("wider than 25 bps").
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import type { AssetMarket, OrderBook } from '../generator/market/types.ts';
import type { DerivativesAsset } from '../schemas/derivatives.ts';
import type { LiquidityLiteAsset } from '../schemas/liquidity-lite.ts';
import { FIXTURE_CLOCK, fixtureAsset, fixtureSnapshot, uptrend } from './helpers/market-fixtures.ts';

/** An asset on a rising path whose funding is `rate8h` against `history` (90 settled rates unless given). */
function withFunding(symbol: string, rate8h: number, history: number[]): AssetMarket {
  const asset = fixtureAsset(symbol, uptrend(100, symbol.length));
  const funding = asset.funding!;
  return { ...asset, funding: { ...funding, value: { ...funding.value, rate8h, history8h: history } } };
}

const flatHistory = (rate: number): number[] => Array.from({ length: 90 }, () => rate);

/** The published derivatives entries of a snapshot of these assets, by symbol. */
function derivatives(assets: AssetMarket[]): Record<string, DerivativesAsset> {
  return buildFreeSnapshots(fixtureSnapshot(assets), FIXTURE_CLOCK).derivatives.assets;
}

function liquidity(assets: AssetMarket[]): Record<string, LiquidityLiteAsset> {
  return buildFreeSnapshots(fixtureSnapshot(assets), FIXTURE_CLOCK).liquidityLite.assets;
}

describe('funding `level` and `crowding` read the published rate_8h_pct and z_score_30d', () => {
  // Against a flat history at the rate itself the z-score is about 0: only the fixed marks can decide.
  const published = derivatives([
    withFunding('SOL', 0.00099996, flatHistory(0.001)),
    withFunding('ETH', -0.00049996, flatHistory(-0.0005)),
    withFunding('BTC', 0.00099949, flatHistory(0.001)),
    // The spread is floored at 0.001 % per 8 h, so z = (rate - 0.01 %) / 0.001 %.
    withFunding('XRP', 0.000124996, flatHistory(0.0001)),
    withFunding('ALGO', 0.000114996, flatHistory(0.0001)),
    withFunding('XLM', 0.00012494, flatHistory(0.0001)),
  ]);
  const funding = (symbol: string) => published[symbol]!.funding!;

  it('a rate published as +0.1 % is extreme_high (at or above the +0.1 % mark) and crowded long', () => {
    expect(funding('SOL').rate_8h_pct).toBe(0.1);
    expect(funding('SOL')).toMatchObject({ level: 'extreme_high', crowding: 'crowded_longs' });
    expect(published.SOL!.state).toBe('crowded_longs');
  });

  it('a rate published as -0.05 % is extreme_low (at or below the -0.05 % mark) and crowded short', () => {
    expect(funding('ETH').rate_8h_pct).toBe(-0.05);
    expect(funding('ETH')).toMatchObject({ level: 'extreme_low', crowding: 'crowded_shorts' });
  });

  it('a rate published just under the mark (+0.0999 %) stays below it', () => {
    expect(funding('BTC').rate_8h_pct).toBe(0.0999);
    expect(funding('BTC')).toMatchObject({ level: 'normal', crowding: 'none' });
  });

  it('a z-score published as 2.5 is extreme_high, one published as 1.5 is high, 2.49 is not extreme', () => {
    expect(funding('XRP')).toMatchObject({
      z_score_30d: 2.5,
      level: 'extreme_high',
      crowding: 'crowded_longs',
    });
    expect(funding('ALGO')).toMatchObject({ z_score_30d: 1.5, level: 'high' });
    expect(funding('XLM')).toMatchObject({ z_score_30d: 2.49, level: 'high' });
  });
});

describe('open-interest `reading` reads the published change_24h_pct', () => {
  const published = derivatives(
    [0.019996, -0.019996, 0.01994].map((change, i) =>
      fixtureAsset(['BTC', 'ETH', 'SOL'][i]!, uptrend(100, i + 1), { openInterestChange: change }),
    ),
  );
  const oi = (symbol: string) => published[symbol]!.open_interest!;

  it('a change published as 2 % is not flat ("less than 2 % either way"), either way', () => {
    expect(oi('BTC').price_change_24h_pct).toBeGreaterThan(0);
    expect(oi('BTC')).toMatchObject({ change_24h_pct: 2, reading: 'new_longs' });
    expect(oi('ETH')).toMatchObject({ change_24h_pct: -2, reading: 'short_covering' });
    expect((published.BTC!.evidence ?? []).join(' ')).toContain('Open interest changed +2.00%');
  });

  it('a change published as 1.99 % is flat', () => {
    expect(oi('SOL')).toMatchObject({ change_24h_pct: 1.99, reading: 'flat' });
  });
});

describe('`liquidity_context` reads the published spread_bps and depths', () => {
  const MID = 100;
  /** One level a side, `spreadBps` apart around the mid, each holding `depthUsd`. */
  const book = (spreadBps: number, depthUsd: number): OrderBook => {
    const half = spreadBps / 2 / 1e4;
    const [bid, ask] = [MID * (1 - half), MID * (1 + half)];
    return { bids: [[bid, depthUsd / bid]], asks: [[ask, depthUsd / ask]] };
  };
  const withBook = (symbol: string, value: OrderBook | null, quote?: { bid: number; ask: number }) => {
    const asset = fixtureAsset(symbol, uptrend(100, symbol.length));
    const ticker = asset.ticker!;
    return {
      ...asset,
      book: value && { ...asset.book!, value },
      ticker: quote ? { ...ticker, value: { ...ticker.value, ...quote } } : ticker,
    };
  };
  const half = 25.004 / 2 / 1e4;
  const published = liquidity([
    withBook('BTC', book(25.004, 500_000)),
    withBook('ETH', book(4, 99_999.6)),
    withBook('SOL', book(5.004, 2_000_000)),
    withBook('XRP', null, { bid: MID * (1 - half), ask: MID * (1 + half) }),
    withBook('ALGO', book(25.02, 500_000)),
  ]);
  const at = (symbol: string) => published[symbol]!;

  it('a book spread published as 25 bps is not thin ("wider than 25 bps"); 25.02 is', () => {
    expect(at('BTC').metrics!.spread_bps).toBe(25);
    expect(at('BTC').liquidity_context).toBe('moderate');
    expect(at('ALGO').metrics!.spread_bps).toBe(25.02);
    expect(at('ALGO').liquidity_context).toBe('thin');
  });

  it('depth published as 100,000 USD is not thin ("less than 100,000 USD")', () => {
    expect(at('ETH').metrics).toMatchObject({ bid_depth_usd_1pct: 100_000, ask_depth_usd_1pct: 100_000 });
    expect(at('ETH').liquidity_context).toBe('moderate');
  });

  it('a spread published as 5 bps with deep books is deep ("5 bps or less")', () => {
    expect(at('SOL').metrics!.spread_bps).toBe(5);
    expect(at('SOL').liquidity_context).toBe('deep');
  });

  it('a quoted spread published as 25 bps, without a book, carries no label (not thin)', () => {
    expect(at('XRP').metrics).toMatchObject({ spread_bps: 25, spread_method: 'ticker' });
    expect(at('XRP').liquidity_context).toBeNull();
  });
});
