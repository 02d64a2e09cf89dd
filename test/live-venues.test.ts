// The venues' oddities end to end: a rate limit sent as Bybit's 403 is waited out over real HTTP (127.0.0.1) while
// its country block drops the venue; and the default simulated run, whose venues' answers carry the oddities,
// publishes funding and open interest, candles, ticker and book for every asset in the right units.
import { afterEach, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { buildPlan, DEFAULT_LIVE_ORDER } from '../generator/sources/adapters/plan.ts';
import { collectMarket, collectSimulatedMarket } from '../generator/sources/collect.ts';
import { startReplayServer } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import { HOUR_MS, SimulatedMarket } from '../generator/sources/simulator/market-model.ts';
import * as F from './fixtures/venues/oddities.ts';
import { liveTransportTo } from './live-helpers.ts';

const AS_OF = Date.UTC(2026, 2, 10, 14, 37, 21, 512);
let server: ReplayServer | undefined;
afterEach(async () => server?.close());

const bybitOnly = buildPlan({
  ...DEFAULT_LIVE_ORDER,
  candles: [],
  ticker: [],
  book: [],
  funding: ['bybit'],
  openInterest: [],
  liquidations: [],
});

describe('Bybit over HTTP', () => {
  it('waits out a 403 rate limit (10006) and gets the data; the venue stays in the run', async () => {
    let tickerCalls = 0;
    server = await startReplayServer(({ path }) => {
      if (path.startsWith('/v5/market/tickers') && tickerCalls++ === 0)
        return { status: 403, body: JSON.stringify(F.bybitRateLimit403) };
      if (path.startsWith('/v5/market/tickers')) return { body: JSON.stringify(F.bybitTickers) };
      if (path.startsWith('/v5/market/funding/history'))
        return { body: JSON.stringify(F.bybitFundingHistory) };
      return { status: 404, body: '' };
    });
    const transport = liveTransportTo(server, { http: { retries: 2 } });
    const snapshot = await collectMarket({
      transport,
      symbols: ['BTC'],
      asOf: 1779990000000,
      seed: null,
      plan: bybitOnly,
    });
    expect(tickerCalls).toBe(2);
    expect(snapshot.assets[0]?.funding?.value.rate8h).toBeCloseTo(0.0002, 12);
    expect(snapshot.issues.filter((i) => i.section === 'funding' || i.section === 'all')).toEqual([]);
  });

  it('a lasting rate limit is an issue naming it, never "venue unavailable"; a country block is', async () => {
    server = await startReplayServer(() => ({ status: 403, body: JSON.stringify(F.bybitRateLimit403) }));
    const limited = await collectMarket({
      transport: liveTransportTo(server),
      symbols: ['BTC', 'SOL'],
      asOf: 1779990000000,
      seed: null,
      plan: bybitOnly,
    });
    const relevant = limited.issues.filter((i) => i.section === 'funding' || i.section === 'all');
    expect(relevant.map((i) => [i.symbol, i.section])).toEqual([
      ['BTC', 'funding'],
      ['SOL', 'funding'],
    ]);
    expect(relevant[0]?.message).toMatch(/rate limited.*10006/);
    await server.close();

    server = await startReplayServer(() => ({ status: 403, body: F.bybitCountryBlock403 }));
    const blocked = await collectMarket({
      transport: liveTransportTo(server),
      symbols: ['BTC', 'SOL'],
      asOf: 1779990000000,
      seed: null,
      plan: bybitOnly,
    });
    expect(blocked.issues[0]).toMatchObject({ venue: 'bybit', symbol: null, section: 'all' });
    expect(blocked.issues[0]?.message).toMatch(/venue unavailable for this run \(HTTP 403\)/);
  });
});

describe('the default simulated run', () => {
  it('walks the fallback chain through every derivatives venue and publishes the model in the right units', async () => {
    const snapshot = await collectSimulatedMarket({ seed: 7, asOf: AS_OF, symbols: TRACKED_ASSETS });
    const market = new SimulatedMarket(7, AS_OF);
    const venues = Object.fromEntries(
      snapshot.assets.map((a) => [a.symbol, [a.funding?.provenance.venue, a.openInterest?.provenance.venue]]),
    );
    expect(venues).toEqual({
      BTC: ['binance-usdm', 'binance-usdm'],
      ETH: ['binance-usdm', 'binance-usdm'],
      XRP: ['binance-usdm', 'binance-usdm'],
      SOL: ['binance-usdm', 'binance-usdm'],
      ALGO: ['bybit', 'bybit'], // not on (simulated) Binance USDⓈ-M
      HBAR: ['okx', 'okx'], // halted on Bybit: empty fields, unavailable there
      XLM: ['hyperliquid', 'hyperliquid'], // on neither Bybit nor OKX
    });
    for (const asset of snapshot.assets) {
      const funding = asset.funding!.value;
      // Every venue's own interval (Bybit 4 h or 8 h, OKX per period, Hyperliquid 1 h) comes out per 8 h.
      expect(funding.rate8h).toBeCloseTo(market.funding8h(asset.symbol, market.currentHour), 6);
      // One side of the open interest, whoever served it (Bybit sends both sides; OKX in contracts).
      expect(
        asset.openInterest!.value.valueUsd / market.openInterestUsd(asset.symbol, market.currentHour),
      ).toBeCloseTo(1, 4);
      expect(asset.funding!.provenance.mode).toBe('simulated');
      // Every venue's current rate is its prediction for the running period; the history holds settled rates.
      expect(funding.rateKind).toBe('predicted');
    }
    // OKX settled history comes from realizedRate (its fundingRate is the prediction, 10 % off here).
    const hbar = snapshot.assets.find((a) => a.symbol === 'HBAR')!.funding!.value;
    const hours = market.params('HBAR').fundingIntervalHours;
    const latestSettlement = Math.floor(AS_OF / (hours * 3_600_000)) * hours;
    expect(hbar.history8h.at(-1)).toBeCloseTo(market.funding8h('HBAR', latestSettlement - 1), 9);
    expect(snapshot.mode).toBe('simulated');
  });

  it('walks the spot chain through Coinbase, Kraken and CoinGecko and publishes the model, no issue left', async () => {
    const snapshot = await collectSimulatedMarket({ seed: 7, asOf: AS_OF, symbols: TRACKED_ASSETS });
    const market = new SimulatedMarket(7, AS_OF);
    const venues = Object.fromEntries(
      snapshot.assets.map((a) => [
        a.symbol,
        [a.candles?.provenance.venue, a.ticker?.provenance.venue, a.book?.provenance.venue],
      ]),
    );
    expect(venues).toEqual({
      BTC: ['binance-spot', 'binance-spot', 'binance-spot'],
      ETH: ['binance-spot', 'binance-spot', 'binance-spot'],
      XRP: ['binance-spot', 'binance-spot', 'binance-spot'],
      SOL: ['binance-spot', 'binance-spot', 'binance-spot'],
      ALGO: ['coinbase', 'coinbase', 'coinbase'], // not on (simulated) Binance spot
      XLM: ['kraken', 'kraken', 'coinbase'], // Coinbase rate-limits its candles and stats; Kraken's XXLMZUSD
      HBAR: ['coinbase', 'coingecko', 'coinbase'], // its stats rate-limited, no Kraken pair: CoinGecko's price
    });
    expect(snapshot.issues).toEqual([]);
    for (const asset of snapshot.assets) {
      const ticker = asset.ticker!;
      // Whoever served it, the price is the model's (CoinGecko's as of the minute it last updated).
      const at = ticker.provenance.venue === 'coingecko' ? Math.floor(AS_OF / 60_000) * 60_000 : AS_OF;
      expect(ticker.value.last / market.priceAt(asset.symbol, at)).toBeCloseTo(1, 3);
      expect(ticker.provenance).toMatchObject({ mode: 'simulated', estimated: false });
      expect(ticker.provenance.asOf).toBe(at);
      expect(Math.abs(ticker.value.change24h)).toBeLessThan(0.5); // a fraction, not CoinGecko's percent
      const candles = asset.candles!.value;
      expect(candles).toHaveLength(500); // Coinbase in two pages of 300, Kraken from its 720 most recent
      const last = candles.at(-1)!;
      expect(last.openTime).toBe((market.currentHour - 1) * HOUR_MS); // the forming bar dropped
      expect(last.close / market.candle(asset.symbol, market.currentHour - 1).close).toBeCloseTo(1, 3);
    }
    expect(snapshot.provider).toBe('seeded market simulator');
  });

  it('is byte-identical for the same seed and as-of', async () => {
    const run = () => collectSimulatedMarket({ seed: 3, asOf: AS_OF, symbols: TRACKED_ASSETS });
    expect(JSON.stringify(await run())).toBe(JSON.stringify(await run()));
  });
});
