// The writes shared by live runs and backfill replays: recording a round's call, adding the synthetic crowd and
// resolving a round into an outcome and a lesson. Each is idempotent; the caller owns the transaction.
import type Database from 'better-sqlite3';
import type { DataMode } from '../../schemas/common.ts';
import { syntheticCrowd } from '../engines/arena/crowd.ts';
import { buildLesson } from '../engines/arena/lessons.ts';
import type { Round } from '../engines/arena/rounds.ts';
import { NEUTRAL_BAND, outcomeOf } from '../engines/arena/scoring.ts';
import { predictionOfBias, type BrainCall, type RecordedCall } from '../engines/arena/types.ts';
import { hashVoter } from './store.ts';
import { ensureRound, insertLesson, insertOutcome, insertVote, recordBrainCall, roundTally } from './repo.ts';

type Db = Database.Database;

/**
 * Records the brain's call for the round's asset with the data mode of the run (first writer wins: one call per
 * round, whatever its mode). Returns true when newly recorded.
 */
export const recordRoundCall = (
  db: Db,
  round: Round,
  call: BrainCall | undefined,
  price: number | null,
  at: number,
  replayed: boolean,
  dataMode: DataMode,
): boolean => {
  ensureRound(db, round);
  return recordBrainCall(db, {
    roundId: round.id,
    asset: round.asset,
    prediction: predictionOfBias(call?.bias ?? null),
    confidence: call?.confidence ?? null,
    startPrice: price,
    recordedAt: at,
    replayed,
    dataMode,
  });
};

/** Adds the seeded synthetic voters of a round whose vote time has come by `untilMs`. */
export const addSyntheticCrowd = (
  db: Db,
  salt: string,
  seed: number,
  round: Round,
  untilMs: number,
  replayed: boolean,
): number => {
  ensureRound(db, round);
  let added = 0;
  for (const v of syntheticCrowd(seed, round)) {
    if (v.at > untilMs) continue;
    const voterHash = hashVoter(salt, v.voterKey);
    const row = { roundId: round.id, voterHash, prediction: v.prediction, at: v.at, replayed } as const;
    if (insertVote(db, { ...row, source: 'synthetic' })) added += 1;
  }
  return added;
};

export interface Settlement {
  round: Round;
  call: RecordedCall;
  endPrice: number | null;
  resolvedAt: number;
  replayed: boolean;
  /** Set when the round cannot be scored fairly even with a price (e.g. resolved too late). */
  voidReason?: string;
}

/** Resolves a round exactly once: an outcome row (resolved or voided) and, when resolved, its lesson. */
export const settleRound = (db: Db, s: Settlement): 'resolved' | 'voided' | 'already_settled' => {
  const tally = roundTally(db, s.round.id);
  const start = s.call.startPrice;
  const reason =
    s.voidReason ??
    (start === null || start <= 0
      ? 'no price was recorded at the round start'
      : s.endPrice === null || s.endPrice <= 0
        ? 'no price was available at the round end'
        : null);
  const base = {
    roundId: s.round.id,
    neutralBand: NEUTRAL_BAND,
    tally,
    resolvedAt: s.resolvedAt,
    replayed: s.replayed,
  };
  if (reason !== null || start === null || s.endPrice === null) {
    const voided = {
      ...base,
      status: 'voided',
      outcome: null,
      endPrice: s.endPrice,
      returnFraction: null,
    } as const;
    return insertOutcome(db, { ...voided, voidReason: reason ?? 'missing price' })
      ? 'voided'
      : 'already_settled';
  }
  const outcome = outcomeOf(start, s.endPrice);
  const returnFraction = s.endPrice / start - 1;
  const fresh = insertOutcome(db, {
    ...base,
    status: 'resolved',
    outcome,
    endPrice: s.endPrice,
    returnFraction,
    voidReason: null,
  });
  if (!fresh) return 'already_settled';
  const lesson = buildLesson({
    roundId: s.round.id,
    asset: s.round.asset,
    brainCall: s.call.prediction,
    brainConfidence: s.call.confidence,
    counts: tally.counts,
    humanVotes: tally.human,
    syntheticVotes: tally.synthetic,
    outcome,
    returnFraction,
    resolvedAt: s.resolvedAt,
    replayed: s.replayed,
  });
  insertLesson(db, lesson, s.resolvedAt);
  return 'resolved';
};
