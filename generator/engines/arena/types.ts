// What the arena takes from the rest of the generator, and the read model its response builders consume.
import type { ArenaEvent } from '../../../schemas/arena.ts';
import type { ArenaReading, Bias, DataMode, TrackedAsset } from '../../../schemas/common.ts';
import type { TeacherLesson } from '../../../schemas/teacher-lessons.ts';
import type { RunClock } from '../clock.ts';
import type { VoteCounts } from './consensus.ts';
import type { LeftOut, RecordedMode } from './data-mode.ts';
import type { ResolvedRound } from './lessons.ts';
import type { Round } from './rounds.ts';

/** The main brain's call for one asset, as the engines produce it for a given market time. */
export interface BrainCall {
  asset: string;
  bias: Bias | null;
  confidence: number | null;
  price: number | null;
}

export const predictionOfBias = (bias: BrainCall['bias']): ArenaReading =>
  bias ? (bias.toUpperCase() as ArenaReading) : 'NONE';

/** The inverse of `predictionOfBias`: null for NONE. */
export const biasOfPrediction = (prediction: ArenaReading): BrainCall['bias'] =>
  prediction === 'NONE' ? null : (prediction.toLowerCase() as Bias);

/** A brain call as recorded for a round. */
export interface RecordedCall {
  roundId: string;
  asset: TrackedAsset;
  prediction: ArenaReading;
  confidence: number | null;
  startPrice: number | null;
  recordedAt: number;
  replayed: boolean;
  /** The data mode of the run that recorded it; null when recorded before the store kept it (unknown). */
  dataMode: RecordedMode;
}

/** Votes in the store left out of a run's counts because they belong to another data mode (see ownVoteSql). */
export interface VotesLeftOut {
  votes: number;
  /** Their modes, sorted, null (unknown: a round called before the store kept data modes) last. */
  modes: RecordedMode[];
}

export interface VoteTally {
  counts: VoteCounts; // human votes only
  simulated: VoteCounts; // the seeded synthetic crowd, kept apart
  human: number;
  synthetic: number;
  replayed: number;
}

/** Everything the four arena bodies are built from, read from the store in one transaction. */
export interface ArenaView {
  mode: DataMode;
  clock: RunClock;
  round: Round;
  roundTally: VoteTally;
  recordedCall: RecordedCall | null;
  runCall: BrainCall | null; // this run's call for the round's asset
  currentPrice: number | null;
  // Rounds, calls, outcomes, lessons and events below are those recorded in `mode` only (see data-mode.ts); the vote
  // counts of `totals` those a run of `mode` counts (ownVoteSql in generator/state/repo.ts), told apart by source.
  window: ResolvedRound[]; // resolved rounds inside the reporting window
  leftOut: LeftOut; // resolved rounds of the window recorded in another mode
  voidedInWindow: number;
  lessons: TeacherLesson[]; // newest first
  events: ArenaEvent[]; // newest first
  totals: {
    recordedCalls: number;
    replayedCalls: number;
    callsByPrediction: Record<'bullish' | 'bearish' | 'neutral' | 'none', number>;
    latestCall: RecordedCall | null;
    lessons: number;
    lessonsReplayed: number;
    lastLessonAt: number | null;
    outcomes: Record<'bullish' | 'bearish' | 'neutral', number>;
    voided: number;
    roundsWithVotes: number; // rounds with a vote from any source, synthetic included
    roundsWithHumanVotes: number; // rounds with at least one vote from a person
    votes: VoteTally;
    distinctHumanVoters: number;
    votesLeftOut: VotesLeftOut;
  };
  runs: {
    total: number;
    ok: number;
    /** Failed runs, the unfinished ones included. */
    failed: number;
    /** Of the failed, runs that ended before they recorded whether they published (killed). */
    unfinished: number;
    /** Of the ok, runs logged before the store recorded whether runs published (see RunCounts.okBeforeOutcomes). */
    okBeforeOutcomes: number;
    lastRunAt: number | null;
    lastOkAt: number | null;
  };
  schemaVersion: number;
}
