// A round's reference price is the first price seen at or after its start, and its end price the first seen at or
// after its end: by the price's own time (a ticker's time, a candle's close), not by the time of the run that saw
// it. The audit: a live collector without ALGO's ticker and with candles one bar late gave ALGO-20260310T03Z the
// close of the 01:00-02:00 bar as its start price, and its "outcome" was the 02:00->03:00 move, which voters could
// watch while the round was open to votes.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import type { MarketSnapshot, Provenance } from '../generator/market/types.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { collectSimulatedMarket } from '../generator/sources/collect.ts';
import { runArenaStep } from '../generator/state/step.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { callsFor, HOUR, MINUTE, pricesAll, T0, tempStore } from './arena-fixtures.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const ROUND = roundAt(T0);

/** A live run at `at` that sees every asset at `price`, the venue's time of that price being `priceTime`. */
const run = (s: ArenaStore, at: number, price: number, priceTime: number) =>
  runArenaStep({
    store: s,
    asOf: at,
    clock: { asOf: at, generatedAt: at, nextUpdateDue: at + MINUTE },
    mode: 'live',
    seed: null,
    brainCalls: callsFor('bullish', 60, price),
    prices: pricesAll(price),
    priceTimes: Object.fromEntries(TRACKED_ASSETS.map((a) => [a, priceTime])),
  });

const startPrice = (s: ArenaStore, roundId = ROUND.id) =>
  (
    s.db.prepare('SELECT start_price FROM brain_predictions WHERE round_id = ?').get(roundId) as
      { start_price: number | null } | undefined
  )?.start_price;

const outcome = (s: ArenaStore, roundId = ROUND.id) =>
  s.db
    .prepare('SELECT status, end_price, return_fraction, void_reason FROM outcomes WHERE round_id = ?')
    .get(roundId) as
    | { status: string; end_price: number | null; return_fraction: number | null; void_reason: string | null }
    | undefined;

describe('the reference price is a price from at or after the round start', () => {
  it('takes no price from before the start; a later run of the entry window gives the reference price', () => {
    const s = track(tempStore());
    // The first run of the round sees only the close of a candle that ended an hour before the start.
    const first = run(s, T0 + MINUTE, 90, T0 - HOUR);
    expect(first.sharedIntelligence.round.brain_call_recorded).toBe(true); // the call is recorded all the same
    expect(first.sharedIntelligence.price.at_round_start).toBeNull(); // before: 90, a price from before the start
    expect(startPrice(s)).toBeNull();
    // Three minutes in, a price of that time comes: it is the reference price.
    expect(run(s, T0 + 3 * MINUTE, 100, T0 + 3 * MINUTE).sharedIntelligence.price.at_round_start).toBe(100);
    // A later one does not replace it.
    run(s, T0 + 5 * MINUTE, 105, T0 + 5 * MINUTE);
    expect(startPrice(s)).toBe(100);
    run(s, ROUND.end + MINUTE, 101, ROUND.end + MINUTE);
    expect(outcome(s)).toMatchObject({ status: 'resolved', end_price: 101 });
    expect(outcome(s)!.return_fraction).toBeCloseTo(0.01, 10);
  });

  it('takes the close of the candle ending at the start: its time is the start', () => {
    const s = track(tempStore());
    run(s, T0 + 2 * MINUTE, 100, T0);
    expect(startPrice(s)).toBe(100);
  });

  it('voids the round when no price from at or after the start comes within the entry window', () => {
    const s = track(tempStore());
    run(s, T0 + MINUTE, 90, T0 - HOUR);
    run(s, T0 + 10 * MINUTE, 90, T0 - HOUR);
    // After the entry window a price of the round's time is no longer its reference price.
    run(s, T0 + 16 * MINUTE, 100, T0 + 16 * MINUTE);
    expect(startPrice(s)).toBeNull();
    run(s, ROUND.end + MINUTE, 101, ROUND.end + MINUTE);
    expect(outcome(s)).toMatchObject({ status: 'voided' });
    expect(outcome(s)!.void_reason).toMatch(/no price from at or after the round start/);
  });
});

