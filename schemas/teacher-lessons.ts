// Teacher lessons (spec 2.6): every resolved arena round scored for the main brain and the crowd.
// Historical learning context, not a live signal. Every metric carries its sample size.
import * as z from 'zod';
import { ArenaPrediction, ArenaReading, DataMode, IsoTimestamp, TrackedAsset } from './common.ts';
import { RateWithInterval } from './performance.ts';

const Count = z.number().int().min(0);
const ZeroOne = z.number().int().min(0).max(1);

export const PATTERN_TYPES = [
  'aligned_correct',
  'aligned_wrong',
  'brain_beat_crowd',
  'crowd_beat_brain',
  'split_both_wrong',
  'brain_only_no_crowd',
  'crowd_only_no_brain',
  'neither_called',
] as const;

export const TeacherLesson = z.strictObject({
  lesson_id: z.string().describe('"L-" + round_id; one lesson per resolved round'),
  round_id: z.string(),
  asset: TrackedAsset,
  brain_prediction: ArenaReading.describe(
    'the call recorded at the round start; NONE when the brain had none',
  ),
  human_consensus: ArenaReading.describe(
    'consensus of the human votes that counted in the round (synthetic votes never); NONE without votes or on a tie',
  ),
  actual_outcome: ArenaPrediction.describe('class of the price move over the round, with the neutral band'),
  pattern_type: z.enum(PATTERN_TYPES),
  summary: z.string(),
  created_at: IsoTimestamp.describe('when the round was resolved'),
  brain_correct: ZeroOne.describe('1 when brain_prediction equals actual_outcome'),
  crowd_correct: ZeroOne.describe(
    '1 when human_consensus equals actual_outcome; 0 also when there was no consensus (NONE: no votes or a tie), ' +
      'which provenance.human_votes tells apart',
  ),
  agreement: ZeroOne.describe(
    '1 when the brain and the crowd both made a call (neither brain_prediction nor human_consensus is NONE) ' +
      'and called the same side; 0 otherwise, also when both are NONE (no call is no agreement)',
  ),
  shared_intelligence_score: z
    .number()
    .min(0)
    .max(1)
    .describe(
      '1 - RPS of the equal-weight brain+crowd forecast: 1 perfect, 0 worst (without human votes the crowd ' +
        'forecast is uniform, 1/3 per class)',
    ),
  learning_score: z
    .number()
    .min(-1)
    .max(1)
    .describe(
      'RPS(brain) - RPS(crowd): > 0 when the crowd scored better (a lesson for the brain). Without human votes ' +
        'the crowd forecast is uniform (1/3 per class), so the score then compares the brain with an uninformed ' +
        'guess, not with people',
    ),
  provenance: z.strictObject({
    replayed: z.boolean().describe('true when the round comes from a backfill replay'),
    human_votes: Count,
    synthetic_votes: Count.describe('votes from the seeded synthetic crowd, not from people'),
    data_mode: DataMode.nullable()
      .optional()
      .describe(
        'data mode of the run that recorded the round’s brain call (simulated, live or replay); always the mode of ' +
          'this file (other modes are left out), null for a round recorded before the store kept data modes ' +
          '(counted as simulated only)',
      ),
  }),
});
export type TeacherLesson = z.infer<typeof TeacherLesson>;

const Probability = z.number().min(0).max(1);

/**
 * Where every published arena figure points for its rules (the docs page quotes the same rules): here the lessons'
 * human_consensus (a tie is NONE), crowd_correct and actual_outcome (the reference price). Defined here, the file
 * arena.ts and statistics.ts import, and re-exported by arena.ts.
 */
export const RulesUrl = z
  .string()
  .describe('link to the arena rules: vote window, reference price, tie rule, rounding (site-relative)');

/** How one forecaster (brain, crowd or both combined) fared over the resolved rounds it took part in. */
export const ForecasterMetrics = z.strictObject({
  n: Count.describe('resolved rounds scored for this forecaster'),
  hit_rate: RateWithInterval.nullable().describe('share of exact class hits with a 95% Wilson interval'),
  brier_score: z.number().min(0).max(2).nullable().describe('multi-class Brier score, lower is better'),
  ranked_probability_score: Probability.nullable().describe(
    'ordered-class RPS (Murphy 1970), lower is better',
  ),
  skill_vs_base_rate: z.number().nullable().describe('1 - RPS / RPS of the base-rate forecast; > 0 beats it'),
});
export type ForecasterMetrics = z.infer<typeof ForecasterMetrics>;

export const CalibrationBucket = z.strictObject({
  confidence_from: z.number().min(0).max(100),
  confidence_to: z.number().min(0).max(100),
  n: Count,
  mean_forecast_probability: Probability.nullable().describe(
    'mean probability the brain gave its called class',
  ),
  observed_hit_rate: Probability.nullable(),
});

export const TeacherMetrics = z.strictObject({
  window_days: z.number().int().min(1),
  resolved_rounds: Count,
  replayed_rounds: Count.describe('resolved rounds that come from a backfill replay'),
  other_mode_rounds: Count.optional().describe(
    'resolved rounds of the window left out of every figure here because their brain call was recorded in another ' +
      'data mode than this run’s (a live or replay file never counts simulated rounds, nor rounds of unknown mode, ' +
      'recorded before the store kept data modes)',
  ),
  voided_rounds: Count.describe('rounds that could not be resolved (missing price or resolved too late)'),
  min_sample: Count.describe('rates from fewer rounds than this are withheld (null) but n is always shown'),
  brain: ForecasterMetrics,
  crowd: ForecasterMetrics,
  combined: ForecasterMetrics,
  agreement_rate: RateWithInterval.nullable(),
  agreement_n: Count,
  crowd_no_call_rounds: Count.describe(
    'resolved rounds whose human crowd tied at the top: no call, left out of crowd accuracy and agreement',
  ),
  combined_no_call_rounds: Count.describe(
    'resolved rounds whose combined forecast tied at the top of its probabilities (4 decimals): no call, left ' +
      'out of combined.hit_rate (whose n counts only the rounds with a call); its scores still count',
  ),
  calibration: z.array(CalibrationBucket).describe('brain calls grouped by their confidence'),
  outcome_base_rate: z.strictObject({
    n: Count,
    bearish: Probability,
    neutral: Probability,
    bullish: Probability,
  }),
  outcome_rule: z.string(),
  score_definitions: z.string(),
});
export type TeacherMetrics = z.infer<typeof TeacherMetrics>;

export const TeacherBrain = z.strictObject({
  status: z.enum(['no_history', 'insufficient_sample', 'active']),
  role: z.string(),
  metrics: TeacherMetrics,
});
export type TeacherBrain = z.infer<typeof TeacherBrain>;

export const TeacherLessonsResponse = z.strictObject({
  success: z.literal(true),
  project: z.string(),
  type: z.literal('teacher_lessons'),
  mode: DataMode.describe('data mode of the run: simulated, live or replay'),
  teacher_brain: TeacherBrain,
  latest_lessons: z
    .array(TeacherLesson)
    .describe('newest first, at most 20; only rounds recorded in the data mode of this run'),
  rules_url: RulesUrl,
  developer_note: z.string(),
  privacy_note: z.string(),
  educational_notice: z.string(),
  updated_utc: IsoTimestamp,
  next_update_due: IsoTimestamp.describe(
    'when the next scheduled run should replace this file; past it the file is late (not in the spec: freshness)',
  ),
});
export type TeacherLessonsResponse = z.infer<typeof TeacherLessonsResponse>;
