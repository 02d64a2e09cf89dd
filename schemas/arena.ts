// Arena resources (spec 2.5): the active round, the crowd's consensus and the shared-intelligence view that
// puts round, crowd, main brain, teacher brain, price and integrity side by side.
import * as z from 'zod';
import {
  ArenaPrediction,
  ArenaReading,
  Bias,
  Confidence,
  DataMode,
  IsoTimestamp,
  TrackedAsset,
} from './common.ts';
import { RulesUrl, TeacherBrain } from './teacher-lessons.ts';

const Percent = z.number().min(0).max(100);
const Count = z.number().int().min(0);

export const RoundInfo = z.strictObject({
  round_id: z.string().describe('"<ASSET>-<YYYYMMDD>T<HH>Z": asset and the UTC hour the round starts'),
  asset: TrackedAsset,
  start: IsoTimestamp.describe('round start (inclusive), aligned to the UTC hour'),
  end: IsoTimestamp.describe('round end (exclusive), start + 60 minutes'),
  seconds_left: z.number().int().min(0).describe('whole seconds until the round ends, rounded up'),
  timer: z
    .string()
    .regex(/^\d{2}:\d{2}$/)
    .describe('seconds_left as minutes:seconds, e.g. "42:07"'),
});
export type RoundInfo = z.infer<typeof RoundInfo>;

export { RulesUrl };

export const CrowdCallStatus = z
  .enum(['called', 'tie', 'no_votes'])
  .describe(
    'called: one class has the most votes; tie: two or three classes share the most votes, so the crowd makes ' +
      'no call (consensus NONE), left out of crowd accuracy and counted separately; no_votes: nobody voted',
  );

export const HumanConsensus = z.strictObject({
  total: Count.describe('votes from people only; synthetic (simulated) votes are never counted here'),
  bullish: Count,
  bearish: Count,
  neutral: Count,
  bullish_percent: Percent,
  bearish_percent: Percent,
  neutral_percent: Percent.describe(
    'percentages in tenths by the largest-remainder method made fair: equal counts always get equal shares, ' +
      'the total is exactly 100 whenever equal shares allow it (0 when no votes)',
  ),
  rounding_residual_percent: z
    .number()
    .min(0)
    .max(0.2)
    .describe(
      '100 minus the sum of the three percentages: 0 except when equal counts make an exact 100.0 impossible ' +
        '(1/1/1 votes publish 33.3 each and 0.1 here; 1/1/14 publishes 6.2, 6.2, 87.5)',
    ),
  consensus: ArenaReading.describe(
    'the class with most votes; NONE when there are no votes or the top is tied (see call_status)',
  ),
  call_status: CrowdCallStatus,
  disagreement_score: z
    .number()
    .min(0)
    .max(1)
    .describe('normalised Shannon entropy of the vote shares: 0 unanimous, 1 evenly split; 0 without votes'),
  rules_url: RulesUrl,
});
export type HumanConsensus = z.infer<typeof HumanConsensus>;

/** Where the counted votes came from: real people, the seeded synthetic crowd, or a backfill replay. */
export const VoteSources = z.strictObject({
  human_votes: Count.describe('votes cast by people through import or vote'),
  synthetic_votes: Count.describe(
    'votes added by the seeded synthetic crowd (simulated mode and backfill only)',
  ),
  replayed_votes: Count.describe('votes that come from a backfill replay (all of them synthetic)'),
  other_mode_votes: Count.optional().describe(
    'votes in the store left out of the counts above because they belong to another data mode than this ' +
      'run’s: synthetic votes outside simulated mode and, in statistics, votes in rounds whose brain call was ' +
      'recorded in another mode (a vote counts with its round; a person’s vote in a round not called yet counts ' +
      'in every mode); synthetic_label names their modes',
  ),
  synthetic_label: z.string().describe('plain-language reading of the counts above'),
});
export type VoteSources = z.infer<typeof VoteSources>;

/** The seeded synthetic crowd of simulated mode, shown beside (never inside) the human consensus. */
export const SimulatedCrowd = z
  .strictObject({
    label: z.literal('simulated').describe('these votes come from the seeded simulator, not from people'),
    consensus: HumanConsensus.describe('the same reading as human_consensus, over synthetic votes only'),
    note: z.string(),
  })
  .nullable()
  .describe(
    'null when no synthetic vote was cast in the round, and always null outside simulated mode: synthetic votes ' +
      'belong to the simulated market (vote_sources.other_mode_votes counts them apart)',
  );
export type SimulatedCrowd = z.infer<typeof SimulatedCrowd>;

const ArenaEnvelope = {
  success: z.literal(true),
  project: z.string(),
  type: z.string(),
  mode: DataMode.describe(
    'data mode of the run: simulated (seeded market + synthetic crowd), live or replay',
  ),
  asset: TrackedAsset.describe('asset of the active round'),
};

export const HumanConsensusResponse = z.strictObject({
  ...ArenaEnvelope,
  type: z.literal('human_consensus'),
  round: RoundInfo,
  human_consensus: HumanConsensus.describe(
    'consensus of human votes only; "no human votes yet" shows as total 0',
  ),
  human_status: z
    .string()
    .describe('plain reading of human_consensus, e.g. "No human votes yet in this round."'),
  simulated_crowd: SimulatedCrowd,
  vote_sources: VoteSources,
  rules_url: RulesUrl,
  developer_note: z.string(),
  educational_notice: z.string(),
  updated_utc: IsoTimestamp,
  next_update_due: IsoTimestamp.describe(
    'when the next scheduled run should replace this file; past it the file is late (not in the spec: freshness)',
  ),
});
export type HumanConsensusResponse = z.infer<typeof HumanConsensusResponse>;

