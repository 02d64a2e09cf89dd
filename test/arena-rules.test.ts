// Issue 17's round rules, end to end through the store: a late vote, a tie, the reference price, and synthetic
// votes kept out of human consensus.
import { afterEach, describe, expect, it } from 'vitest';
import { firstOpenAtOrAfter } from '../generator/engines/arena/reference-price.ts';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import { RULES_URL, VOTE_GRACE_SECONDS, votingRoundFor } from '../generator/engines/arena/rules.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { importVotesJsonl, VoteValidationError } from '../generator/state/votes.ts';
import { HOUR, MINUTE, pricesAll, step, T0, tempStore } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const ROUND = roundAt(T0);
const votes = (...list: Array<[string, string]>) =>
  list
    .map(([voter, prediction]) =>
      JSON.stringify({ asset: ROUND.asset, prediction, voter, round_id: ROUND.id }),
    )
    .join('\n');

describe('arena round rules', () => {
  it('takes a vote until the grace period after the start, and refuses it one millisecond later', () => {
    const grace = VOTE_GRACE_SECONDS * 1000;
    expect(votingRoundFor(ROUND.asset, ROUND.start + grace - 1)?.id).toBe(ROUND.id);
    expect(votingRoundFor(ROUND.asset, ROUND.start + grace)?.id).toBe(roundByIndex(ROUND.index + 7).id);
    const s = track(tempStore());
    expect(() => importVotesJsonl(s, votes(['late', 'BULLISH']), ROUND.start + grace)).toThrow(
      VoteValidationError,
    );
  });

  it('publishes when the round stops taking votes, as the vote endpoint enforces it', () => {
    const s = track(tempStore());
    const { round } = step(s, ROUND.start + 30 * MINUTE, {
      mode: 'live',
      seed: null,
      price: 100,
    }).sharedIntelligence;
    expect(round.status).toBe('open');
    const closeAt = Date.parse(round.votes_close_at);
    expect(closeAt).toBe(ROUND.start + VOTE_GRACE_SECONDS * 1000);
    expect(() => importVotesJsonl(s, votes(['late', 'BULLISH']), closeAt)).toThrow(VoteValidationError);
    expect(importVotesJsonl(track(tempStore()), votes(['early', 'BULLISH']), closeAt - 1)).toBe(1);
  });

  it('reads a tie as no call, leaves it out of crowd accuracy and counts it apart', () => {
    const s = track(tempStore());
    importVotesJsonl(s, votes(['a', 'BULLISH'], ['b', 'BEARISH'], ['c', 'NEUTRAL']), T0 - MINUTE);
    const open = step(s, T0 + MINUTE, { mode: 'live', seed: null, price: 100 });
    expect(open.humanConsensus.human_consensus).toMatchObject({
      consensus: 'NONE',
      call_status: 'tie',
      bullish_percent: 33.3,
      rounding_residual_percent: 0.1,
    });
    expect(open.humanConsensus.human_status).toMatch(/tied at the top: the crowd makes no call/);
    const after = step(s, T0 + HOUR + MINUTE, { mode: 'live', seed: null, price: 101 });
    const lesson = after.teacherLessons.latest_lessons[0]!;
    expect(lesson).toMatchObject({
      human_consensus: 'NONE',
      crowd_correct: 0,
      pattern_type: 'brain_only_no_crowd',
    });
    expect(lesson.summary).toContain('tied: no call');
    const m = after.teacherLessons.teacher_brain.metrics;
    expect(m.crowd.n).toBe(0);
    expect(m.crowd_no_call_rounds).toBe(1);
    expect(m.agreement_n).toBe(0);
  });

  it('takes the reference price from the first candle opening at or after the start, not the run time', () => {
    const candles = [55, 56, 57].map((open, i) => ({
      openTime: T0 + (i - 1) * HOUR,
      open,
      high: open,
      low: open,
      close: open,
      volumeBase: 1,
    }));
    expect(firstOpenAtOrAfter(candles, T0)).toBe(56);
    expect(firstOpenAtOrAfter(candles, T0 + 2 * HOUR + 1)).toBeNull();
    const s = track(tempStore());
    // The first run of the round comes 14 minutes in, when the price has moved to 130.
    const body = step(s, T0 + 14 * MINUTE, {
      mode: 'live',
      seed: null,
      price: 130,
      referencePrices: pricesAll(firstOpenAtOrAfter(candles, T0)),
    }).sharedIntelligence;
    expect(body.price).toMatchObject({ at_round_start: 56, current: 130 });
    expect(body.price.change_since_round_start_percent).toBeCloseTo((130 / 56 - 1) * 100, 3);
  });

  it('takes the price of the first run of the round when it has no closed candle from the start yet, as the rule says', () => {
    const s = track(tempStore());
    // Venues' bars still forming are left out, so a run 3 minutes in has no candle opening at the start.
    const body = step(s, T0 + 3 * MINUTE, { mode: 'live', seed: null, price: 101 }).sharedIntelligence;
    expect(body.price).toMatchObject({ at_round_start: 101 });
    expect(body.round.resolution_rule).toMatch(/the price of the first run of the round/);
  });

  it('never mixes synthetic votes into human consensus: they show as simulated_crowd', () => {
    const s = track(tempStore());
    const sim = step(s, T0 + MINUTE, { mode: 'simulated', seed: 7 });
    const hc = sim.humanConsensus;
    expect(hc.vote_sources.synthetic_votes).toBeGreaterThan(0);
    expect(hc.human_consensus).toMatchObject({ total: 0, consensus: 'NONE', call_status: 'no_votes' });
    expect(hc.human_status).toBe('No human votes yet in this round.');
    expect(hc.simulated_crowd).toMatchObject({ label: 'simulated' });
    expect(hc.simulated_crowd!.consensus.total).toBe(hc.vote_sources.synthetic_votes);
    expect(sim.sharedIntelligence.human_layer.total).toBe(0);
    expect(sim.sharedIntelligence.combined_intelligence.crowd_consensus).toBe('NONE');
    expect(sim.sharedIntelligence.combined_intelligence.agreement).toBe('no_crowd');
    expect([hc.rules_url, sim.sharedIntelligence.rules_url, hc.human_consensus.rules_url]).toEqual([
      RULES_URL,
      RULES_URL,
      RULES_URL,
    ]);
    // A resolved simulated round: the lesson's crowd is human only, the synthetic votes are counted apart.
    const later = step(s, T0 + HOUR + MINUTE, { mode: 'simulated', seed: 7 });
    const lesson = later.teacherLessons.latest_lessons[0]!;
    expect(lesson.human_consensus).toBe('NONE');
    expect(lesson.provenance.human_votes).toBe(0);
    expect(lesson.provenance.synthetic_votes).toBeGreaterThan(0);
    expect(later.teacherLessons.teacher_brain.metrics.crowd.n).toBe(0);
  });
});
