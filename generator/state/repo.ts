// Reads and writes of the arena store. Callers own the transactions; every write that could repeat across
// runs is an INSERT OR IGNORE on a unique key, so repeating or overlapping runs change nothing twice.
import type Database from 'better-sqlite3';
import {
  DataMode,
  type ArenaPrediction,
  type ArenaReading,
  type TrackedAsset,
} from '../../schemas/common.ts';
import type { TeacherLesson } from '../../schemas/teacher-lessons.ts';
import type { Round } from '../engines/arena/rounds.ts';
import type { ResolvedRound } from '../engines/arena/lessons.ts';
import type { LeftOut, RecordedMode } from '../engines/arena/data-mode.ts';
import type { RecordedCall, VotesLeftOut, VoteTally } from '../engines/arena/types.ts';

type Db = Database.Database;
const flag = (b: boolean): number => (b ? 1 : 0);

/**
 * SQL condition: the call (brain_predictions as `alias`) was recorded in `mode`, the rounds a run of that mode counts
 * as its own. The same rule as ownsRound: an unknown mode (NULL) counts as simulated only.
 */
export const ownModeSql = (mode: DataMode, alias = 'p'): string => {
  const m = DataMode.parse(mode); // one of three fixed words, so it may stand in the SQL text
  // IS, not =: NULL-safe, so that NOT of the condition holds for the unknown rows it does not take.
  return m === 'simulated'
    ? `(${alias}.data_mode IS 'simulated' OR ${alias}.data_mode IS NULL)`
    : `${alias}.data_mode IS '${m}'`;
};

export const ensureRound = (db: Db, r: Round): void => {
  db.prepare(
    'INSERT OR IGNORE INTO rounds (round_id, round_index, asset, start_ms, end_ms) VALUES (?, ?, ?, ?, ?)',
  ).run(r.id, r.index, r.asset, r.start, r.end);
};

export interface VoteRow {
  roundId: string;
  voterHash: string;
  prediction: ArenaPrediction;
  at: number;
  source: 'human' | 'synthetic';
  replayed: boolean;
}

