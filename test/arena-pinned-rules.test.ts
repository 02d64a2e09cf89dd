// Pins the arena's published rules where a mutation audit found that no test would notice a one-line change: an
// unknown data mode counts as simulated only (README "Data mode per round"), the rounding tie-break of the crowd's
// percentages (ROUNDING_RULE: the larger count first on equal remainders), round ids the schedule never produces,
// the vote horizon (VOTE_RULE: votes open up to 7 rounds ahead), a start price of 0 voids the round, and which
// rounds the public track record counts (rounds with a call; skill against the base rate of every resolved round
// of the window; other_mode_rounds as each schema describes it), the teacher brain's metrics (brain scores over
// calls only, agreement where both sides called, calibration of the calls with the last bucket closed at 100,
// replayed rounds), the lesson labels (a side without a call is compared with nothing; a tie is no small sample) and
// the size and vote times of the seeded synthetic crowd (8-24 voters in the hour before the start). Published rules
// must be enforced, so each case states the rule with literal values, not values computed from the constants under
// test.
import { afterEach, describe, expect, it } from 'vitest';
import { humanConsensus, NO_VOTES } from '../generator/engines/arena/consensus.ts';
import { syntheticCrowd } from '../generator/engines/arena/crowd.ts';
import { ownsRound } from '../generator/engines/arena/data-mode.ts';
import { buildLesson, type ResolvedRound } from '../generator/engines/arena/lessons.ts';
import { publicPerformanceFrom, teacherBrain } from '../generator/engines/arena/metrics.ts';
import { roundAt, type Round } from '../generator/engines/arena/rounds.ts';
import { roundFromId, voteWindowProblem } from '../generator/engines/arena/rules.ts';
import type { RecordedCall } from '../generator/engines/arena/types.ts';
import { ensureRound } from '../generator/state/repo.ts';
import { settleRound } from '../generator/state/settle.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import type { ArenaPrediction, ArenaReading } from '../schemas/common.ts';
import { HOUR, MINUTE, schemaOneStore, step, T0, tempStore } from './arena-fixtures.ts';
import { publishedTrackRecord } from './helpers/track-record.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const UNKNOWN_NOTE = 'unknown: recorded before the store kept data modes';

describe('a call of unknown data mode counts as simulated, never as live or replay', () => {
  it('is owned by a simulated run only', () => {
    expect(ownsRound(null, 'live')).toBe(false);
    expect(ownsRound(null, 'replay')).toBe(false);
    expect(ownsRound(null, 'simulated')).toBe(true);
  });

  /**
   * A store from before data modes were kept, with one call and no run on record (so its mode is unknown), resolved
   * the old way unless `unresolved`.
   */
  const storeWithOneUnknownCall = (round: Round, unresolved = false): string => {
    const { file, db } = schemaOneStore('2025-01-01T00:00:00Z');
    const at = round.start + MINUTE;
    ensureRound(db, round);
    db.prepare(
      `INSERT INTO brain_predictions (round_id, asset, prediction, confidence, start_price, recorded_at_ms, replayed)
       VALUES (?, ?, 'BULLISH', 60, 100, ?, 0)`,
    ).run(round.id, round.asset, at);
    if (unresolved) {
      db.close();
      return file;
    }
    const call: RecordedCall = {
      roundId: round.id,
      asset: round.asset,
      prediction: 'BULLISH',
      confidence: 60,
      startPrice: 100,
      recordedAt: at,
      replayed: false,
      dataMode: null,
    };
    settleRound(db, { round, call, endPrice: 101, resolvedAt: round.end + MINUTE, replayed: false });
    db.close();
    return file;
  };

  it('leaves the round out of a live record, counts it in other_mode_rounds and says why', () => {
    const s = track(openArenaStore(storeWithOneUnknownCall(roundAt(T0 - 3 * HOUR))));
    expect(s.db.prepare('SELECT data_mode FROM brain_predictions').all()).toEqual([{ data_mode: null }]);
    const live = publishedTrackRecord(s, T0, 'live');
    expect(live).toMatchObject({ status: 'no_history', resolved_rounds: 0, other_mode_rounds: 1 });
    expect(live.note).toContain(UNKNOWN_NOTE);
    expect(live.note).toContain('1 resolved round of the window recorded in unknown mode is left out');
    const replay = publishedTrackRecord(s, T0, 'replay');
    expect(replay).toMatchObject({ resolved_rounds: 0, other_mode_rounds: 1 });
    expect(replay.note).toContain(UNKNOWN_NOTE);
    // The simulated record counts it as its own.
    expect(publishedTrackRecord(s, T0, 'simulated')).toMatchObject({
      resolved_rounds: 1,
      other_mode_rounds: 0,
    });
  });

  it('voids the round when a live run reaches its end, rather than scoring it with live prices', () => {
    const round = roundAt(T0);
    const s = track(openArenaStore(storeWithOneUnknownCall(round, true)));
    step(s, round.end + MINUTE, { mode: 'live', seed: null, price: 101 });
    const outcome = s.db
      .prepare('SELECT status, void_reason FROM outcomes WHERE round_id = ?')
      .get(round.id) as { status: string; void_reason: string | null };
    expect(outcome.status).toBe('voided');
    expect(outcome.void_reason).toBe(
      'its brain call was recorded in an unknown (recorded before the store kept data modes) mode and the first run ' +
        'after the round end ran in live mode',
    );
  });
});

