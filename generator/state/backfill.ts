// Replays past rounds so a fresh install shows lessons and performance at once. Every record it writes (brain
// call, synthetic crowd votes, outcome, lesson) is marked replayed; rounds already on record are left alone.
import { roundByIndex, ROUND_MS } from '../engines/arena/rounds.ts';
import type { BrainCall } from '../engines/arena/types.ts';
import { brainCallFor } from './repo.ts';
import { addSyntheticCrowd, recordRoundCall, settleRound } from './settle.ts';
import { voterSalt, type ArenaStore } from './store.ts';
import { MAX_BACKFILL_DAYS } from '../defaults.ts';

export interface BackfillOptions {
  days: number;
  /** Replay rounds that ended at or before this time (ms). */
  asOf: number;
  /** Seed of the synthetic crowd. */
  seed: number;
  /** The brain's calls as they would have been at a past time (e.g. the simulator replayed to that time). */
  brainCallAt: (asOfMs: number) => Promise<BrainCall[]>;
  priceAt: (asset: string, ms: number) => Promise<number | null>;
  /** This machine's clock (ms; default Date.now()): no round ending after it is replayed, whatever `asOf` says. */
  now?: number;
}

export interface BackfillResult {
  rounds: number; // rounds in the replay window
  resolved: number;
  voided: number;
  skipped: number; // already on record
}

export { MAX_BACKFILL_DAYS };

/** Run it under withRunLock: it writes the same tables as a generator run. */
export const backfill = async (store: ArenaStore, opts: BackfillOptions): Promise<BackfillResult> => {
  if (!Number.isInteger(opts.days) || opts.days < 1 || opts.days > MAX_BACKFILL_DAYS) {
    throw new RangeError(`backfill days must be a whole number from 1 to ${MAX_BACKFILL_DAYS}`);
  }
  const salt = voterSalt(store);
  const first = Math.ceil((opts.asOf - opts.days * 86_400_000) / ROUND_MS);
  // The last round that has ended by asOf and by the clock: a round still running, or not begun, has no outcome yet
  // (resolving it would publish one that has not happened and refuse the votes people still send for it).
  const last = Math.floor(Math.min(opts.asOf, opts.now ?? Date.now()) / ROUND_MS) - 1;
  const result: BackfillResult = { rounds: 0, resolved: 0, voided: 0, skipped: 0 };
  for (let index = first; index <= last; index++) {
    const round = roundByIndex(index);
    result.rounds += 1;
    if (brainCallFor(store.db, round.id)) {
      result.skipped += 1;
      continue;
    }
    // Async look-ups first: better-sqlite3 transactions are synchronous.
    const call = (await opts.brainCallAt(round.start)).find((c) => c.asset === round.asset);
    const startPrice = (await opts.priceAt(round.asset, round.start)) ?? call?.price ?? null;
    const endPrice = await opts.priceAt(round.asset, round.end);
    const replay = store.db.transaction(() => {
      // Simulated: a backfill replays the simulated market (backfill-command.ts), never recorded live data.
      const recorded = recordRoundCall(store.db, round, call, startPrice, round.start, true, 'simulated');
      if (!recorded) return 'skipped' as const;
      addSyntheticCrowd(store.db, salt, opts.seed, round, round.end - 1, true);
      return settleRound(store.db, {
        round,
        call: brainCallFor(store.db, round.id)!,
        endPrice,
        resolvedAt: round.end,
        replayed: true,
      });
    });
    const outcome = replay.immediate();
    if (outcome === 'resolved') result.resolved += 1;
    else if (outcome === 'voided') result.voided += 1;
    else result.skipped += 1;
  }
  return result;
};