/** Returns true when the vote was new. */
export const insertVote = (db: Db, v: VoteRow): boolean =>
  db
    .prepare(
      `INSERT OR IGNORE INTO votes (round_id, voter_hash, prediction, voted_at_ms, source, replayed)
       VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .run(v.roundId, v.voterHash, v.prediction, v.at, v.source, flag(v.replayed)).changes === 1;

export const hasVoted = (db: Db, roundId: string, voterHash: string): boolean =>
  db.prepare('SELECT 1 FROM votes WHERE round_id = ? AND voter_hash = ?').get(roundId, voterHash) !==
  undefined;

// Human and synthetic votes are tallied apart: human consensus never includes a synthetic vote.
const TALLY_COLUMNS = `
  COALESCE(SUM(v.source = 'human' AND v.prediction = 'BULLISH'), 0) AS bullish,
  COALESCE(SUM(v.source = 'human' AND v.prediction = 'BEARISH'), 0) AS bearish,
  COALESCE(SUM(v.source = 'human' AND v.prediction = 'NEUTRAL'), 0) AS neutral,
  COALESCE(SUM(v.source = 'synthetic' AND v.prediction = 'BULLISH'), 0) AS s_bullish,
  COALESCE(SUM(v.source = 'synthetic' AND v.prediction = 'BEARISH'), 0) AS s_bearish,
  COALESCE(SUM(v.source = 'synthetic' AND v.prediction = 'NEUTRAL'), 0) AS s_neutral,
  COALESCE(SUM(v.source = 'human'), 0) AS human,
  COALESCE(SUM(v.source = 'synthetic'), 0) AS synthetic, COALESCE(SUM(v.replayed), 0) AS replayed`;
const TALLY_SQL = `SELECT ${TALLY_COLUMNS} FROM votes v`;

const toTally = (r: Record<string, number>): VoteTally => ({
  counts: { bullish: r.bullish!, bearish: r.bearish!, neutral: r.neutral! },
  simulated: { bullish: r.s_bullish!, bearish: r.s_bearish!, neutral: r.s_neutral! },
  human: r.human!,
  synthetic: r.synthetic!,
  replayed: r.replayed!,
});

/** Tallies rounds one by one with a statement prepared once (a 30-day window holds 720 rounds). */
export const roundTallies = (db: Db): ((roundId: string) => VoteTally) => {
  const tally = db.prepare(`${TALLY_SQL} WHERE v.round_id = ?`);
  return (roundId) => toTally(tally.get(roundId) as Record<string, number>);
};

export const roundTally = (db: Db, roundId: string): VoteTally => roundTallies(db)(roundId);

export const allVotesTally = (db: Db): VoteTally =>
  toTally(db.prepare(TALLY_SQL).get() as Record<string, number>);

/**
 * The mode keys of the totals tables (migration 5) a run of `mode` counts as its own: a call's data mode, 'unknown'
 * for one recorded before the store kept modes (simulated only, as ownModeSql).
 */
export const ownModeKeys = (mode: DataMode): string[] =>
  DataMode.parse(mode) === 'simulated' ? ['simulated', 'unknown'] : [mode];

/**
 * The newest `limit` rows a run of `mode` counts as its own: each of its mode keys' newest (`rowsOf`, read by index),
 * merged in `order` (a stable sort: on a tie the earlier key's row comes first).
 */
export const newestOfMode = <T>(
  mode: DataMode,
  rowsOf: (key: string) => T[],
  order: (a: T, b: T) => number,
  limit: number,
): T[] => ownModeKeys(mode).flatMap(rowsOf).sort(order).slice(0, limit);

/** The recorded mode a totals key stands for. */
const recordedMode = (key: string): RecordedMode => (key === 'unknown' ? null : (key as RecordedMode));

/**
 * SQL condition: the vote counts in a run of `mode`. A vote counts with its round, in the mode of the round's brain
 * call (ownModeSql); a person's vote in a round no run has called yet counts in every mode. Synthetic votes are part
 * of the simulated market: they count in simulated mode only.
 */
export const ownVoteSql = (mode: DataMode): string =>
  `((${ownModeSql(mode)} OR p.round_id IS NULL) AND (v.source = 'human' OR ${mode === 'simulated' ? 1 : 0}))`;

/** The votes a run of `mode` counts (see ownVoteSql), and those it leaves out, by the mode they belong to. */
export interface ModeVotes {
  tally: VoteTally;
  rounds: number; // rounds with a counted vote from any source
  humanRounds: number; // rounds with a counted vote from a person
  humanVoters: number; // distinct voter hashes among the counted human votes
  leftOut: VotesLeftOut;
}

interface VoteTotalRow {
  call_mode: string;
  source: 'human' | 'synthetic';
  prediction: ArenaPrediction;
  replayed: number;
  votes: number;
}

/** Null (an unknown mode) sorts last, as `ORDER BY mode IS NULL, mode` does. */
const byModeNullLast = (a: RecordedMode, b: RecordedMode): number =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1;

/**
 * Read from the totals the store's triggers keep (migration 5), and the human votes alone for the distinct people:
 * never a scan of every vote, synthetic ones being most of a year's.
 */
export const modeVotes = (db: Db, mode: DataMode): ModeVotes => {
  const simulated = mode === 'simulated';
  const counted = new Set([...ownModeKeys(mode), 'uncalled']);
  const counts = (r: { call_mode: string; source?: string }) =>
    counted.has(r.call_mode) && (r.source !== 'synthetic' || simulated);
  const rows = db.prepare('SELECT * FROM vote_totals WHERE votes != 0').all() as VoteTotalRow[];
  const sum = (keep: (r: VoteTotalRow) => boolean) =>
    rows.filter((r) => counts(r) && keep(r)).reduce((a, r) => a + r.votes, 0);
  const of = (source: string, prediction: string) =>
    sum((r) => r.source === source && r.prediction === prediction);
  const left = new Map<RecordedMode, number>();
  for (const r of rows.filter((row) => !counts(row))) {
    // The mode a vote left out belongs to: a synthetic one to simulated (in another mode's run), any other to its call.
    const key = !simulated && r.source === 'synthetic' ? 'simulated' : recordedMode(r.call_mode);
    left.set(key, (left.get(key) ?? 0) + r.votes);
  }
  const roundRows = db
    .prepare('SELECT call_mode, voters, rounds FROM vote_round_totals WHERE rounds != 0')
    .all() as Array<{ call_mode: string; voters: 'any' | 'human'; rounds: number }>;
  const rounds = (voters: 'any' | 'human') =>
    roundRows
      .filter((r) => r.voters === voters && counted.has(r.call_mode))
      .reduce((a, r) => a + r.rounds, 0);
  const humanVoters = db
    .prepare(
      `SELECT COUNT(DISTINCT v.voter_hash) AS n FROM votes v INDEXED BY votes_human
       LEFT JOIN brain_predictions p ON p.round_id = v.round_id WHERE v.source = 'human' AND ${ownVoteSql(mode)}`,
    )
    .get() as { n: number };
  const modes = [...left.entries()].filter(([, n]) => n > 0).map(([m]) => m);
  return {
    tally: {
      counts: {
        bullish: of('human', 'BULLISH'),
        bearish: of('human', 'BEARISH'),
        neutral: of('human', 'NEUTRAL'),
      },
      simulated: {
        bullish: of('synthetic', 'BULLISH'),
        bearish: of('synthetic', 'BEARISH'),
        neutral: of('synthetic', 'NEUTRAL'),
      },
      human: sum((r) => r.source === 'human'),
      synthetic: sum((r) => r.source === 'synthetic'),
      replayed: sum((r) => r.replayed === 1),
    },
    // Only people's votes count outside simulated mode: there a round with votes is one with a person's.
    rounds: rounds(simulated ? 'any' : 'human'),
    humanRounds: rounds('human'),
    humanVoters: humanVoters.n,
    leftOut: {
      votes: modes.reduce((a, m) => a + (left.get(m) ?? 0), 0),
      modes: modes.sort(byModeNullLast),
    },
  };
};

export const recordBrainCall = (db: Db, c: RecordedCall): boolean =>
  db
    .prepare(
      `INSERT OR IGNORE INTO brain_predictions
         (round_id, asset, prediction, confidence, start_price, recorded_at_ms, replayed, data_mode)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      c.roundId,
      c.asset,
      c.prediction,
      c.confidence,
      c.startPrice,
      c.recordedAt,
      flag(c.replayed),
      c.dataMode,
    ).changes === 1;