describe('the crowd percentages: on equal remainders the larger count gets the leftover tenth', () => {
  it('gives 15/1/0 votes 93.8 and 6.2', () => {
    // 15/16 = 93.75 %, 1/16 = 6.25 %: equal remainders; the larger count (bullish) is served first.
    expect(humanConsensus({ bullish: 15, bearish: 1, neutral: 0 })).toMatchObject({
      bullish_percent: 93.8,
      bearish_percent: 6.2,
      neutral_percent: 0,
      rounding_residual_percent: 0,
    });
  });

  it('serves the larger count first whichever class holds it', () => {
    expect(humanConsensus({ ...NO_VOTES, bearish: 15, neutral: 1 })).toMatchObject({
      bearish_percent: 93.8,
      neutral_percent: 6.2,
      bullish_percent: 0,
    });
  });
});

describe('a round id the schedule never produces is no round', () => {
  it('refuses hour 24 and month 13, which Date.UTC would carry into a real round', () => {
    // 2025-01-02T00Z and 2026-01-01T00Z are both BTC rounds: the overflowed ids would land on them.
    expect(roundFromId('BTC-20250101T24Z')).toBeNull();
    expect(roundFromId('BTC-20251301T00Z')).toBeNull();
  });

  it('parses an id the schedule does produce', () => {
    expect(roundFromId('BTC-20250102T00Z')).toMatchObject({
      id: 'BTC-20250102T00Z',
      asset: 'BTC',
      start: Date.parse('2025-01-02T00:00:00Z'),
    });
    expect(roundFromId('ETH-20250102T00Z')).toBeNull(); // that hour plays BTC
  });
});

describe('votes open up to 7 rounds ahead', () => {
  const round = roundFromId('BTC-20250102T00Z')!;

  it('takes a vote received 7 hours before the round starts', () => {
    expect(voteWindowProblem(round, Date.parse('2025-01-01T17:00:00Z'))).toBeNull();
  });

  it('refuses a vote received 8 hours before, or a millisecond more than 7', () => {
    expect(voteWindowProblem(round, Date.parse('2025-01-01T16:00:00Z'))).toMatch(
      /more than 7 rounds ahead; votes for it are not open yet/,
    );
    expect(voteWindowProblem(round, Date.parse('2025-01-01T16:59:59.999Z'))).not.toBeNull();
  });
});

describe('a start price of 0 is no reference price', () => {
  it('voids the round with the no-start-price reason', () => {
    const s = track(tempStore());
    const ROUND = roundAt(T0);
    step(s, T0 + MINUTE, { mode: 'live', seed: null, price: 100 });
    // A store row with a start price of 0 (a venue's bad quote, a hand-edited store): a return from it is no return.
    s.db.prepare('UPDATE brain_predictions SET start_price = 0 WHERE round_id = ?').run(ROUND.id);
    step(s, ROUND.end + MINUTE, { mode: 'live', seed: null, price: 101 });
    const outcome = s.db
      .prepare('SELECT status, void_reason FROM outcomes WHERE round_id = ?')
      .get(ROUND.id) as { status: string; void_reason: string | null };
    expect(outcome.status).toBe('voided');
    expect(outcome.void_reason).toMatch(
      /^no price from at or after the round start came within 15 minutes of it/,
    );
  });
});

