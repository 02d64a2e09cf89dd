// How the brain's recorded calls fared against resolved outcomes. Filled from the arena store; every rate
// carries its sample size, and a rate from too few rounds is withheld rather than shown bare.
import * as z from 'zod';

export const RateWithInterval = z.strictObject({
  value: z.number().min(0).max(1),
  n: z.number().int().min(0),
  wilson_low: z.number().min(0).max(1),
  wilson_high: z.number().min(0).max(1),
});

export const PublicPerformance = z
  .strictObject({
    status: z
      .enum(['no_history', 'insufficient_sample', 'available', 'unavailable'])
      .describe('unavailable: the arena store could not be read this run, so no track record is shown'),
    resolved_rounds: z.number().int().min(0),
    replayed_rounds: z
      .number()
      .int()
      .min(0)
      .describe(
        'how many of the resolved rounds come from a backfill replay (of the simulated market) rather than from ' +
          'the generator’s own runs',
      ),
    other_mode_rounds: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'resolved rounds with a brain call in the window that are left out because their call was recorded in ' +
          'another data mode than this run’s (live and replay records never count simulated rounds, nor rounds ' +
          'of unknown mode, recorded before the store kept data modes); the note names their modes',
      ),
    window_days: z.number().int().min(1),
    hit_rate: RateWithInterval.nullable().describe(
      'share of the calls that matched the outcome, with a 95% Wilson interval; a call at confidence 0 (uniform ' +
        'probabilities, a three-way tie) is no call and left out, so its n may be below resolved_rounds',
    ),
    brier_score: z.number().min(0).max(2).nullable().describe('multi-class Brier score, lower is better'),
    ranked_probability_score: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe('ordered-class RPS, lower is better'),
    skill_vs_base_rate: z
      .number()
      .nullable()
      .describe('1 - RPS / RPS of the base-rate forecast; > 0 beats it'),
    note: z.string(),
  })
  .describe(
    'how the brain’s recorded calls fared against resolved arena outcomes, with sample sizes; only rounds whose ' +
      'call was recorded in the data mode of this run count',
  );
export type PublicPerformance = z.infer<typeof PublicPerformance>;

export const NO_PERFORMANCE_HISTORY: PublicPerformance = {
  status: 'no_history',
  resolved_rounds: 0,
  replayed_rounds: 0,
  window_days: 30,
  hit_rate: null,
  brier_score: null,
  ranked_probability_score: null,
  skill_vs_base_rate: null,
  note: 'No arena round has been resolved yet, so there is no track record to report.',
};

/** What a run publishes when the arena store is damaged or unreadable: no figures, and why. */
export const PERFORMANCE_STORE_UNAVAILABLE: PublicPerformance = {
  ...NO_PERFORMANCE_HISTORY,
  status: 'unavailable',
  note:
    'The arena store could not be read this run, so the track record is not shown. It returns once the ' +
    'operator repairs the store; nothing here means the brain has no record.',
};
