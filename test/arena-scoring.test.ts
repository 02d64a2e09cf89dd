import { describe, expect, it } from 'vitest';
import {
  averageProbs,
  brainProbs,
  brierScore,
  crowdProbs,
  outcomeOf,
  rankedProbabilityScore,
  wilsonInterval,
} from '../generator/engines/arena/scoring.ts';
import { buildLesson, type ResolvedRound } from '../generator/engines/arena/lessons.ts';
import { publicPerformanceFrom, teacherBrain } from '../generator/engines/arena/metrics.ts';
import { TeacherBrain, TeacherLesson } from '../schemas/teacher-lessons.ts';
import { PublicPerformance } from '../schemas/performance.ts';

// Brain BULLISH at confidence 50: w = 0.7 x 0.5 = 0.35, others (1 - w) / 3 = 13/60, call 13/60 + 0.35 = 34/60.
const BRAIN: [number, number, number] = [13 / 60, 13 / 60, 34 / 60];
// Crowd 3 bullish, 1 bearish, 0 neutral: (n_i + 1) / (N + 3) = bearish 2/7, neutral 1/7, bullish 4/7.
const CROWD_COUNTS = { bullish: 3, bearish: 1, neutral: 0 };

describe('scores against hand-computed values', () => {
  it('classifies the move with the 0.25% neutral band', () => {
    expect(outcomeOf(100, 100.24)).toBe('NEUTRAL');
    expect(outcomeOf(100, 99.76)).toBe('NEUTRAL');
    expect(outcomeOf(100, 100.25)).toBe('BULLISH');
    expect(outcomeOf(100, 99.7)).toBe('BEARISH');
  });

  it('builds brain and crowd probabilities', () => {
    brainProbs('BULLISH', 50).forEach((p, i) => expect(p).toBeCloseTo(BRAIN[i]!, 12));
    expect(brainProbs('NONE', 90)).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect(brainProbs('BEARISH', 0)).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect(brainProbs('NEUTRAL', 100)[1]).toBeCloseTo(0.8, 12);
    expect(crowdProbs(CROWD_COUNTS)).toEqual([2 / 7, 1 / 7, 4 / 7]);
  });

  it('computes RPS and Brier', () => {
    // Outcome BULLISH: cumulative forecast (13/60, 26/60) vs (0, 0): (169 + 676) / 3600 / 2 = 845 / 7200.
    expect(rankedProbabilityScore(BRAIN, 'BULLISH')).toBeCloseTo(845 / 7200, 12);
    // Outcome BEARISH: (47/60)^2 + (34/60)^2 = 3365 / 3600, halved.
    expect(rankedProbabilityScore(BRAIN, 'BEARISH')).toBeCloseTo(3365 / 7200, 12);
    // Crowd, outcome BULLISH: ((2/7)^2 + (3/7)^2) / 2 = 13 / 98.
    expect(rankedProbabilityScore(crowdProbs(CROWD_COUNTS), 'BULLISH')).toBeCloseTo(13 / 98, 12);
    // Brier, outcome BULLISH: 2 x (13/60)^2 + (26/60)^2 = 1014 / 3600.
    expect(brierScore(BRAIN, 'BULLISH')).toBeCloseTo(1014 / 3600, 12);
    expect(rankedProbabilityScore([0, 0, 1], 'BULLISH')).toBe(0);
    expect(rankedProbabilityScore([1, 0, 0], 'BULLISH')).toBe(1);
    expect(averageProbs([1, 0, 0], [0, 0, 1])).toEqual([0.5, 0, 0.5]);
  });

  it('computes the 95% Wilson interval', () => {
    const w = wilsonInterval(7, 10);
    expect(w.low).toBeCloseTo(0.3968, 4);
    expect(w.high).toBeCloseTo(0.8922, 4);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  const round = (over: Partial<ResolvedRound> = {}): ResolvedRound => ({
    roundId: 'BTC-20250101T10Z',
    asset: 'BTC',
    brainCall: 'BULLISH',
    brainConfidence: 50,
    counts: CROWD_COUNTS,
    humanVotes: 1,
    syntheticVotes: 3,
    outcome: 'BULLISH',
    returnFraction: 0.004,
    resolvedAt: Date.UTC(2025, 0, 1, 11, 1),
    replayed: false,
    ...over,
  });

  it('scores a lesson', () => {
    const lesson = buildLesson(round());
    // Combined cumulative: F1 = (13/60 + 2/7) / 2 = 211/840, F2 = F1 + (13/60 + 1/7) / 2 = 362/840.
    const combinedRps = ((211 / 840) ** 2 + (362 / 840) ** 2) / 2;
    expect(lesson).toMatchObject({
      lesson_id: 'L-BTC-20250101T10Z',
      brain_prediction: 'BULLISH',
      human_consensus: 'BULLISH',
      actual_outcome: 'BULLISH',
      pattern_type: 'aligned_correct',
      brain_correct: 1,
      crowd_correct: 1,
      agreement: 1,
      shared_intelligence_score: Math.round((1 - combinedRps) * 1e4) / 1e4,
      learning_score: Math.round((845 / 7200 - 13 / 98) * 1e4) / 1e4,
      created_at: '2025-01-01T11:01:00.000Z',
    });
    expect(lesson.shared_intelligence_score).toBe(0.8756);
    expect(lesson.learning_score).toBe(-0.0153);
    expect(TeacherLesson.parse(lesson)).toEqual(lesson);

    const split = buildLesson(round({ outcome: 'BEARISH', counts: { bullish: 0, bearish: 2, neutral: 0 } }));
    expect(split).toMatchObject({
      pattern_type: 'crowd_beat_brain',
      brain_correct: 0,
      crowd_correct: 1,
      agreement: 0,
    });
    const alone = buildLesson(round({ counts: { bullish: 0, bearish: 0, neutral: 0 }, replayed: true }));
    expect(alone).toMatchObject({
      pattern_type: 'brain_only_no_crowd',
      human_consensus: 'NONE',
      agreement: 0,
    });
    expect(alone.summary.startsWith('[replayed]')).toBe(true);
  });

  it('aggregates metrics with n, withholding rates below the minimum sample', () => {
    const few = teacherBrain([round(), round()], 1);
    expect(few.status).toBe('insufficient_sample');
    expect(few.metrics.brain).toEqual({
      n: 2,
      hit_rate: null,
      brier_score: null,
      ranked_probability_score: null,
      skill_vs_base_rate: null,
    });
    expect(few.metrics.voided_rounds).toBe(1);

    // 10 rounds, brain BULLISH at 50 each time: 7 BULLISH outcomes, 3 BEARISH.
    const rounds = Array.from({ length: 10 }, (_, i) => round({ outcome: i < 7 ? 'BULLISH' : 'BEARISH' }));
    const tb = teacherBrain(rounds, 0);
    expect(TeacherBrain.parse(tb)).toEqual(tb);
    expect(tb.status).toBe('active');
    const brainRps = (7 * (845 / 7200) + 3 * (3365 / 7200)) / 10;
    // Base rate (n_i + 1) / (N + 3): bearish 4/13, neutral 1/13, bullish 8/13.
    const baseRps = (7 * ((16 + 25) / 338) + 3 * ((81 + 64) / 338)) / 10;
    expect(tb.metrics.brain.n).toBe(10);
    expect(tb.metrics.brain.hit_rate).toEqual({ value: 0.7, n: 10, wilson_low: 0.3968, wilson_high: 0.8922 });
    expect(tb.metrics.brain.ranked_probability_score).toBeCloseTo(brainRps, 4);
    // Brier, outcome BEARISH: (47/60)^2 + (13/60)^2 + (34/60)^2 = 3534 / 3600.
    expect(tb.metrics.brain.brier_score).toBeCloseTo((7 * 1014 + 3 * 3534) / 36000, 4);
    expect(tb.metrics.brain.skill_vs_base_rate).toBeCloseTo(1 - brainRps / baseRps, 4);
    expect(tb.metrics.outcome_base_rate).toEqual({
      n: 10,
      bearish: 0.3077,
      neutral: 0.0769,
      bullish: 0.6154,
    });
    expect(tb.metrics.agreement_rate).toMatchObject({ value: 1, n: 10 });
    const bucket = tb.metrics.calibration.find((b) => b.confidence_from === 40)!;
    expect(bucket).toMatchObject({ n: 10, observed_hit_rate: 0.7, mean_forecast_probability: 0.5667 });

    const perf = publicPerformanceFrom(rounds);
    expect(PublicPerformance.parse(perf)).toEqual(perf);
    expect(perf).toMatchObject({
      status: 'available',
      resolved_rounds: 10,
      replayed_rounds: 0,
      window_days: 30,
    });
    expect(perf.hit_rate?.n).toBe(10);
    expect(publicPerformanceFrom([]).status).toBe('no_history');
  });
});
