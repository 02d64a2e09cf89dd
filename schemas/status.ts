// GET /status.json: what the last generator run did, published with the site for operators and monitors.
import * as z from 'zod';
import { DISCLAIMER, DataMode, IsoTimestamp, PROJECT } from './common.ts';

/**
 * The site build after a run failed (a full disk under dist/, say): the site was not rebuilt. Written into the
 * run's records and the served /status.json by the build that failed; the next good build leaves it out.
 */
export const SiteBuildFailure = z.strictObject({
  status: z.literal('failed').describe('always `failed`: the site build after the last run failed'),
  error: z.string().describe('why the last build failed, in one line'),
  failed_at: IsoTimestamp.describe('when the last build failed'),
  failing_since: IsoTimestamp.describe('when the first build failed since the served one was built'),
  served: z
    .strictObject({
      generation: z.string().nullable().describe('the build still served (dist/ links to it); null if none'),
      built_at: IsoTimestamp.nullable().describe('when that build was switched in: served since then'),
      data_generated_at: IsoTimestamp.nullable().describe('when the data that build serves was generated'),
    })
    .describe('the build that stays served meanwhile'),
});
export type SiteBuildFailure = z.infer<typeof SiteBuildFailure>;

/** How far back, and how many stretches of, runs that published nothing /status.json keeps (`unpublished_runs`). */
export const UNPUBLISHED_RUNS_DAYS = 7;
export const UNPUBLISHED_RUNS_MAX = 100;

/**
 * Consecutive runs that published nothing, with the same status: they left no history row, so a gap in the history
 * names them here. One stretch however long (a day-long venue outage of a run a minute is one entry, not 1 440).
 */
export const UnpublishedStretch = z.strictObject({
  first_started_at: IsoTimestamp.describe(
    'when the first run of the stretch started (by the clock that ran it)',
  ),
  last_started_at: IsoTimestamp.describe('when the last run of the stretch started'),
  first_as_of: IsoTimestamp.describe('the market time the first run was to describe'),
  last_as_of: IsoTimestamp.describe('the market time the last run was to describe'),
  runs: z.number().int().min(1).describe('how many runs the stretch holds'),
  status: z
    .enum(['stale', 'failed'])
    .describe(
      'as `status` reads for each of them: `stale`, no source delivered a price; `failed`, the run stopped with an error',
    ),
  error: z.string().nullable().describe('why the last run of the stretch published nothing'),
});
export type UnpublishedStretch = z.infer<typeof UnpublishedStretch>;

export const RunStatus = z.strictObject({
  project: z.literal(PROJECT),
  status: z.enum(['ok', 'degraded', 'stale', 'failed']).describe(
    // The values are named as codes: `stale` here is a run that published nothing, not the freshness rule's.
    '`ok`: every section published; `degraded`: published with some sections missing (see issues); `stale`: ' +
      'no source delivered a price, nothing was published; `failed`: the run stopped with an error, nothing was ' +
      'published. After `stale` or `failed` the previous files stay served: see data.generated_at for their age.',
  ),
  mode: DataMode.nullable().describe(
    'the data mode of the last run (simulated, replay or live); null if unknown',
  ),
  simulated: z
    .boolean()
    .describe(
      'true when no number in the data now served is a real market observation: data of the seeded market ' +
        'simulator (data.mode simulated). Replayed data (data.mode replay: recorded venue answers played back) is not ' +
        'simulated, though not current either: data.mode says which. After a run that published nothing, the data ' +
        'of the last run that did; false when nothing was ever published',
    ),
  last_run: z
    .strictObject({
      started_at: IsoTimestamp.describe('when the last run started'),
      finished_at: IsoTimestamp.describe('when the last run finished'),
      duration_ms: z.number().int().min(0).describe('how long the last run took, in milliseconds'),
      error: z.string().nullable().describe('why the run failed or published nothing; null otherwise'),
    })
    .describe('the last generator run, whatever its outcome'),
  data: z
    .strictObject({
      generated_at: IsoTimestamp.nullable().describe(
        'when the data now served was generated (the last run that published); its age is now minus this',
      ),
      next_update_due: IsoTimestamp.nullable().describe('when the next scheduled run should publish'),
      mode: DataMode.nullable()
        .optional()
        .describe(
          'the data mode of the data now served (the last run that published: `simulated`, `replay` or `live`); ' +
            'absent from statuses written before it was recorded, null when nothing was ever published',
        ),
    })
    .describe('the data now served, which may be older than the last run'),
  sources: z
    .strictObject({
      provider: z.string().nullable().describe('the market-data source of the last run'),
      issues_total: z
        .number()
        .int()
        .min(0)
        .describe('how many problems the sources reported in the last run'),
      issues: z
        .array(
          z.strictObject({
            venue: z.string().describe('the venue or source that reported the problem'),
            symbol: z
              .string()
              .nullable()
              .optional()
              .describe(
                'the asset it concerns, e.g. `BTC`; null for a problem of the whole run (a venue refused or ' +
                  'skipped for every asset); absent from statuses written before it was recorded',
              ),
            section: z.string().describe('the section of the snapshot it concerns (`all` for the whole run)'),
            message: z.string(),
          }),
        )
        .max(20)
        .describe('the first 20 problems the sources reported (venue refusals, missing sections)'),
    })
    .describe('the market-data sources of the last run and the problems they reported'),
  unpublished_runs: z
    .array(UnpublishedStretch)
    .max(UNPUBLISHED_RUNS_MAX)
    .optional()
    .describe(
      `the runs of the last ${UNPUBLISHED_RUNS_DAYS} days that published nothing (\`stale\` or \`failed\`), as ` +
        `stretches of consecutive runs of one status, oldest first, at most ${UNPUBLISHED_RUNS_MAX} (the newest ` +
        'kept): such a run leaves no row in /api/history/, so a gap in the history that no stretch here covers had ' +
        'no run at all (the publisher was stopped). Absent from statuses written before it was recorded',
    ),
  build: SiteBuildFailure.optional().describe(
    'present only when the site build after the last run failed: the site was not rebuilt, the build named here ' +
      'is still served (in the served /status.json, `data` is that build’s); `status` stays the run’s own',
  ),
  disclaimer: z.literal(DISCLAIMER),
});
export type RunStatus = z.infer<typeof RunStatus>;
