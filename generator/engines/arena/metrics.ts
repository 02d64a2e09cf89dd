// Track records from resolved rounds: the teacher brain's metrics and the main brain's public performance.
// Every rate carries its n; below MIN_SAMPLE rounds the values are withheld (null) rather than shown bare.
import type { ArenaPrediction, DataMode } from '../../../schemas/common.ts';
import type { ForecasterMetrics, TeacherBrain, TeacherMetrics } from '../../../schemas/teacher-lessons.ts';
import type { PublicPerformance } from '../../../schemas/performance.ts';
import type { ResolvedRound } from './lessons.ts';
import { consensusOf, crowdCallStatus } from './consensus.ts';
import { leftOutSentence, NOTHING_LEFT_OUT, type LeftOut } from './data-mode.ts';
import {
  averageProbs,
  brainProbs,
  brierScore,
  CLASS_ORDER,
  classIndex,
  crowdProbs,
  OUTCOME_RULE,
  rankedProbabilityScore,
  round4,
  SCORE_DEFINITIONS,
  wilsonInterval,
  type ClassProbs,
} from './scoring.ts';

export const MIN_SAMPLE = 10;
export const WINDOW_DAYS = 30;
export const CALIBRATION_EDGES = [0, 40, 60, 80, 100] as const;

/** The run's data mode and the resolved rounds of the window left out because they were recorded in another. */
export interface ModeScope {
  mode: DataMode;
  leftOut: LeftOut;
}

export const TEACHER_ROLE =
  'Scores the main brain and the crowd against resolved arena rounds and writes lessons from the differences. ' +
  'Historical learning context, not a live signal.';

