// Issue 17 item 3: the paid main brain's agreement is recomputed from what the body discloses, and nothing else.
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { BOOK_LEAN_THRESHOLD, PaidMainBrain, type CoinPicture } from '../schemas/paid/paid-main-brain.ts';
import type { Bias } from '../schemas/common.ts';
import {
  crash,
  FIXTURE_CLOCK,
  fixtureSnapshot,
  reversal,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

const SCENARIOS = [
  () => fixtureSnapshot(universe(uptrend)),
  () => fixtureSnapshot(universe(crash)),
  () => fixtureSnapshot(universe(reversal)),
  () =>
    fixtureSnapshot(
      universe(reversal, { fundingRate: null, openInterestChange: null, liquidations: null, book: false }),
    ),
];

/** The documented rule, written again from the schema text alone. */
const recompute = (readings: Array<Bias | null>): CoinPicture['agreement'] => {
  const present = readings.filter((r) => r !== null);
  if (present.length < 2) return 'insufficient';
  if (present.includes('bullish') && present.includes('bearish')) return 'conflicting';
  return present.every((r) => r === present[0]) ? 'aligned' : 'mixed';
};

const leanOfBook = (imbalance: number | null | undefined): Bias | null =>
  imbalance === null || imbalance === undefined
    ? null
    : imbalance > BOOK_LEAN_THRESHOLD
      ? 'bullish'
      : imbalance < -BOOK_LEAN_THRESHOLD
        ? 'bearish'
        : 'neutral';

describe('paid main brain agreement', () => {
  it('is recomputed for every coin of every scenario from the readings the body discloses', () => {
    let coins = 0;
    const seen = new Set<string>();
    for (const scenario of SCENARIOS) {
      const paid = buildPaidBodies(buildFreeSnapshots(scenario(), FIXTURE_CLOCK), FIXTURE_CLOCK);
      const body = PaidMainBrain.parse(paid.paidMainBrain);
      for (const coin of Object.values(body.coins)) {
        coins += 1;
        const r = coin.agreement_readings;
        // Each disclosed reading matches the section of the body it names.
        expect(r.brain).toBe(coin.bias);
        if (r.derivatives !== null) expect(r.derivatives).toBe(coin.derivatives?.vote);
        expect(r.order_book).toBe(leanOfBook(coin.liquidity?.book_imbalance));
        expect(coin.agreement).toBe(recompute([r.brain, r.derivatives, r.order_book]));
        seen.add(coin.agreement);
      }
    }
    expect(coins).toBeGreaterThan(20);
    expect(seen.size).toBeGreaterThan(1);
  });
});
