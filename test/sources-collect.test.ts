import { describe, expect, it } from 'vitest';
import type { SectionSource } from '../generator/sources/adapters/source.ts';
import { DEFAULT_SOURCE_PLAN } from '../generator/sources/adapters/plan.ts';
import { OPEN_INTEREST_HISTORY_HOURS } from '../generator/sources/adapters/source.ts';
import { collectMarket, collectSimulatedMarket } from '../generator/sources/collect.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import type { Transport, TransportResponse } from '../generator/sources/transport.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';

const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 5);
const HOUR_MS = 3_600_000;

/** The simulator, with some answers replaced: the first rule whose fragment is in the URL decides. */
function sabotaged(rules: Array<[fragment: string, answer: () => TransportResponse]>): Transport {
  const inner = createSimulatedTransport({ seed: 4, asOf: AS_OF });
  return {
    mode: inner.mode,
    async fetch(request) {
      const rule = rules.find(([fragment]) => decodeURIComponent(request.url).includes(fragment));
      return rule ? rule[1]() : inner.fetch(request);
    },
  };
}

describe('collectMarket over the simulator', () => {
  it('fills every section of every tracked asset through the venue adapters', async () => {
    const snapshot = await collectSimulatedMarket({ seed: 4, asOf: AS_OF, symbols: TRACKED_ASSETS });
    expect(snapshot).toMatchObject({
      asOf: AS_OF,
      mode: 'simulated',
      seed: 4,
      provider: 'seeded market simulator',
    });
    expect(snapshot.issues).toEqual([]);
    expect(snapshot.assets.map((asset) => asset.symbol)).toEqual([...TRACKED_ASSETS]);
    for (const asset of snapshot.assets) {
      const candles = asset.candles?.value ?? [];
      expect(candles).toHaveLength(500);
      // Closed bars only, hourly and contiguous, the last one ending before the as-of time.
      expect(
        candles.every((c, i) => i === 0 || c.openTime - (candles[i - 1]?.openTime ?? 0) === HOUR_MS),
      ).toBe(true);
      expect((candles.at(-1)?.openTime ?? Infinity) + HOUR_MS).toBeLessThanOrEqual(AS_OF);
      expect(
        candles.every((c) => c.low <= Math.min(c.open, c.close) && c.high >= Math.max(c.open, c.close)),
      ).toBe(true);
      const ticker = asset.ticker?.value;
      const book = asset.book?.value;
      expect(ticker && book).toBeTruthy();
      expect(Math.abs(ticker!.change24h)).toBeLessThan(0.5); // a fraction, not a percent
      expect(book!.bids[0]![0]).toBeLessThan(book!.asks[0]![0]);
      // Binance and Kraken state the best bid (the same simulated book); Coinbase's stats and CoinGecko do not.
      const statesBid = !['coinbase', 'coingecko'].includes(asset.ticker!.provenance.venue);
      expect(ticker!.bid).toBe(statesBid ? book!.bids[0]![0] : null);
      expect(Math.abs(ticker!.last / candles.at(-1)!.close - 1)).toBeLessThan(0.1);
      expect(asset.funding?.value.history8h.length).toBeGreaterThanOrEqual(89);
      // Two days of hourly history where the serving venue keeps it, one point where it has none (the default run
      // walks the derivatives chain).
      const hours = OPEN_INTEREST_HISTORY_HOURS;
      const depth = { 'binance-usdm': hours, bybit: hours, okx: 1, hyperliquid: 1 } as Record<string, number>;
      expect(asset.openInterest?.value.history).toHaveLength(depth[asset.openInterest!.provenance.venue]!);
      expect(asset.liquidations?.value.events).toBeGreaterThanOrEqual(0);
      expect(asset.liquidations?.provenance).toEqual({
        venue: 'okx',
        asOf: AS_OF,
        mode: 'simulated',
        estimated: false,
      });
    }
    const hbar = snapshot.assets.find((asset) => asset.symbol === 'HBAR');
    expect(hbar?.funding?.value.intervalHours).toBe(4); // simulated on a 4 h schedule, normalised per 8 h
  });

  it('is deterministic for a seed and as-of time, and differs for another seed', async () => {
    const run = (seed: number) => collectSimulatedMarket({ seed, asOf: AS_OF, symbols: ['BTC', 'XLM'] });
    const [a, b, c] = await Promise.all([run(9), run(9), run(10)]);
    expect(b).toEqual(a);
    expect(c.assets[0]?.candles?.value).not.toEqual(a.assets[0]?.candles?.value);
  });

  it('degrades one section per failure and keeps the rest', async () => {
    const transport = sabotaged([
      ['/api/v3/klines?symbol=BTCUSDT', () => ({ status: 200, headers: {}, body: '[[1,2,' })],
      ['/api/v3/depth?symbol=ETHUSDT', () => ({ status: 500, headers: {}, body: 'upstream exploded' })],
      [
        '/fapi/v1/premiumIndex?symbol=SOLUSDT',
        () => ({ status: 200, headers: {}, body: '{"symbol":"SOLUSDT","markPrice":"1"}' }),
      ],
      [
        'uly=XRP-USDT',
        () => {
          throw new Error('socket hang up');
        },
      ],
      ['"ALGOUSDT"', () => ({ status: 400, headers: {}, body: '{"code":-1121,"msg":"Invalid symbol."}' })],
    ]);
    const snapshot = await collectMarket({ transport, symbols: TRACKED_ASSETS, asOf: AS_OF, seed: 4 });
    const asset = (symbol: string) => snapshot.assets.find((a) => a.symbol === symbol)!;

    expect(asset('BTC').candles).toBeNull();
    expect(asset('BTC').book).not.toBeNull();
    expect(asset('ETH').book).toBeNull();
    expect(asset('ETH').candles).not.toBeNull();
    expect(asset('SOL').funding).toBeNull();
    expect(asset('SOL').openInterest).not.toBeNull();
    expect(asset('XRP').liquidations).toBeNull();
    expect(asset('XRP').funding).not.toBeNull();
    // Binance refuses the whole batch for ALGO's unknown symbol; the batch is split, so ALGO alone loses its ticker.
    expect(snapshot.assets.filter((a) => a.ticker === null).map((a) => a.symbol)).toEqual(['ALGO']);
    expect(asset('ALGO').candles).not.toBeNull();

    const issue = (symbol: string, section: string) =>
      snapshot.issues.find((i) => i.symbol === symbol && i.section === section);
    expect(issue('BTC', 'candles')).toMatchObject({
      venue: 'binance-spot',
      message: 'response is not valid JSON',
    });
    expect(issue('ETH', 'book')?.message).toMatch(/^HTTP 500: upstream exploded/);
    expect(issue('SOL', 'funding')?.message).toMatch(/unexpected response shape/);
    expect(issue('XRP', 'liquidations')).toMatchObject({ venue: 'okx', message: 'socket hang up' });
    expect(issue('ALGO', 'ticker')?.message).toBe('HTTP 400: -1121 Invalid symbol.');
    expect(snapshot.issues).toHaveLength(5);
  });

  it('falls back to the next source of a kind, and records nothing when it succeeds', async () => {
    const failing: SectionSource<'book'> = {
      venue: 'broken-venue',
      batchSize: 1,
      fetch: async () => {
        throw new Error('down');
      },
    };
    const plan = { ...DEFAULT_SOURCE_PLAN, book: [failing, ...DEFAULT_SOURCE_PLAN.book] };
    const transport = createSimulatedTransport({ seed: 4, asOf: AS_OF });
    const snapshot = await collectMarket({
      transport,
      symbols: ['BTC'],
      asOf: AS_OF,
      seed: 4,
      plan,
      candleLimit: 24,
    });
    expect(snapshot.assets[0]?.book?.provenance.venue).toBe('binance-spot');
    expect(snapshot.assets[0]?.candles?.value).toHaveLength(24);
    expect(snapshot.issues).toEqual([]);

    const onlyBroken = { ...DEFAULT_SOURCE_PLAN, book: [failing] };
    const degraded = await collectMarket({
      transport,
      symbols: ['BTC'],
      asOf: AS_OF,
      seed: 4,
      plan: onlyBroken,
    });
    expect(degraded.issues).toEqual([
      { venue: 'broken-venue', symbol: 'BTC', section: 'book', message: 'down' },
    ]);
  });

  it('collects a synthetic universe of 700 symbols', async () => {
    const symbols = Array.from({ length: 700 }, (_, i) => `S${String(i + 1).padStart(3, '0')}`);
    const snapshot = await collectSimulatedMarket({ seed: 1, asOf: AS_OF, symbols });
    expect(snapshot.issues).toEqual([]);
    expect(snapshot.assets).toHaveLength(700);
    const prices = snapshot.assets.map((asset) => asset.ticker?.value.last ?? NaN);
    expect(prices.every((price) => price > 0)).toBe(true);
    expect(new Set(prices).size).toBeGreaterThan(690); // parameters really differ per symbol
    expect(snapshot.assets.every((asset) => asset.candles?.value.length === 500)).toBe(true);
  });
});
