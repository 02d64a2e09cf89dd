// Reads the arena read model (ArenaView) from the store; run inside the step's transaction for a consistent view.
import type { ArenaEvent } from '../../schemas/arena.ts';
import type { DataMode, TrackedAsset } from '../../schemas/common.ts';
import type { RunClock } from '../engines/clock.ts';
import { ownsRound } from '../engines/arena/data-mode.ts';
import { WINDOW_DAYS } from '../engines/arena/metrics.ts';
import { roundAt } from '../engines/arena/rounds.ts';
import type { ArenaView, BrainCall } from '../engines/arena/types.ts';
import { iso } from '../engines/clock.ts';
import {
  brainCallFor,
  count,
  latestBrainCall,
  latestLessons,
  leftOutRounds,
  modeVotes,
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
  outcome: string | null;
  return_fraction: number | null;
  void_reason: string | null;
  replayed: number;
}

/** The newest records of rounds recorded in `mode`. */
const eventsSql = (mode: DataMode): string => `
  SELECT * FROM (
    SELECT p.recorded_at_ms AS at, 'brain_call_recorded' AS kind, p.round_id, p.asset, p.prediction,
           NULL AS outcome, NULL AS return_fraction, NULL AS void_reason, p.replayed
    FROM brain_predictions p WHERE ${ownModeSql(mode)}
    UNION ALL
    SELECT o.resolved_at_ms, CASE o.status WHEN 'resolved' THEN 'round_resolved' ELSE 'round_voided' END,
           o.round_id, p.asset, p.prediction, o.outcome, o.return_fraction, o.void_reason, o.replayed
    FROM outcomes o JOIN brain_predictions p USING (round_id) WHERE ${ownModeSql(mode)}
  ) ORDER BY at DESC, kind DESC LIMIT ?`;

const eventDetail = (e: EventRow): string => {
  if (e.kind === 'brain_call_recorded') return `brain call ${e.prediction} recorded for the round`;
  if (e.kind === 'round_voided') return `round voided: ${e.void_reason ?? 'no price'}`;
  const pct = ((e.return_fraction ?? 0) * 100).toFixed(2);
  return `resolved ${e.outcome} (${Number(pct) >= 0 ? '+' : ''}${pct}%); brain called ${e.prediction}`;
};

const recentEvents = (store: ArenaStore, mode: DataMode): ArenaEvent[] =>
  (store.db.prepare(eventsSql(mode)).all(EVENTS_SHOWN) as EventRow[]).map((e) => ({
    at: iso(e.at),
    kind: e.kind,
    round_id: e.round_id,
    asset: e.asset,
    detail: eventDetail(e),
    replayed: e.replayed === 1,
  }));

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
  const calls = `FROM brain_predictions p WHERE ${own}`;
  const outcomes = `FROM outcomes o JOIN brain_predictions p USING (round_id) WHERE ${own}`;
  const lessons = `FROM lessons l JOIN brain_predictions p USING (round_id) WHERE ${own}`;
  const byPrediction = (p: string) => count(db, `SELECT COUNT(*) AS n ${calls} AND p.prediction = ?`, p);
  const byOutcome = (o: string) =>
    count(db, `SELECT COUNT(*) AS n ${outcomes} AND o.status = 'resolved' AND o.outcome = ?`, o);
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
       WHERE ${own} AND o.status = 'voided' AND r.end_ms >= ? AND r.end_ms <= ?`,
      since,
      asOf,
    ),
    lessons: latestLessons(db, 20, mode),
    events: recentEvents(store, mode),
    totals: {
      recordedCalls: count(db, `SELECT COUNT(*) AS n ${calls}`),
      replayedCalls: count(db, `SELECT COUNT(*) AS n ${calls} AND p.replayed = 1`),
      callsByPrediction: {
        bullish: byPrediction('BULLISH'),
        bearish: byPrediction('BEARISH'),
        neutral: byPrediction('NEUTRAL'),
        none: byPrediction('NONE'),
      },
      latestCall: latestBrainCall(db, mode),
      lessons: count(db, `SELECT COUNT(*) AS n ${lessons}`),
      lessonsReplayed: count(db, `SELECT COUNT(*) AS n ${lessons} AND l.replayed = 1`),
      lastLessonAt: (db.prepare(`SELECT MAX(l.created_at_ms) AS n ${lessons}`).get() as { n: number | null })
        .n,
      outcomes: {
        bullish: byOutcome('BULLISH'),
        bearish: byOutcome('BEARISH'),
        neutral: byOutcome('NEUTRAL'),
      },
      voided: count(db, `SELECT COUNT(*) AS n ${outcomes} AND o.status = 'voided'`),
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
