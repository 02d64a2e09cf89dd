// What a venue's prices must be before they are published: a last price above zero, bars whose low, open, close and
// high are possible, book levels of a positive price and size (an empty level, size 0, is how the venues' book
// feeds say a level was emptied: the adapters drop it, it holds nothing). Venues do send otherwise (Binance answers
// zero prices for a pair without trades); such an answer is refused for that asset and section with a SourceError
// that says which venue, which instrument and why, so the plan's next venue is asked and the run records an issue,
// instead of a `price: null` published as verified. One bad bar or level refuses the whole section: a venue sending
// impossible values for one hour is not trusted for the hours next to it, and a series with a hole would read as a
// move.
import type { Candle, OrderBook, Ticker24h } from '../../market/types.ts';
import { SourceError } from './request.ts';

/** Where values came from, named in a refusal: the venue and its own name of the instrument ("BTCUSDT"). */
export interface PriceOrigin {
  venue: string;
  instrument: string;
}

const positive = (value: number): boolean => Number.isFinite(value) && value > 0;

/** The reason of a refusal, as a batch answer keeps it for one asset (the same words as the SourceError's). */
export const refusedBecause = ({ venue, instrument }: PriceOrigin, section: string, reason: string): string =>
  `${venue} ${instrument} ${section} refused: ${reason}`;

/** The SourceError of a refusal: the venue, instrument, section and reason. */
export const refusal = (origin: PriceOrigin, section: string, reason: string): SourceError =>
  new SourceError(refusedBecause(origin, section, reason));

/** Why an amount that exists only above zero (an open interest, a liquidated size or price) is not, or null. */
export const amountProblem = (what: string, value: number): string | null =>
  positive(value) ? null : `${what} ${value} is not a positive number`;

/** Why a ticker cannot be published, or null when it can. */
export function tickerProblem(ticker: Ticker24h): string | null {
  if (!positive(ticker.last)) return `last price ${ticker.last} is not a positive number`;
  if (!Number.isFinite(ticker.change24h)) return `24 h change ${ticker.change24h} is not a finite number`;
  if (!(Number.isFinite(ticker.quoteVolume24h) && ticker.quoteVolume24h >= 0))
    return `24 h volume ${ticker.quoteVolume24h} is not a number of zero or more`;
  return null;
}

/** Why a bar is impossible, or null: 0 < low <= min(open, close) <= max(open, close) <= high, volume >= 0. */
export function barProblem(bar: Candle): string | null {
  const { open, high, low, close, volumeBase } = bar;
  if (![open, high, low, close].every(positive))
    return `a price is not a positive number (open ${open}, high ${high}, low ${low}, close ${close})`;
  if (low > Math.min(open, close) || Math.max(open, close) > high)
    return `low ${low} and high ${high} do not hold open ${open} and close ${close}`;
  if (!(Number.isFinite(volumeBase) && volumeBase >= 0))
    return `volume ${volumeBase} is not a number of zero or more`;
  return null;
}

/** Why a book level cannot be traded against, or null. */
export function levelProblem([price, size]: readonly [number, number]): string | null {
  if (!positive(price)) return `price ${price} is not a positive number`;
  if (!positive(size)) return `size ${size} is not a positive number`;
  return null;
}

/** The ticker, or a SourceError naming the venue, instrument and reason. */
export function checkedTicker(origin: PriceOrigin, ticker: Ticker24h): Ticker24h {
  const problem = tickerProblem(ticker);
  if (problem !== null) throw refusal(origin, 'ticker', problem);
  return ticker;
}

/** The bars, or a SourceError naming the first impossible one (its open time) and how many there are. */
export function checkedCandles(origin: PriceOrigin, candles: readonly Candle[]): Candle[] {
  const bad = candles.flatMap((bar) => {
    const problem = barProblem(bar);
    return problem === null ? [] : [{ bar, problem }];
  });
  const first = bad[0];
  if (first !== undefined) {
    const at = new Date(first.bar.openTime).toISOString();
    const count = `${bad.length} of ${candles.length} hourly bars impossible`;
    throw refusal(origin, 'candles', `${count}; the bar of ${at}: ${first.problem}`);
  }
  return [...candles];
}

/** The book, or a SourceError naming the first level of a non-positive price or size (side and rank, best = 1). */
export function checkedBook(origin: PriceOrigin, book: OrderBook): OrderBook {
  for (const side of ['bids', 'asks'] as const) {
    const rank = book[side].findIndex((level) => levelProblem(level) !== null);
    const level = book[side][rank];
    if (level !== undefined)
      throw refusal(origin, 'book', `${side} level ${rank + 1}: ${levelProblem(level) ?? ''}`);
  }
  return book;
}
