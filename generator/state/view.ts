// Reads the arena read model (ArenaView) from the store; run inside the step's transaction for a consistent view.
import type Database from 'better-sqlite3';
import type { ArenaEvent } from '../../schemas/arena.ts';
import type { ArenaPrediction, DataMode, TrackedAsset } from '../../schemas/common.ts';
import type { RunClock } from '../engines/clock.ts';
import { ownsRound } from '../engines/arena/data-mode.ts';
import { WINDOW_DAYS } from '../engines/arena/metrics.ts';
import { roundAt } from '../engines/arena/rounds.ts';
import { returnPercentText } from '../engines/arena/scoring.ts';
import type { ArenaView, BrainCall } from '../engines/arena/types.ts';
import { iso } from '../engines/clock.ts';
import {
  brainCallFor,
  count,
  latestBrainCall,
  latestLessons,
  leftOutRounds,
  modeVotes,
  newestOfMode,
  ownModeKeys,
  ownModeSql,
  resolvedRounds,
  roundTally,
} from './repo.ts';
import { runCounts } from './run-log.ts';
import { schemaVersion, type ArenaStore } from './store.ts';

const DAY_MS = 86_400_000;
const EVENTS_SHOWN = 10;

interface EventRow {
  at: number;
  kind: 'brain_call_recorded' | 'round_resolved' | 'round_voided';
  round_id: string;
  asset: TrackedAsset;
  prediction: string | null;
  outcome: ArenaPrediction | null;
  return_fraction: number | null;
  void_reason: string | null;
  replayed: number;
}

/**
 * The newest records of one mode key (see ownModeKeys): its calls and its outcomes, each the newest by index.
 * Parameters: key, limit, key, limit.
 */
const EVENTS_SQL = `
  SELECT * FROM (
    SELECT p.recorded_at_ms AS at, 'brain_call_recorded' AS kind, p.round_id, p.asset, p.prediction,
           NULL AS outcome, NULL AS return_fraction, NULL AS void_reason, p.replayed
    FROM brain_predictions p WHERE COALESCE(p.data_mode, 'unknown') = ? ORDER BY p.recorded_at_ms DESC LIMIT ?)
  UNION ALL
  SELECT * FROM (
    SELECT o.resolved_at_ms, CASE o.status WHEN 'resolved' THEN 'round_resolved' ELSE 'round_voided' END,
           o.round_id, p.asset, p.prediction, o.outcome, o.return_fraction, o.void_reason, o.replayed
    FROM outcome_times t JOIN outcomes o USING (round_id) JOIN brain_predictions p USING (round_id)
    WHERE t.call_mode = ? ORDER BY t.resolved_at_ms DESC, 2 DESC LIMIT ?)`;

/** Newest first; at one time an outcome before the call it follows (as kind DESC orders them). */
const newestFirst = (a: EventRow, b: EventRow): number =>
  b.at - a.at || (a.kind === b.kind ? 0 : a.kind < b.kind ? 1 : -1);

const eventDetail = (e: EventRow): string => {
  if (e.kind === 'brain_call_recorded') return `brain call ${e.prediction} recorded for the round`;
  if (e.kind === 'round_voided') return `round voided: ${e.void_reason ?? 'no price'}`;
  const pct = returnPercentText(e.return_fraction ?? 0, e.outcome);
  return `resolved ${e.outcome} (${pct}); brain called ${e.prediction}`;
};

const recentEvents = (store: ArenaStore, mode: DataMode): ArenaEvent[] => {
  const newest = store.db.prepare(EVENTS_SQL);
  return newestOfMode(
    mode,
    (key) => newest.all(key, EVENTS_SHOWN, key, EVENTS_SHOWN) as EventRow[],
    newestFirst,
    EVENTS_SHOWN,
  ).map((e) => ({
    at: iso(e.at),
    kind: e.kind,
    round_id: e.round_id,
    asset: e.asset,
    detail: eventDetail(e),
    replayed: e.replayed === 1,
  }));
};