interface Scored {
  probs: ClassProbs;
  /** null when the forecaster made no call (a tie at the top): scored for its probabilities, not for a hit. */
  hit: boolean | null;
  outcome: ArenaPrediction;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

const rate = (k: number, n: number) => {
  const { low, high } = wilsonInterval(k, n);
  return { value: round4(k / n), n, wilson_low: round4(low), wilson_high: round4(high) };
};

/** Smoothed outcome frequencies (n_i + 1) / (N + 3): the no-skill forecast every forecaster is compared with. */
export const baseRate = (outcomes: ArenaPrediction[]): ClassProbs => {
  const n = outcomes.length;
  const f = (c: ArenaPrediction) => (outcomes.filter((o) => o === c).length + 1) / (n + 3);
  return [f('BEARISH'), f('NEUTRAL'), f('BULLISH')];
};

export type CombinedCallStatus = 'called' | 'tie';

/**
 * The classes sharing the top probability, compared as published (4 decimals): a reader can check a tie on the
 * figures in combined_probabilities, and floating-point noise cannot turn an exact tie into a call.
 */
const leadersOf = (p: ClassProbs): ArenaPrediction[] => {
  const shown = p.map(round4);
  const top = Math.max(...shown);
  return CLASS_ORDER.filter((_, i) => shown[i] === top);
};

/** The combined view's call: its most probable class, or null when two or three classes share the top. */
export const combinedCallOf = (p: ClassProbs): ArenaPrediction | null => {
  const leaders = leadersOf(p);
  return leaders.length === 1 ? leaders[0]! : null;
};

export const combinedCallStatus = (p: ClassProbs): CombinedCallStatus =>
  combinedCallOf(p) === null ? 'tie' : 'called';

/**
 * The published combined_lean: the call, or NEUTRAL on a tie. NEUTRAL is kept there so that the field's enum stays
 * as it was for strict clients; it is the middle of the ordered classes, not a call, and combined_call_status says
 * "tie" beside it. A tie is never scored as a hit or a miss (see teacherBrain).
 */
export const leanOf = (p: ClassProbs): ArenaPrediction => combinedCallOf(p) ?? 'NEUTRAL';

const combinedProbs = (r: ResolvedRound): ClassProbs =>
  averageProbs(brainProbs(r.brainCall, r.brainConfidence), crowdProbs(r.counts));

export const forecasterMetrics = (items: Scored[], base: ClassProbs): ForecasterMetrics => {
  const n = items.length;
  if (n < MIN_SAMPLE) {
    return { n, hit_rate: null, brier_score: null, ranked_probability_score: null, skill_vs_base_rate: null };
  }
  const rps = mean(items.map((s) => rankedProbabilityScore(s.probs, s.outcome)));
  const rpsBase = mean(items.map((s) => rankedProbabilityScore(base, s.outcome)));
  // Probability scores take every round; the hit rate only the rounds with a call, and carries that n.
  const called = items.filter((s) => s.hit !== null);
  return {
    n,
    hit_rate: called.length < MIN_SAMPLE ? null : rate(called.filter((s) => s.hit).length, called.length),
    brier_score: round4(mean(items.map((s) => brierScore(s.probs, s.outcome)))),
    ranked_probability_score: round4(rps),
    skill_vs_base_rate: rpsBase === 0 ? null : round4(1 - rps / rpsBase),
  };
};

/**
 * A brain call scored: at confidence 0 its probabilities are uniform, a three-way tie, so like a tied combined
 * forecast it is no call for the hit rate (its probabilities are still scored).
 */
const brainScored = (r: ResolvedRound): Scored => ({
  probs: brainProbs(r.brainCall, r.brainConfidence),
  hit: (r.brainConfidence ?? 0) > 0 ? r.brainCall === r.outcome : null,
  outcome: r.outcome,
});

const calibration = (rounds: ResolvedRound[]): TeacherMetrics['calibration'] =>
  CALIBRATION_EDGES.slice(0, -1).map((from, i) => {
    const to = CALIBRATION_EDGES[i + 1]!;
    const last = i === CALIBRATION_EDGES.length - 2;
    const inBucket = rounds.filter((r) => {
      const c = r.brainConfidence ?? 0;
      return c >= from && (last ? c <= to : c < to);
    });
    const n = inBucket.length;
    const shown = n >= MIN_SAMPLE;
    return {
      confidence_from: from,
      confidence_to: to,
      n,
      mean_forecast_probability: shown
        ? round4(mean(inBucket.map((r) => brainScored(r).probs[classIndex(r.brainCall as ArenaPrediction)]!)))
        : null,
      observed_hit_rate: shown ? round4(inBucket.filter((r) => r.brainCall === r.outcome).length / n) : null,
    };
  });

/**
 * Metrics over resolved (not voided) rounds already restricted to the reporting window and to the run's data mode
 * (scope says how many rounds of other modes were left out).
 */
export const teacherBrain = (rounds: ResolvedRound[], voided: number, scope?: ModeScope): TeacherBrain => {
  const base = baseRate(rounds.map((r) => r.outcome));
  const withCall = rounds.filter((r) => r.brainCall !== 'NONE');
  // A tied crowd makes no call: it is out of crowd accuracy and agreement, and counted on its own.
  const withCrowd = rounds.filter((r) => crowdCallStatus(r.counts) === 'called');
  const crowdTies = rounds.filter((r) => crowdCallStatus(r.counts) === 'tie').length;
  const both = withCall.filter((r) => crowdCallStatus(r.counts) === 'called');
  const agreeing = both.filter((r) => r.brainCall === consensusOf(r.counts)).length;
  // A tied combined forecast is no call: its probabilities are scored, its "lean" is not a hit or a miss.
  const combined = rounds.map((r) => {
    const probs = combinedProbs(r);
    const call = combinedCallOf(probs);
    return { probs, hit: call === null ? null : call === r.outcome, outcome: r.outcome };
  });
  const metrics: TeacherMetrics = {
    window_days: WINDOW_DAYS,
    resolved_rounds: rounds.length,
    replayed_rounds: rounds.filter((r) => r.replayed).length,
    other_mode_rounds: (scope?.leftOut ?? NOTHING_LEFT_OUT).rounds,
    voided_rounds: voided,
    min_sample: MIN_SAMPLE,
    brain: forecasterMetrics(withCall.map(brainScored), base),
    crowd: forecasterMetrics(
      withCrowd.map((r) => ({
        probs: crowdProbs(r.counts),
        hit: consensusOf(r.counts) === r.outcome,
        outcome: r.outcome,
      })),
      base,
    ),
    combined: forecasterMetrics(combined, base),
    agreement_rate: both.length >= MIN_SAMPLE ? rate(agreeing, both.length) : null,
    agreement_n: both.length,
    crowd_no_call_rounds: crowdTies,
    combined_no_call_rounds: combined.filter((c) => c.hit === null).length,
    calibration: calibration(withCall),
    outcome_base_rate: {
      n: rounds.length,
      bearish: round4(base[0]),
      neutral: round4(base[1]),
      bullish: round4(base[2]),
    },
    outcome_rule: OUTCOME_RULE,
    score_definitions: SCORE_DEFINITIONS,
  };
  const status =
    rounds.length === 0 ? 'no_history' : rounds.length < MIN_SAMPLE ? 'insufficient_sample' : 'active';
  return { status, role: TEACHER_ROLE, metrics };
};

/**
 * The main brain's track record for the main-brain endpoint: rounds where it made a call, inside the window, of the
 * run's data mode only (a record of simulated rounds is never shown as a live one; scope names what was left out).
 */
export const publicPerformanceFrom = (rounds: ResolvedRound[], scope?: ModeScope): PublicPerformance => {
  const withCall = rounds.filter((r) => r.brainCall !== 'NONE');
  const n = withCall.length;
  const m = forecasterMetrics(withCall.map(brainScored), baseRate(rounds.map((r) => r.outcome)));
  const replayed = withCall.filter((r) => r.replayed).length;
  const status = n === 0 ? 'no_history' : n < MIN_SAMPLE ? 'insufficient_sample' : 'available';
  const leftOut = scope?.leftOut ?? NOTHING_LEFT_OUT;
  const replayNote =
    (replayed > 0 ? ` ${replayed} of them come from a backfill replay of the simulated market.` : '') +
    (scope ? leftOutSentence(leftOut.withCall, leftOut.modes, scope.mode) : '');
  const note =
    status === 'no_history'
      ? `No arena round with a brain call${leftOut.withCall > 0 && scope ? ` recorded in ${scope.mode} mode` : ''} ` +
        `has been resolved yet, so there is no track record to report.${replayNote}`
      : status === 'insufficient_sample'
        ? `Only ${n} resolved rounds in the last ${WINDOW_DAYS} days; rates are withheld below ${MIN_SAMPLE}.${replayNote}`
        : `Scored over ${n} resolved arena rounds in the last ${WINDOW_DAYS} days.${replayNote} Past hit rates do not predict future outcomes.`;
  return {
    status,
    resolved_rounds: n,
    replayed_rounds: replayed,
    other_mode_rounds: leftOut.withCall,
    window_days: WINDOW_DAYS,
    hit_rate: m.hit_rate,
    brier_score: m.brier_score,
    ranked_probability_score: m.ranked_probability_score,
    skill_vs_base_rate: m.skill_vs_base_rate,
    note,
  };
};
