// Pins the venue checks a published price must pass (sources/adapters/price-checks.ts: a bar's low and high hold
// its open and close, a book level has a positive price and size, both sides of the book are checked) and the
// freshness limits (sources/freshness.ts: a ticker, book, funding rate or liquidation total at most 5 minutes old,
// candles and open interest at most 2 hours, each limit allowed; a venue time at most 10 minutes after the run's
// as-of). A ticker's or bar's volume may be 0 (a quiet pair traded nothing) but not negative or no number, and a
// ticker's 24 h change must be a finite number. A mutation audit found one-line changes to each that no test noticed: these rules decide what is
// published as verified data, so each is pinned at its edge with literal values.
import { describe, expect, it } from 'vitest';
import {
  barProblem,
  checkedBook,
  levelProblem,
  tickerProblem,
} from '../generator/sources/adapters/price-checks.ts';
import { timeProblem } from '../generator/sources/freshness.ts';
import type { Provenance } from '../generator/market/types.ts';

const ORIGIN = { venue: 'binance-spot', instrument: 'BTCUSDT' };
const MINUTE = 60_000;
const T = Date.UTC(2025, 0, 15, 12, 0, 0);
const from = (asOf: number): Provenance => ({ venue: 'binance-spot', asOf, mode: 'live', estimated: false });

describe('price checks refuse impossible values', () => {
  it('refuses a book whose asks hold a level of price 0, even with good bids', () => {
    const book = { bids: [[100, 1]] as Array<[number, number]>, asks: [[0, 1]] as Array<[number, number]> };
    expect(() => checkedBook(ORIGIN, book)).toThrow('asks level 1: price 0');
  });

  it('refuses a bar whose low is above its open (low must be at most the lower of open and close)', () => {
    const bar = { openTime: T, open: 100, close: 110, low: 105, high: 112, volumeBase: 1 };
    expect(barProblem(bar)).not.toBeNull();
  });

  it('accepts a bar whose low and high hold its open and close', () => {
    const bar = { openTime: T, open: 100, close: 110, low: 100, high: 112, volumeBase: 1 };
    expect(barProblem(bar)).toBeNull();
  });

  it('refuses a book level of size 0 or of no number', () => {
    expect(levelProblem([100, 0])).toBe('size 0 is not a positive number');
    expect(levelProblem([100, NaN])).toBe('size NaN is not a positive number');
    expect(levelProblem([100, 0.5])).toBeNull();
  });
});

describe('freshness limits allow a value exactly at its limit and refuse one older', () => {
  it('a ticker exactly 5 minutes old is current; a millisecond older is stale', () => {
    expect(timeProblem('ticker', from(T - 5 * MINUTE), T)).toBeNull();
    expect(timeProblem('ticker', from(T - 5 * MINUTE - 1), T)).toMatch(/^stale: /);
  });

  it('candles whose last bar ended exactly 2 hours ago are current; a millisecond older are stale', () => {
    expect(timeProblem('candles', from(T - 120 * MINUTE), T)).toBeNull();
    expect(timeProblem('candles', from(T - 120 * MINUTE - 1), T)).toMatch(/^stale: /);
  });
});

describe('volumes may be zero, changes and volumes must be finite numbers', () => {
  const ticker = { last: 1, change24h: 0, quoteVolume24h: 0, bid: null, ask: null };

  it('accepts a ticker with a 24 h volume of 0', () => {
    expect(tickerProblem(ticker)).toBeNull();
  });

  it('refuses a ticker whose 24 h change is NaN', () => {
    expect(tickerProblem({ ...ticker, change24h: NaN })).toMatch(/24 h change NaN/);
  });

  it('refuses a ticker whose 24 h volume is Infinity, negative or NaN', () => {
    expect(tickerProblem({ ...ticker, quoteVolume24h: Infinity })).toMatch(/24 h volume Infinity/);
    expect(tickerProblem({ ...ticker, quoteVolume24h: -1 })).toMatch(/24 h volume -1/);
    expect(tickerProblem({ ...ticker, quoteVolume24h: NaN })).toMatch(/24 h volume NaN/);
  });

  it('accepts a bar with a volume of 0 and refuses one of -1 or NaN', () => {
    const bar = { openTime: T, open: 100, close: 110, low: 100, high: 112, volumeBase: 0 };
    expect(barProblem(bar)).toBeNull();
    expect(barProblem({ ...bar, volumeBase: -1 })).toBe('volume -1 is not a number of zero or more');
    expect(barProblem({ ...bar, volumeBase: NaN })).toBe('volume NaN is not a number of zero or more');
  });
});

describe('each kind of value is current up to its published limit and stale a millisecond after', () => {
  // generator/sources/README.md publishes these limits.
  it.each([
    ['book', 5],
    ['funding', 5],
    ['liquidations', 5],
    ['openInterest', 120],
  ] as const)('%s exactly %s minutes old is current; a millisecond older is stale', (section, minutes) => {
    expect(timeProblem(section, from(T - minutes * MINUTE), T)).toBeNull();
    expect(timeProblem(section, from(T - minutes * MINUTE - 1), T)).toMatch(/^stale: /);
  });

  it.each(['ticker', 'candles', 'openInterest'] as const)(
    'a %s time exactly 10 minutes after the as-of is allowed; a millisecond later is not',
    (section) => {
      expect(timeProblem(section, from(T + 10 * MINUTE), T)).toBeNull();
      expect(timeProblem(section, from(T + 10 * MINUTE + 1), T)).toMatch(/after the run's as-of/);
    },
  );
});