/** All-time counts of this run's mode, from the totals the store's triggers keep (migration 5). */
const modeTotals = (db: Database.Database, mode: DataMode) => {
  const keys = ownModeKeys(mode);
  const own = <T extends { data_mode: string }>(sql: string): T[] =>
    (db.prepare(sql).all() as T[]).filter((r) => keys.includes(r.data_mode));
  const calls = own<CallTotal>('SELECT * FROM call_totals');
  const outcomes = own<OutcomeTotal>('SELECT * FROM outcome_totals');
  const lessons = own<LessonTotal>('SELECT * FROM lesson_totals');
  const times = lessons.map((l) => l.last_created_at_ms).filter((t): t is number => t !== null);
  const callsOf = (keep: (c: CallTotal) => boolean) => sumOf(calls, keep, (c) => c.calls);
  const roundsOf = (keep: (o: OutcomeTotal) => boolean) => sumOf(outcomes, keep, (o) => o.rounds);
  const resolved = (outcome: string) => roundsOf((o) => o.status === 'resolved' && o.outcome === outcome);
  return {
    recordedCalls: callsOf(() => true),
    replayedCalls: callsOf((c) => c.replayed === 1),
    callsByPrediction: {
      bullish: callsOf((c) => c.prediction === 'BULLISH'),
      bearish: callsOf((c) => c.prediction === 'BEARISH'),
      neutral: callsOf((c) => c.prediction === 'NEUTRAL'),
      none: callsOf((c) => c.prediction === 'NONE'),
    },
    lessons: sumOf(
      lessons,
      () => true,
      (l) => l.lessons,
    ),
    lessonsReplayed: sumOf(
      lessons,
      (l) => l.replayed === 1,
      (l) => l.lessons,
    ),
    lastLessonAt: times.length > 0 ? Math.max(...times) : null,
    outcomes: { bullish: resolved('BULLISH'), bearish: resolved('BEARISH'), neutral: resolved('NEUTRAL') },
    voided: roundsOf((o) => o.status === 'voided'),
  };
};

/** The sum of `n` over the rows `keep` keeps. */
const sumOf = <T>(rows: readonly T[], keep: (r: T) => boolean, n: (r: T) => number): number =>
  rows.reduce((a, r) => (keep(r) ? a + n(r) : a), 0);

interface CallTotal {
  data_mode: string;
  prediction: string;
  replayed: number;
  calls: number;
}
interface OutcomeTotal {
  data_mode: string;
  status: string;
  outcome: string;
  rounds: number;
}
interface LessonTotal {
  data_mode: string;
  replayed: number;
  lessons: number;
  last_created_at_ms: number | null;
}

export interface ViewInput {
  mode: DataMode;
  clock: RunClock;
  brainCalls: BrainCall[];
  prices: Record<string, number | null>;
  /** The run-log row of the run building the view: counted ok while pending (its files land only if it publishes). */
  thisRun?: number | null;
}

export const readArenaView = (store: ArenaStore, input: ViewInput): ArenaView => {
  const db = store.db;
  const { mode } = input;
  const { asOf } = input.clock;
  const round = roundAt(asOf);
  // Calls, outcomes and lessons of rounds recorded in this run's mode only (votes: see modeVotes).
  const own = ownModeSql(mode);
  // The window is (since, asOf]: rounds that ended after since, up to and at asOf (resolvedRounds).
  const since = asOf - WINDOW_DAYS * DAY_MS;
  const recordedCall = brainCallFor(db, round.id);
  const runs = runCounts(db, input.thisRun ?? null);
  // Pending rows of other runs: none under the run lock (the run that takes it marks them unfinished); any other
  // has not recorded that it published, so it is not counted ok.
  const unfinished = runs.unfinished + runs.pending;
  // Votes count with their round's mode, synthetic ones in simulated mode only (ownVoteSql).
  const votes = modeVotes(db, mode);
  return {
    mode,
    clock: input.clock,
    round,
    roundTally: roundTally(db, round.id),
    // A call recorded by a run of another mode is not this run's: the snapshot falls back to the run's own call.
    recordedCall: recordedCall && ownsRound(recordedCall.dataMode, mode) ? recordedCall : null,
    runCall: input.brainCalls.find((c) => c.asset === round.asset) ?? null,
    currentPrice: input.prices[round.asset] ?? null,
    window: resolvedRounds(db, since, asOf, mode),
    leftOut: leftOutRounds(db, since, asOf, mode),
    voidedInWindow: count(
      db,
      `SELECT COUNT(*) AS n FROM outcomes o JOIN brain_predictions p USING (round_id) JOIN rounds r USING (round_id)
       WHERE ${own} AND o.status = 'voided' AND r.end_ms > ? AND r.end_ms <= ?`,
      since,
      asOf,
    ),
    lessons: latestLessons(db, 20, mode),
    events: recentEvents(store, mode),
    totals: {
      ...modeTotals(db, mode),
      latestCall: latestBrainCall(db, mode),
      roundsWithVotes: votes.rounds,
      roundsWithHumanVotes: votes.humanRounds,
      votes: votes.tally,
      distinctHumanVoters: votes.humanVoters,
      votesLeftOut: votes.leftOut,
    },
    runs: {
      total: runs.total,
      ok: runs.ok + (runs.thisRunPending ? 1 : 0),
      failed: runs.failed + unfinished,
      unfinished,
      okBeforeOutcomes: runs.okBeforeOutcomes,
      lastRunAt: runs.lastRunAt,
      lastOkAt: runs.lastOkAt,
    },
    schemaVersion: schemaVersion(store),
  };
};