interface CallDbRow {
  round_id: string;
  asset: TrackedAsset;
  prediction: ArenaReading;
  confidence: number | null;
  start_price: number | null;
  recorded_at_ms: number;
  replayed: number;
  data_mode: RecordedMode;
}
const toCall = (r: CallDbRow): RecordedCall => ({
  roundId: r.round_id,
  asset: r.asset,
  prediction: r.prediction,
  confidence: r.confidence,
  startPrice: r.start_price,
  recordedAt: r.recorded_at_ms,
  replayed: r.replayed === 1,
  dataMode: r.data_mode,
});

/**
 * Sets the reference price of a round whose call was recorded without one (the first run of the round had no price
 * from at or after its start), by a later run of the call's own mode; a reference price once set is never changed.
 * Returns true when set.
 */
export const fillStartPrice = (db: Db, roundId: string, price: number, mode: DataMode): boolean =>
  db
    .prepare(
      `UPDATE brain_predictions SET start_price = ?
       WHERE round_id = ? AND start_price IS NULL AND replayed = 0 AND ${ownModeSql(mode, 'brain_predictions')}`,
    )
    .run(price, roundId).changes === 1;

export const brainCallFor = (db: Db, roundId: string): RecordedCall | null => {
  const row = db.prepare('SELECT * FROM brain_predictions WHERE round_id = ?').get(roundId) as
    CallDbRow | undefined;
  return row ? toCall(row) : null;
};

/** The newest call recorded in `mode` (see ownModeSql): the newest of each mode key, by index. */
export const latestBrainCall = (db: Db, mode: DataMode): RecordedCall | null => {
  const newest = db.prepare(
    `SELECT * FROM brain_predictions WHERE COALESCE(data_mode, 'unknown') = ? ORDER BY recorded_at_ms DESC LIMIT 1`,
  );
  const [row] = newestOfMode(
    mode,
    (key) => newest.all(key) as CallDbRow[],
    (a, b) => b.recorded_at_ms - a.recorded_at_ms,
    1,
  );
  return row ? toCall(row) : null;
};