export const SharedRound = RoundInfo.extend({
  status: z
    .literal('open')
    .describe(
      'the round running at the run time, its outcome not known yet; it takes votes only until votes_close_at',
    ),
  votes_close_at: IsoTimestamp.describe(
    'a vote for this round counts only if the server receives it before this time (60 s after the start); ' +
      'later votes go to a later round of the asset (see rules_url)',
  ),
  brain_call_recorded: z.boolean().describe('whether the main brain call for this round is on record'),
  entry_window_minutes: Count.describe('a brain call is recorded only within this many minutes of the start'),
  resolution_rule: z.string().describe('how the round outcome is decided, fixed before the round starts'),
});

export const BrainSnapshot = z.strictObject({
  asset: TrackedAsset,
  prediction: ArenaReading.describe('the call in arena terms; NONE when the brain had no call'),
  bias: Bias.nullable(),
  confidence: Confidence.nullable().describe('evidence strength 0-100, not certainty'),
  price_at_call: z
    .number()
    .nullable()
    .describe('price recorded with the call; with source latest_run, the price this run saw'),
  recorded_at: IsoTimestamp.nullable().describe(
    'when the call was recorded for this round; null if not recorded',
  ),
  source: z.enum(['recorded_for_round', 'latest_run', 'unavailable']),
});

const ClassProbabilities = z.strictObject({
  bearish: z.number().min(0).max(1),
  neutral: z.number().min(0).max(1),
  bullish: z.number().min(0).max(1),
});

export const CombinedIntelligence = z.strictObject({
  brain_prediction: ArenaReading,
  crowd_consensus: ArenaReading.describe('human consensus only; NONE with no votes or a tie'),
  agreement: z
    .enum(['agree', 'disagree', 'no_crowd', 'no_brain_call'])
    .describe(
      'agree: the brain and the human crowd call the same side; disagree: opposite or different calls; no_crowd: ' +
        'the human crowd has no call (no votes or a tie); no_brain_call: the brain made no call this round',
    ),
  brain_probabilities: ClassProbabilities.describe('brain call shrunk towards uniform by its confidence'),
  crowd_probabilities: ClassProbabilities.describe('smoothed human vote shares (n_i + 1) / (N + 3)'),
  combined_probabilities: ClassProbabilities.describe(
    'equal-weight average of brain and crowd probabilities',
  ),
  combined_lean: ArenaPrediction.describe(
    'the most probable class of combined_probabilities as published (4 decimals). On a tie at the top ' +
      '(combined_call_status "tie") it shows NEUTRAL, the middle class, only so that the values stay the same: a tie ' +
      'is no call and is never scored as one',
  ),
  combined_call_status: z
    .enum(['called', 'tie'])
    .describe(
      'called: one class of combined_probabilities (as published, 4 decimals) is the most probable; tie: two or ' +
        'three share the top, so the combined view makes no call: left out of the combined hit rate and counted ' +
        'in teacher_brain.metrics.combined_no_call_rounds when the round is scored',
    ),
  note: z.string(),
});

export const ArenaEvent = z.strictObject({
  at: IsoTimestamp,
  kind: z.enum(['brain_call_recorded', 'round_resolved', 'round_voided']),
  round_id: z.string(),
  asset: TrackedAsset,
  detail: z.string(),
  replayed: z.boolean().describe('true when the record comes from a backfill replay'),
});

export type ArenaEvent = z.infer<typeof ArenaEvent>;

export const ArenaEvents = z.strictObject({
  recent: z.array(ArenaEvent).describe('newest first, at most 10'),
  note: z.string(),
});

export const PriceContext = z.strictObject({
  asset: TrackedAsset,
  current: z.number().nullable().describe('price seen by this run; null when unavailable'),
  at_round_start: z
    .number()
    .nullable()
    .describe(
      "reference price: the first price from at or after the round start (by the price's own time) seen within " +
        '15 minutes of the start; null while none has come, or when the first run of the round came after the ' +
        'entry window',
    ),
  change_since_round_start_percent: z.number().nullable(),
  neutral_band_percent: z.number().describe('|move| below this resolves NEUTRAL'),
  data_mode: DataMode,
  as_of: IsoTimestamp,
});

export const SystemIntegrity = z.strictObject({
  store_schema_version: Count,
  runs_recorded: Count,
  runs_failed: Count,
  last_successful_run_at: IsoTimestamp.nullable(),
  single_writer_lock: z
    .literal(true)
    .describe('generator runs take a store lock; a concurrent run is refused'),
  synthetic_votes_present: z.boolean(),
  replayed_records_present: z.boolean(),
  notes: z.array(z.string()),
});

export const SharedIntelligenceResponse = z.strictObject({
  ...ArenaEnvelope,
  type: z.literal('shared_intelligence'),
  round: SharedRound,
  my_prediction: z
    .string()
    .nullable()
    .describe('always null: a static file is the same for every caller, so it cannot know who is asking'),
  brain_snapshot: BrainSnapshot,
  human_layer: HumanConsensus.describe('human votes only'),
  simulated_crowd: SimulatedCrowd,
  vote_sources: VoteSources,
  rules_url: RulesUrl,
  combined_intelligence: CombinedIntelligence,
  teacher_brain: TeacherBrain,
  events: ArenaEvents,
  price: PriceContext,
  system_integrity: SystemIntegrity,
  educational_notice: z.string(),
  updated_utc: IsoTimestamp,
  next_update_due: IsoTimestamp.describe(
    'when the next scheduled run should replace this file; past it the file is late (not in the spec: freshness)',
  ),
});
export type SharedIntelligenceResponse = z.infer<typeof SharedIntelligenceResponse>;
