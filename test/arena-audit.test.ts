// The published arena rules (site/docs/arena-rules.njk, rules.ts, scoring.ts), one test per rule that could be
// broken, plus the edges found in the arena audit: a resolution run a few seconds past the window, a round
// without a brain call, a refused signed vote that must not block the ones after it.
import { afterEach, describe, expect, it } from 'vitest';
import { buildLesson, type ResolvedRound } from '../generator/engines/arena/lessons.ts';
import { MIN_SAMPLE, teacherBrain } from '../generator/engines/arena/metrics.ts';
import { roundAt, roundByIndex, ROUND_MS } from '../generator/engines/arena/rounds.ts';
import { VOTE_GRACE_SECONDS, VOTE_HORIZON_ROUNDS } from '../generator/engines/arena/rules.ts';
import { outcomeOf, wilsonInterval } from '../generator/engines/arena/scoring.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import {
  importSignedVotes,
  importVotesJsonl,
  signedVotesCursor,
  VoteValidationError,
  type SignedVoteRecord,
} from '../generator/state/votes.ts';
import { callsFor, HOUR, MINUTE, step, T0, tempStore } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const ROUND = roundAt(T0);
const line = (voter: string, prediction = 'BULLISH', roundId = ROUND.id, asset = ROUND.asset) =>
  JSON.stringify({ asset, prediction, voter, round_id: roundId });
const outcomes = (s: ArenaStore) =>
  s.db.prepare('SELECT * FROM outcomes ORDER BY round_id').all() as Array<Record<string, unknown>>;

describe('outcome rule: |r| < 0.25 % is NEUTRAL, at or beyond the band BULLISH / BEARISH', () => {
  it('reads a flat price as NEUTRAL, and a brain that called NEUTRAL as right', () => {
    expect(outcomeOf(100, 100)).toBe('NEUTRAL');
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'live', seed: null, brainCalls: callsFor('neutral', 80, 100), price: 100 });
    const bodies = step(s, T0 + HOUR + MINUTE, { mode: 'live', seed: null, price: 100 });
    expect(bodies.teacherLessons.latest_lessons[0]).toMatchObject({
      actual_outcome: 'NEUTRAL',
      brain_correct: 1,
    });
  });

  it('puts a move of exactly the band outside NEUTRAL, both ways', () => {
    expect(outcomeOf(100, 100.25)).toBe('BULLISH');
    expect(outcomeOf(100, 99.75)).toBe('BEARISH');
    expect(outcomeOf(100, 100.2499)).toBe('NEUTRAL');
  });
});

describe('resolution: the first run within 15 minutes after the end, else voided', () => {
  it('resolves a round at exactly 15 minutes late and voids it a few seconds after', () => {
    const onTime = track(tempStore());
    step(onTime, T0 + MINUTE, { mode: 'live', seed: null });
    step(onTime, ROUND.end + 15 * MINUTE, { mode: 'live', seed: null, price: 101 });
    expect(outcomes(onTime)[0]).toMatchObject({ status: 'resolved', outcome: 'BULLISH' });

    const late = track(tempStore());
    step(late, T0 + MINUTE, { mode: 'live', seed: null });
    // 15 min 30 s after the end is "more than 15 minutes late" (rules page), so the round is voided.
    const bodies = step(late, ROUND.end + 15 * MINUTE + 30_000, { mode: 'live', seed: null, price: 101 });
    expect(outcomes(late)[0]).toMatchObject({ status: 'voided', outcome: null });
    expect(bodies.teacherLessons.latest_lessons).toEqual([]);
  });

  it('never resolves a round whose end is still in the future', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'live', seed: null });
    step(s, ROUND.end - 1, { mode: 'live', seed: null, price: 150 });
    expect(outcomes(s)).toEqual([]);
  });

  it('voids a round without a price at its end (counted, no lesson)', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'live', seed: null });
    const noPrice = callsFor('bullish', 60, 100).map((c) => ({ ...c, price: null }));
    const priceless = { mode: 'live', seed: null, price: null, brainCalls: noPrice } as const;
    // A run of the resolve window without a price waits for a later one of the window, which may bring it.
    step(s, ROUND.end + MINUTE, priceless);
    expect(outcomes(s)).toEqual([]);
    const bodies = step(s, ROUND.end + 16 * MINUTE, priceless);
    expect(outcomes(s)[0]).toMatchObject({
      status: 'voided',
      void_reason: expect.stringMatching(/no price from at or after the round end/),
    });
    expect(bodies.statistics.core_learning.voided_rounds).toBe(1);
    expect(bodies.teacherLessons.latest_lessons).toEqual([]);
  });

  it('records no brain call for a round whose first run comes after the 15-minute entry window', () => {
    const s = track(tempStore());
    step(s, T0 + 15 * MINUTE + 1, { mode: 'live', seed: null });
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM brain_predictions').get()).toEqual({ n: 0 });
    // A store of its own: a run dated before the newest one on record records nothing (state/step.ts).
    const inTime = track(tempStore());
    step(inTime, T0 + 15 * MINUTE, { mode: 'live', seed: null });
    expect(inTime.db.prepare('SELECT COUNT(*) AS n FROM brain_predictions').get()).toEqual({ n: 1 });
  });
});

