// Whether the brain's lean, the positioning vote and the order book point the same way. One rule for the free
// summaries and the paid `agreement`, so that no two bodies describe the same asset differently.
import type { Bias } from '../../schemas/common.ts';
import { BOOK_LEAN_THRESHOLD, type Agreement } from '../../schemas/paid/paid-main-brain.ts';
import { round } from './math.ts';

/** Decimals of the published `book_imbalance`; its lean is read from the published value, in free and paid alike. */
export const BOOK_IMBALANCE_DECIMALS = 3;

/** The order book's lean: bullish above BOOK_LEAN_THRESHOLD, bearish below its negative, neutral between. */
export function bookLeanOf(imbalance: number | null | undefined): Bias | null {
  if (imbalance === null || imbalance === undefined || !Number.isFinite(imbalance)) return null;
  const published = round(imbalance, BOOK_IMBALANCE_DECIMALS);
  return published > BOOK_LEAN_THRESHOLD
    ? 'bullish'
    : published < -BOOK_LEAN_THRESHOLD
      ? 'bearish'
      : 'neutral';
}

/** Do the directional readings lean the same way? Neutral readings agree only with each other. */
export function agreementOf(votes: ReadonlyArray<Bias | null>): Agreement {
  const present = votes.filter((v): v is Bias => v !== null);
  if (present.length < 2) return 'insufficient';
  const sides = new Set(present.filter((v) => v !== 'neutral'));
  if (sides.size === 2) return 'conflicting';
  return new Set(present).size === 1 ? 'aligned' : 'mixed';
}
