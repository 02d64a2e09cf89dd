// Reads the arena read model (ArenaView) from the store; run inside the step's transaction for a consistent view.
import type { ArenaEvent } from '../../schemas/arena.ts';
import type { DataMode, TrackedAsset } from '../../schemas/common.ts';
import type { RunClock } from '../engines/clock.ts';
import { WINDOW_DAYS } from '../engines/arena/metrics.ts';
import { roundAt } from '../engines/arena/rounds.ts';
import type { ArenaView, BrainCall } from '../engines/arena/types.ts';
import { iso } from '../engines/clock.ts';
import {
  allVotesTally,
  brainCallFor,
  count,
  latestBrainCall,
  latestLessons,
  resolvedRounds,
  roundTally,
} from './repo.ts';
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

const EVENTS_SQL = `
  SELECT * FROM (
    SELECT recorded_at_ms AS at, 'brain_call_recorded' AS kind, round_id, asset, prediction, NULL AS outcome,
           NULL AS return_fraction, NULL AS void_reason, replayed FROM brain_predictions
    UNION ALL
    SELECT o.resolved_at_ms, CASE o.status WHEN 'resolved' THEN 'round_resolved' ELSE 'round_voided' END,
           o.round_id, p.asset, p.prediction, o.outcome, o.return_fraction, o.void_reason, o.replayed
    FROM outcomes o JOIN brain_predictions p USING (round_id)
  ) ORDER BY at DESC, kind DESC LIMIT ?`;

const eventDetail = (e: EventRow): string => {
  if (e.kind === 'brain_call_recorded') return `brain call ${e.prediction} recorded for the round`;
  if (e.kind === 'round_voided') return `round voided: ${e.void_reason ?? 'no price'}`;
  const pct = ((e.return_fraction ?? 0) * 100).toFixed(2);
  return `resolved ${e.outcome} (${Number(pct) >= 0 ? '+' : ''}${pct}%); brain called ${e.prediction}`;
};

const recentEvents = (store: ArenaStore): ArenaEvent[] =>
  (store.db.prepare(EVENTS_SQL).all(EVENTS_SHOWN) as EventRow[]).map((e) => ({
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
}

export const readArenaView = (store: ArenaStore, input: ViewInput): ArenaView => {
  const db = store.db;
  const { asOf } = input.clock;
  const round = roundAt(asOf);
  const byPrediction = (p: string) =>
    count(db, 'SELECT COUNT(*) AS n FROM brain_predictions WHERE prediction = ?', p);
  const byOutcome = (o: string) =>
    count(db, "SELECT COUNT(*) AS n FROM outcomes WHERE status = 'resolved' AND outcome = ?", o);
  const runs = (status: string) => count(db, 'SELECT COUNT(*) AS n FROM run_log WHERE status = ?', status);
  const since = asOf - WINDOW_DAYS * DAY_MS;
  return {
    mode: input.mode,
    clock: input.clock,
    round,
    roundTally: roundTally(db, round.id),
    recordedCall: brainCallFor(db, round.id),
    runCall: input.brainCalls.find((c) => c.asset === round.asset) ?? null,
    currentPrice: input.prices[round.asset] ?? null,
    window: resolvedRounds(db, since, asOf),
    voidedInWindow: count(
      db,
      `SELECT COUNT(*) AS n FROM outcomes o JOIN rounds r USING (round_id)
       WHERE o.status = 'voided' AND r.end_ms >= ? AND r.end_ms <= ?`,
      since,
      asOf,
    ),
    lessons: latestLessons(db, 20),
    events: recentEvents(store),
    totals: {
      recordedCalls: count(db, 'SELECT COUNT(*) AS n FROM brain_predictions'),
      replayedCalls: count(db, 'SELECT COUNT(*) AS n FROM brain_predictions WHERE replayed = 1'),
      callsByPrediction: {
        bullish: byPrediction('BULLISH'),
        bearish: byPrediction('BEARISH'),
        neutral: byPrediction('NEUTRAL'),
        none: byPrediction('NONE'),
      },
      latestCall: latestBrainCall(db),
      lessons: count(db, 'SELECT COUNT(*) AS n FROM lessons'),
      lessonsReplayed: count(db, 'SELECT COUNT(*) AS n FROM lessons WHERE replayed = 1'),
      lastLessonAt: (db.prepare('SELECT MAX(created_at_ms) AS n FROM lessons').get() as { n: number | null })
        .n,
      outcomes: {
        bullish: byOutcome('BULLISH'),
        bearish: byOutcome('BEARISH'),
        neutral: byOutcome('NEUTRAL'),
      },
      voided: count(db, "SELECT COUNT(*) AS n FROM outcomes WHERE status = 'voided'"),
      roundsWithVotes: count(db, 'SELECT COUNT(DISTINCT round_id) AS n FROM votes'),
      roundsWithHumanVotes: count(
        db,
        "SELECT COUNT(DISTINCT round_id) AS n FROM votes WHERE source = 'human'",
      ),
      votes: allVotesTally(db),
      distinctHumanVoters: count(
        db,
        "SELECT COUNT(DISTINCT voter_hash) AS n FROM votes WHERE source = 'human'",
      ),
    },
    runs: {
      total: count(db, 'SELECT COUNT(*) AS n FROM run_log'),
      ok: runs('ok'),
      failed: runs('failed'),
      lastRunAt: (db.prepare('SELECT MAX(finished_at_ms) AS n FROM run_log').get() as { n: number | null }).n,
      lastOkAt: (
        db.prepare("SELECT MAX(finished_at_ms) AS n FROM run_log WHERE status = 'ok'").get() as {
          n: number | null;
        }
      ).n,
    },
    schemaVersion: schemaVersion(store),
  };
};
