// Pins the venue checks a published price must pass (sources/adapters/price-checks.ts: a bar's low and high hold
// its open and close, a book level has a positive price and size, both sides of the book are checked) and the
// freshness limits (sources/freshness.ts: a ticker at most 5 minutes old, candles at most 2 hours, both limits
// allowed). A mutation audit found one-line changes to each that no test noticed: these rules decide what is
// published as verified data, so each is pinned at its edge with literal values.
import { describe, expect, it } from 'vitest';
import { barProblem, checkedBook, levelProblem } from '../generator/sources/adapters/price-checks.ts';
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