describe('the end price is a price from at or after the round end', () => {
  it('waits for a later run when the first run after the end has only an older price', () => {
    const s = track(tempStore());
    run(s, T0 + MINUTE, 100, T0 + MINUTE);
    // The first run after the end sees the close of the bar that ended an hour before the end.
    run(s, ROUND.end + MINUTE, 120, ROUND.end - HOUR);
    expect(outcome(s)).toBeUndefined(); // before: resolved BULLISH on a price from inside the round
    run(s, ROUND.end + 5 * MINUTE, 101, ROUND.end + 5 * MINUTE);
    expect(outcome(s)).toMatchObject({ status: 'resolved', end_price: 101 });
  });

  it('voids the round when no price from at or after the end comes within 15 minutes of it', () => {
    const s = track(tempStore());
    run(s, T0 + MINUTE, 100, T0 + MINUTE);
    run(s, ROUND.end + MINUTE, 120, ROUND.end - HOUR);
    run(s, ROUND.end + 10 * MINUTE, 120, ROUND.end - HOUR);
    expect(outcome(s)).toBeUndefined();
    run(s, ROUND.end + 20 * MINUTE, 101, ROUND.end + 20 * MINUTE);
    expect(outcome(s)).toMatchObject({ status: 'voided', end_price: null });
    expect(outcome(s)!.void_reason).toMatch(/no price from at or after the round end came within 15 minutes/);
  });

  it('still says a round was voided because its first run after the end came late, when no run came before', () => {
    const s = track(tempStore());
    run(s, T0 + MINUTE, 100, T0 + MINUTE);
    run(s, ROUND.end + 20 * MINUTE, 101, ROUND.end + 20 * MINUTE);
    expect(outcome(s)!.void_reason).toMatch(/the first run after the round end came 1200 s late/);
  });
});

describe('the audit: a live collector without the ticker of ALGO, and its candles one bar late', () => {
  const asOf = Date.parse('2026-03-10T03:05:00Z');
  const round = roundAt(asOf);

  /** The simulated market of the hour, labelled live, with ALGO's ticker missing and maybe its last candle too. */
  const collector = (lateBars: number) => async (request: Parameters<typeof collectSimulatedMarket>[0]) => {
    const snapshot: MarketSnapshot = await collectSimulatedMarket(request);
    return {
      ...snapshot,
      mode: 'live' as const,
      seed: null,
      provider: 'public venues',
      assets: snapshot.assets.map((a) => {
        const live = <T extends { provenance: Provenance }>(x: T | null): T | null =>
          x && { ...x, provenance: { ...x.provenance, mode: 'live' } };
        if (a.symbol !== 'ALGO') {
          return {
            ...a,
            candles: live(a.candles),
            ticker: live(a.ticker),
            book: live(a.book),
            funding: live(a.funding),
            openInterest: live(a.openInterest),
            liquidations: live(a.liquidations),
          };
        }
        const candles = a.candles!;
        return {
          ...a,
          ticker: null,
          book: live(a.book),
          funding: live(a.funding),
          openInterest: live(a.openInterest),
          liquidations: live(a.liquidations),
          candles: {
            value: candles.value.slice(0, candles.value.length - lateBars),
            provenance: {
              ...candles.provenance,
              mode: 'live' as const,
              asOf: candles.provenance.asOf - lateBars * HOUR,
            },
          },
        };
      }),
    };
  };

  const roundOf = async (lateBars: number) => {
    const dir = await tempDir('emi-price-time-');
    for (const at of [asOf, asOf + HOUR]) {
      const report = await runPipeline({
        ...simulatedRun(dir, at),
        now: () => at,
        collector: collector(lateBars),
      });
      expect(report.status).not.toBe('failed');
    }
    const s = track(openArenaStore(join(dir, 'var', 'arena.sqlite')));
    return { start: startPrice(s, round.id), outcome: outcome(s, round.id) };
  };

  it('voids ALGO-20260310T03Z instead of scoring it from the close of the 01:00-02:00 bar', async () => {
    expect(round.id).toBe('ALGO-20260310T03Z');
    const { start, outcome: o } = await roundOf(1);
    expect(start).toBeNull(); // before: 0.16646, a price of 02:00
    expect(o).toMatchObject({ status: 'voided' });
    expect(o!.void_reason).toMatch(/no price from at or after the round start/);
  }, 60_000);

  it('scores it from the candle closes of 03:00 and 04:00 when the candles are on time', async () => {
    const { start, outcome: o } = await roundOf(0);
    expect(start).toBe(0.16625); // the close of the 02:00-03:00 bar, at the start
    expect(o).toMatchObject({ status: 'resolved', end_price: 0.16666 }); // the close of the 03:00-04:00 bar
  }, 60_000);
});