describe('vote rule: by the server clock, before the start or less than 60 s after', () => {
  it('counts a vote received at exactly the start instant and refuses one at exactly start + 60 s', () => {
    const s = track(tempStore());
    expect(importVotesJsonl(s, line('at-start'), ROUND.start)).toBe(1);
    expect(() => importVotesJsonl(s, line('at-close'), ROUND.start + VOTE_GRACE_SECONDS * 1000)).toThrow(
      /does not count/,
    );
  });

  it('opens votes exactly 7 rounds ahead and not a millisecond earlier', () => {
    const ahead = roundByIndex(ROUND.index + VOTE_HORIZON_ROUNDS);
    const s = track(tempStore());
    const vote = line('early', 'BEARISH', ahead.id, ahead.asset);
    expect(() => importVotesJsonl(s, vote, ahead.start - VOTE_HORIZON_ROUNDS * ROUND_MS - 1)).toThrow(
      /not open yet/,
    );
    expect(importVotesJsonl(s, vote, ahead.start - VOTE_HORIZON_ROUNDS * ROUND_MS)).toBe(1);
  });

  it("refuses a voter's second vote in a round, across imports and after case folding", () => {
    const s = track(tempStore());
    const now = T0 - 10 * MINUTE;
    expect(() => importVotesJsonl(s, [line('Alice'), line('ALICE', 'BEARISH')].join('\n'), now)).toThrow(
      /already voted/,
    );
    expect(importVotesJsonl(s, line('Alice'), now)).toBe(1);
    expect(() => importVotesJsonl(s, line('ａｌｉｃｅ', 'NEUTRAL'), now + 1)).toThrow(/already voted/);
    expect(() => importVotesJsonl(s, line('bob') + '\n' + line('alice'), now + 2)).toThrow(
      VoteValidationError,
    );
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM votes').get()).toEqual({ n: 1 }); // all or nothing
  });

  it('takes no vote for a resolved round', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'live', seed: null });
    step(s, ROUND.end + MINUTE, { mode: 'live', seed: null });
    const signed: SignedVoteRecord = {
      seq: 1,
      address: 'ADDR1',
      asset: ROUND.asset,
      prediction: 'BULLISH',
      roundId: ROUND.id,
      receivedAt: T0,
    };
    expect(importSignedVotes(s, [signed], ROUND.end + 2 * MINUTE)).toBe(0);
    expect(s.db.prepare("SELECT COUNT(*) AS n FROM votes WHERE source = 'human'").get()).toEqual({ n: 0 });
  });
});

describe('signed votes: a vote the rules refuse is reported and skipped, never blocking the ones after it', () => {
  const signed = (seq: number, address: string, receivedAt: number): SignedVoteRecord => ({
    seq,
    address,
    asset: ROUND.asset,
    prediction: 'BULLISH',
    roundId: ROUND.id,
    receivedAt,
  });

  it('imports the good votes, skips a second vote of the same voter, and moves the cursor past both', () => {
    const s = track(tempStore());
    importVotesJsonl(s, line('ADDR1'), T0 - 20 * MINUTE); // the same id voted through a file import
    const refused: string[] = [];
    const n = importSignedVotes(
      s,
      [signed(1, 'ADDR1', T0 - 10 * MINUTE), signed(2, 'ADDR2', T0 - 5 * MINUTE)],
      T0,
      (problems) => refused.push(...problems),
    );
    expect(n).toBe(1);
    expect(refused).toEqual([expect.stringMatching(/^signed vote 1: .*already voted/)]);
    expect(signedVotesCursor(s)).toBe(2);
    // The next run sees nothing new: the refused vote is not retried forever.
    expect(importSignedVotes(s, [signed(1, 'ADDR1', T0 - 10 * MINUTE)], T0 + MINUTE)).toBe(0);
  });

  it('waits for a vote received after the run clock (clocks apart) instead of dropping it', () => {
    const s = track(tempStore());
    const votes = [signed(1, 'ADDR1', T0 - 10 * MINUTE), signed(2, 'ADDR2', T0 - 2 * MINUTE)];
    expect(importSignedVotes(s, votes, T0 - 5 * MINUTE)).toBe(1);
    expect(signedVotesCursor(s)).toBe(1);
    expect(importSignedVotes(s, votes, T0)).toBe(1);
    expect(signedVotesCursor(s)).toBe(2);
  });
});

