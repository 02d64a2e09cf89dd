// Statistics (spec 2.8): counts and track records read from the arena store. Not a market signal.
import * as z from 'zod';
import { ArenaReading, Confidence, DataMode, IsoTimestamp, TrackedAsset } from './common.ts';
import { PublicPerformance } from './performance.ts';
import { RoundInfo, RulesUrl, VoteSources } from './arena.ts';
import { TeacherBrain } from './teacher-lessons.ts';

const Count = z.number().int().min(0);

export const MainBrainStatistics = z.strictObject({
  public_performance: PublicPerformance,
  recorded_calls: Count.describe('brain calls on record, one per round at most'),
  replayed_calls: Count.describe('of those, calls that come from a backfill replay'),
  calls_by_prediction: z.strictObject({ bullish: Count, bearish: Count, neutral: Count, none: Count }),
  latest_call: z
    .strictObject({
      round_id: z.string(),
      asset: TrackedAsset,
      prediction: ArenaReading,
      confidence: Confidence.nullable(),
      recorded_at: IsoTimestamp,
      replayed: z.boolean(),
    })
    .nullable(),
});

export const CoreLearningStatistics = z.strictObject({
  lessons_total: Count,
  lessons_replayed: Count.describe('lessons from rounds replayed by a backfill'),
  last_lesson_at: IsoTimestamp.nullable(),
  outcome_distribution: z
    .strictObject({ bullish: Count, bearish: Count, neutral: Count })
    .describe('resolved outcomes over all history'),
  voided_rounds: Count.describe('rounds with a brain call that could not be resolved'),
  outcome_rule: z.string(),
});

export const ArenaStatistics = z.strictObject({
  schedule: z.strictObject({
    round_minutes: z.number().int().min(1),
    alignment: z.string(),
    rotation: z.array(TrackedAsset).describe('asset order; round k of the epoch plays rotation[k mod 7]'),
  }),
  current_round: RoundInfo,
  rounds_with_votes: Count, // meaning in field-meanings.ts: any source, synthetic included
  rounds_with_human_votes: Count.describe(
    'rounds with at least one vote from a person; synthetic votes never count here',
  ),
  votes_total: Count, // meaning in field-meanings.ts: any source, synthetic included
  vote_sources: VoteSources,
  distinct_human_voters: Count.describe(
    'distinct salted voter hashes; the ids themselves are never published',
  ),
});

export const ApiEcosystemStatistics = z.strictObject({
  arena_resources: z.array(z.strictObject({ path: z.string().startsWith('/'), cache_seconds: Count })),
  generator_runs: z.strictObject({
    total: Count,
    ok: Count,
    failed: Count,
    last_run_at: IsoTimestamp.nullable(),
    last_successful_run_at: IsoTimestamp.nullable(),
  }),
  store_schema_version: Count,
});

export const StatisticsResponse = z.strictObject({
  success: z.literal(true),
  project: z.string(),
  type: z.literal('statistics'),
  mode: DataMode.describe('data mode of the run: simulated, live or replay'),
  main_brain: MainBrainStatistics,
  core_learning: CoreLearningStatistics,
  arena: ArenaStatistics,
  teacher_brain: TeacherBrain,
  api_ecosystem: ApiEcosystemStatistics,
  rules_url: RulesUrl,
  developer_note: z.string(),
  educational_notice: z.string(),
  updated_utc: IsoTimestamp,
  next_update_due: IsoTimestamp.describe(
    'when the next scheduled run should replace this file; past it the file is late (not in the spec: freshness)',
  ),
});
export type StatisticsResponse = z.infer<typeof StatisticsResponse>;