/** Rounds with a recorded call whose end has passed and that have no outcome yet. */
export const unresolvedEndedRounds = (
  db: Db,
  asOf: number,
): Array<{ roundIndex: number; call: RecordedCall }> =>
  (
    db
      .prepare(
        // open_calls (migration 5) holds the calls without an outcome, a handful: CROSS JOIN starts from it, not from
        // every ended round (which the end_ms index would offer).
        `SELECT p.*, r.round_index FROM open_calls c CROSS JOIN brain_predictions p USING (round_id)
         CROSS JOIN rounds r USING (round_id) WHERE r.end_ms <= ? ORDER BY r.start_ms`,
      )
      .all(asOf) as Array<CallDbRow & { round_index: number }>
  ).map((r) => ({ roundIndex: r.round_index, call: toCall(r) }));

export interface OutcomeRow {
  roundId: string;
  status: 'resolved' | 'voided';
  outcome: ArenaPrediction | null;
  endPrice: number | null;
  returnFraction: number | null;
  neutralBand: number;
  voidReason: string | null;
  tally: VoteTally;
  resolvedAt: number;
  replayed: boolean;
}

/** Returns true only for the one call that actually resolves the round. */
export const insertOutcome = (db: Db, o: OutcomeRow): boolean =>
  db
    .prepare(
      `INSERT OR IGNORE INTO outcomes (round_id, status, outcome, end_price, return_fraction, neutral_band, void_reason,
         crowd_bullish, crowd_bearish, crowd_neutral, human_votes, synthetic_votes, resolved_at_ms, replayed)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      o.roundId,
      o.status,
      o.outcome,
      o.endPrice,
      o.returnFraction,
      o.neutralBand,
      o.voidReason,
      o.tally.counts.bullish,
      o.tally.counts.bearish,
      o.tally.counts.neutral,
      o.tally.human,
      o.tally.synthetic,
      o.resolvedAt,
      flag(o.replayed),
    ).changes === 1;

export const insertLesson = (db: Db, l: TeacherLesson, createdAt: number): void => {
  db.prepare(
    'INSERT OR IGNORE INTO lessons (lesson_id, round_id, asset, created_at_ms, replayed, body) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(l.lesson_id, l.round_id, l.asset, createdAt, flag(l.provenance.replayed), JSON.stringify(l));
};

/** The newest lessons of rounds recorded in `mode`, each with the data mode of its round's call. */
interface LessonRow {
  body: string;
  created_at_ms: number;
  lesson_id: string;
  call_mode: string;
}

export const latestLessons = (db: Db, limit: number, mode: DataMode): TeacherLesson[] => {
  // The newest of each mode key by index (lesson_times, migration 5), merged: lesson ids break ties.
  const newest = db.prepare(
    `SELECT l.body, t.created_at_ms, t.lesson_id, t.call_mode FROM lesson_times t JOIN lessons l USING (lesson_id)
     WHERE t.call_mode = ? ORDER BY t.created_at_ms DESC, t.lesson_id DESC LIMIT ?`,
  );
  const rows = newestOfMode(
    mode,
    (key) => newest.all(key, limit) as LessonRow[],
    (a, b) => b.created_at_ms - a.created_at_ms || (a.lesson_id < b.lesson_id ? 1 : -1),
    limit,
  );
  return rows.map((r) => {
    // Read from the call, not the stored body: lessons written before the store kept data modes have none.
    const lesson = JSON.parse(r.body) as TeacherLesson;
    return { ...lesson, provenance: { ...lesson.provenance, data_mode: recordedMode(r.call_mode) } };
  });
};

interface ResolvedDbRow {
  round_id: string;
  asset: TrackedAsset;
  prediction: ArenaReading;
  confidence: number | null;
  outcome: ArenaPrediction;
  return_fraction: number;
  crowd_bullish: number;
  crowd_bearish: number;
  crowd_neutral: number;
  human_votes: number;
  synthetic_votes: number;
  resolved_at_ms: number;
  replayed: number;
}

/**
 * Resolved rounds recorded in `mode` whose end falls in (sinceMs, untilMs], with the crowd counts frozen at
 * resolution. Rounds of other modes are never part of a run's record (see leftOutRounds). The window is open at its
 * start: 30 days hold 720 hourly rounds, and a run exactly on the hour would otherwise count 721.
 */
export const resolvedRounds = (db: Db, sinceMs: number, untilMs: number, mode: DataMode): ResolvedRound[] => {
  const tallyOf = roundTallies(db);
  return (
    db
      .prepare(
        `SELECT o.*, p.asset, p.prediction, p.confidence FROM outcomes o
         JOIN brain_predictions p USING (round_id) JOIN rounds r USING (round_id)
         WHERE o.status = 'resolved' AND r.end_ms > ? AND r.end_ms <= ? AND ${ownModeSql(mode)}
         ORDER BY r.start_ms`,
      )
      .all(sinceMs, untilMs) as ResolvedDbRow[]
  ).map((r) => ({
    roundId: r.round_id,
    asset: r.asset,
    brainCall: r.prediction,
    brainConfidence: r.confidence,
    // Recounted from the votes (never changed after resolution): the crowd columns of older stores mixed human
    // and synthetic votes, and human consensus must hold people only.
    counts: tallyOf(r.round_id).counts,
    humanVotes: r.human_votes,
    syntheticVotes: r.synthetic_votes,
    outcome: r.outcome,
    returnFraction: r.return_fraction,
    resolvedAt: r.resolved_at_ms,
    replayed: r.replayed === 1,
  }));
};

/** The resolved rounds of (sinceMs, untilMs] that resolvedRounds leaves out: their calls were recorded in another mode. */
export const leftOutRounds = (db: Db, sinceMs: number, untilMs: number, mode: DataMode): LeftOut => {
  const rows = db
    .prepare(
      `SELECT p.data_mode AS mode, COUNT(*) AS rounds, COALESCE(SUM(p.prediction != 'NONE'), 0) AS with_call
       FROM outcomes o JOIN brain_predictions p USING (round_id) JOIN rounds r USING (round_id)
       WHERE o.status = 'resolved' AND r.end_ms > ? AND r.end_ms <= ? AND NOT ${ownModeSql(mode)}
       GROUP BY p.data_mode ORDER BY p.data_mode IS NULL, p.data_mode`,
    )
    .all(sinceMs, untilMs) as Array<{ mode: RecordedMode; rounds: number; with_call: number }>;
  return {
    rounds: rows.reduce((a, r) => a + r.rounds, 0),
    withCall: rows.reduce((a, r) => a + r.with_call, 0),
    modes: rows.map((r) => r.mode),
  };
};

export const count = (db: Db, sql: string, ...params: unknown[]): number =>
  (db.prepare(sql).get(...params) as { n: number | null }).n ?? 0;

/** How a run ended, as the run log says (see run-log.ts). */
export type RunStatus = 'pending' | 'ok' | 'failed' | 'unfinished';

export interface RunRecord {
  owner: string;
  mode: string;
  asOf: number;
  finishedAt: number;
  status: RunStatus;
  detail: string | null;
  /** Whether the run's arena step committed (its records are in the store), whatever became of its files. */
  arenaStep: boolean;
}

/**
 * Whether a run's arena step committed with a market time in [fromMs, toMs]: it saw the market then, whether or not
 * its files were published afterwards (its records are in the store either way).
 */
export const steppedRunBetween = (db: Db, fromMs: number, toMs: number): boolean =>
  db
    .prepare('SELECT 1 FROM run_log WHERE arena_step = 1 AND as_of_ms >= ? AND as_of_ms <= ? LIMIT 1')
    .get(fromMs, toMs) !== undefined;

/** Writes one run-log row; returns its id. */
export const logRun = (db: Db, r: RunRecord): number =>
  Number(
    db
      .prepare(
        `INSERT INTO run_log (owner, mode, as_of_ms, finished_at_ms, status, detail, arena_step)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(r.owner, r.mode, r.asOf, r.finishedAt, r.status, r.detail, flag(r.arenaStep)).lastInsertRowid,
  );