describe('honest statistics', () => {
  const resolved = (i: number, over: Partial<ResolvedRound> = {}): ResolvedRound => ({
    roundId: roundByIndex(ROUND.index + i).id,
    asset: roundByIndex(ROUND.index + i).asset,
    brainCall: 'BULLISH',
    brainConfidence: 50,
    counts: { bullish: 2, bearish: 1, neutral: 0 },
    humanVotes: 3,
    syntheticVotes: 0,
    outcome: i % 2 === 0 ? 'BULLISH' : 'BEARISH',
    returnFraction: 0.01,
    resolvedAt: T0 + i * HOUR,
    replayed: false,
    ...over,
  });

  it('withholds every rate below 10 rounds, shows n, and gives a Wilson interval from 10 on', () => {
    const nine = teacherBrain(
      Array.from({ length: MIN_SAMPLE - 1 }, (_, i) => resolved(i)),
      0,
    );
    expect(nine.status).toBe('insufficient_sample');
    expect(nine.metrics.brain).toMatchObject({ n: 9, hit_rate: null, brier_score: null });
    expect(nine.metrics.crowd.hit_rate).toBeNull();
    expect(nine.metrics.agreement_rate).toBeNull();
    expect(nine.metrics.calibration.every((b) => b.observed_hit_rate === null)).toBe(true);
    const ten = teacherBrain(
      Array.from({ length: MIN_SAMPLE }, (_, i) => resolved(i)),
      0,
    );
    expect(ten.metrics.brain.hit_rate).toMatchObject({ value: 0.5, n: 10 });
    // 5 of 10: Wilson 95 % interval 0.2366-0.7634 (a known value).
    expect(ten.metrics.brain.hit_rate!.wilson_low).toBeCloseTo(0.2366, 4);
    expect(ten.metrics.brain.hit_rate!.wilson_high).toBeCloseTo(0.7634, 4);
    const w = wilsonInterval(5, 10);
    expect(w.low + w.high).toBeCloseTo(1, 12);
  });

  it('says a brain without a call made no call, rather than that it was wrong', () => {
    const lesson = buildLesson(resolved(0, { brainCall: 'NONE', brainConfidence: null }));
    expect(lesson.brain_correct).toBe(0);
    expect(lesson.summary).toMatch(/Brain made no call/);
    expect(lesson.summary).not.toMatch(/Brain wrong/);
  });
});

describe('the synthetic crowd is never counted as people', () => {
  it('keeps synthetic votes out of consensus, lessons, teacher metrics and human voter counts', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'simulated' });
    const b = step(s, ROUND.end + MINUTE, { mode: 'simulated', price: 102 });
    const lesson = b.teacherLessons.latest_lessons[0]!;
    expect(lesson.provenance.synthetic_votes).toBeGreaterThan(0);
    expect(lesson).toMatchObject({ human_consensus: 'NONE', crowd_correct: 0, agreement: 0 });
    expect(lesson.provenance.human_votes).toBe(0);
    expect(b.teacherLessons.teacher_brain.metrics.crowd.n).toBe(0);
    expect(b.statistics.arena.distinct_human_voters).toBe(0);
    expect(b.statistics.arena.vote_sources.human_votes).toBe(0);
    expect(b.humanConsensus.human_consensus.total).toBe(0);
    expect(b.humanConsensus.human_status).toMatch(/No human votes yet/);
    expect(b.sharedIntelligence.human_layer.total).toBe(0);
    expect(b.sharedIntelligence.combined_intelligence.crowd_consensus).toBe('NONE');
    expect(b.humanConsensus.simulated_crowd?.label).toBe('simulated');
    expect(b.humanConsensus.mode).toBe('simulated');
  });

  it('publishes every time in UTC with its year', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE);
    const b = step(s, ROUND.end + MINUTE, { price: 102 });
    const times: string[] = [];
    const walk = (v: unknown, key = ''): void => {
      if (typeof v === 'string' && /(_at|_utc|^at|^start|^end|_due|as_of)$/.test(key)) times.push(v);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    };
    walk(b);
    expect(times.length).toBeGreaterThan(10);
    for (const t of times) expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
  });
});