/** The twelve-round fixture of the public track record and the teacher brain. */
const resolved = (i: number, brainCall: ArenaReading, outcome: ArenaPrediction): ResolvedRound => ({
  roundId: `BTC-202501${String(10 + i).padStart(2, '0')}T00Z`,
  asset: 'BTC',
  brainCall,
  brainConfidence: brainCall === 'NONE' ? null : 100,
  counts: NO_VOTES,
  humanVotes: 0,
  syntheticVotes: 0,
  outcome,
  returnFraction: 0,
  resolvedAt: T0 + i * HOUR,
  replayed: false,
});
// Ten BULLISH calls at confidence 100 (p = 0.1 / 0.1 / 0.8): 7 hits, 3 BEARISH outcomes; two rounds without a
// call, both NEUTRAL.
const calledOutcomes: ArenaPrediction[] = [
  'BULLISH',
  'BEARISH',
  'BULLISH',
  'BULLISH',
  'BEARISH',
  'BULLISH',
  'BULLISH',
  'BULLISH',
  'BEARISH',
  'BULLISH',
];
const called = calledOutcomes.map((o, i) => resolved(i, 'BULLISH', o));
const rounds = [...called, resolved(10, 'NONE', 'NEUTRAL'), resolved(11, 'NONE', 'NEUTRAL')];

describe('the public track record', () => {
  it('counts only the rounds with a brain call, and the hit rate carries that n', () => {
    const p = publicPerformanceFrom(rounds);
    expect(p.status).toBe('available');
    expect(p.resolved_rounds).toBe(10);
    expect(p.hit_rate).toMatchObject({ value: 0.7, n: 10 });
    // Brier: hits 0.01 + 0.01 + 0.04 = 0.06, misses 0.81 + 0.01 + 0.64 = 1.46; (7 x 0.06 + 3 x 1.46) / 10.
    expect(p.brier_score).toBe(0.48);
    // RPS: hits (0.1^2 + 0.2^2) / 2 = 0.025, misses (0.9^2 + 0.8^2) / 2 = 0.725; (7 x 0.025 + 3 x 0.725) / 10.
    expect(p.ranked_probability_score).toBe(0.235);
  });

  it('withholds the rates of 8 rounds with a call out of 10 resolved', () => {
    const p = publicPerformanceFrom([...called.slice(0, 8), ...rounds.slice(10)]);
    expect(p).toMatchObject({ status: 'insufficient_sample', resolved_rounds: 8, hit_rate: null });
    expect(p.note).toContain('Only 8 resolved rounds');
  });

  it('measures skill against the base rate of every resolved round of the window, calls or not', () => {
    // Base rate over all 12 outcomes (3 BEARISH, 2 NEUTRAL, 7 BULLISH): (4, 3, 8) / 15; its RPS on the ten called
    // rounds is (7 x 65 + 3 x 185) / 4500 = 0.22444; skill = 1 - 0.235 / 0.22444 = -0.0470. (Over the called
    // rounds only, (4, 1, 8) / 13, it would be -0.1001.)
    expect(publicPerformanceFrom(rounds).skill_vs_base_rate).toBe(-0.047);
  });

  it('counts left-out rounds with a call in public_performance, and every left-out round in teacher_brain', () => {
    const scope = {
      mode: 'live' as const,
      leftOut: { rounds: 5, withCall: 3, modes: ['simulated' as const] },
    };
    const p = publicPerformanceFrom(rounds, scope);
    expect(p.other_mode_rounds).toBe(3);
    expect(p.note).toContain('3 resolved rounds of the window recorded in simulated mode are left out');
    expect(teacherBrain(rounds, 0, scope).metrics.other_mode_rounds).toBe(5);
  });
});

// The teacher brain's published metrics (README "Teacher brain"): the brain is scored over rounds with a call,
// agreement over rounds where both the brain and the crowd called, calibration over the brain's calls with the
// last bucket closed at 100, and replayed rounds counted where they are.
describe('the teacher brain metrics over the same twelve rounds', () => {
  it('scores the brain over the ten rounds with a call only', () => {
    const brain = teacherBrain(rounds, 0).metrics.brain;
    expect(brain).toMatchObject({ n: 10, hit_rate: { value: 0.7, n: 10 }, brier_score: 0.48 });
  });

  it('measures agreement over the rounds where both the brain and the crowd called', () => {
    // Every round has a crowd calling BULLISH 2-0-0; the two rounds without a brain call agree with nothing.
    const crowded = rounds.map((r) => ({ ...r, counts: { bullish: 2, bearish: 0, neutral: 0 } }));
    const m = teacherBrain(crowded, 0).metrics;
    expect(m.agreement_n).toBe(10);
    expect(m.agreement_rate).toMatchObject({ value: 1, n: 10 });
  });

  it('puts only the brain calls in the calibration buckets, the last one closed at 100', () => {
    const calibration = teacherBrain(rounds, 0).metrics.calibration;
    // A round without a call has no confidence: it is in no bucket, not in the 0-40 one.
    expect(calibration[0]).toMatchObject({ confidence_from: 0, confidence_to: 40, n: 0 });
    expect(calibration[3]).toMatchObject({
      confidence_from: 80,
      confidence_to: 100,
      n: 10,
      observed_hit_rate: 0.7,
    });
  });

  it('counts replayed rounds: every one in teacher_brain, those with a call in public_performance', () => {
    const withReplays = rounds.map((r, i) => ({ ...r, replayed: i < 3 }));
    expect(teacherBrain(withReplays, 0).metrics.replayed_rounds).toBe(3);
    // Only a round without a call is replayed: the public record (rounds with a call) has no replayed round.
    const noneReplayed = rounds.map((r, i) => ({ ...r, replayed: i === 10 }));
    const p = publicPerformanceFrom(noneReplayed);
    expect(p.replayed_rounds).toBe(0);
    expect(p.note).not.toContain('backfill replay');
  });

  it('says which mode an empty record is of when one left-out round had a call', () => {
    const p = publicPerformanceFrom([], {
      mode: 'live',
      leftOut: { rounds: 1, withCall: 1, modes: ['simulated'] },
    });
    expect(p.status).toBe('no_history');
    expect(p.note).toContain('No arena round with a brain call recorded in live mode has been resolved yet');
  });
});

// The lesson labels (teacher-lessons schema, pattern_type and agreement): a side without a call is compared with
// nothing, and the summary flags a small sample only for a crowd that made a call.
describe('a lesson of a round', () => {
  const round = (
    brainCall: ArenaReading,
    counts: { bullish: number; bearish: number; neutral: number },
    outcome: ArenaPrediction,
  ): ResolvedRound => ({
    roundId: 'BTC-20250110T00Z',
    asset: 'BTC',
    brainCall,
    brainConfidence: brainCall === 'NONE' ? null : 70,
    counts,
    humanVotes: counts.bullish + counts.bearish + counts.neutral,
    syntheticVotes: 0,
    outcome,
    returnFraction: 0,
    resolvedAt: T0,
    replayed: false,
  });

  it('with no brain call and no votes: neither called, no agreement', () => {
    expect(buildLesson(round('NONE', NO_VOTES, 'NEUTRAL'))).toMatchObject({
      pattern_type: 'neither_called',
      agreement: 0,
    });
  });

  it('with no brain call and a crowd calling BULLISH 3-0: crowd only', () => {
    expect(buildLesson(round('NONE', { bullish: 3, bearish: 0, neutral: 0 }, 'BULLISH'))).toMatchObject({
      pattern_type: 'crowd_only_no_brain',
      agreement: 0,
    });
  });

  it('with brain and crowd both BULLISH and a BEARISH outcome: aligned and wrong', () => {
    expect(buildLesson(round('BULLISH', { bullish: 3, bearish: 0, neutral: 0 }, 'BEARISH'))).toMatchObject({
      pattern_type: 'aligned_wrong',
      agreement: 1,
      brain_correct: 0,
      crowd_correct: 0,
    });
  });

  it('says a tied crowd made no call, without calling it a small sample', () => {
    const lesson = buildLesson(round('BULLISH', { bullish: 2, bearish: 2, neutral: 0 }, 'BULLISH'));
    expect(lesson.summary).toContain('human crowd tied: no call (4 votes)');
    expect(lesson.summary).not.toContain('small sample');
  });
});

// README "Simulated mode": 8-24 seeded voters per round, all voting in the hour before the round starts.
describe('the seeded synthetic crowd', () => {
  it('has 8 to 24 voters, reaching both ends, who all vote in the hour before the start', () => {
    const sizes: number[] = [];
    for (let i = 0; i < 500; i++) {
      const round = roundAt(T0 + i * HOUR);
      const crowd = syntheticCrowd(42, round);
      sizes.push(crowd.length);
      for (const vote of crowd) {
        expect(vote.at).toBeGreaterThanOrEqual(round.start - HOUR);
        expect(vote.at).toBeLessThan(round.start);
      }
    }
    expect(Math.min(...sizes)).toBe(8);
    expect(Math.max(...sizes)).toBe(24);
  });
});
