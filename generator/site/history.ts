// The runs the charts draw: from the published history files (readPublishedHistory), or from the pipeline's
// older private run-history.json (readRunHistory). Read leniently: a missing, empty or damaged file only
// costs the charts their past, never the build; malformed entries are dropped one by one.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import * as z from 'zod';

const NullableNumber = z.number().finite().nullable().catch(null);

export const HistoryRun = z.object({
  generated_at: z.iso.datetime(),
  mode: z.string(),
  market_mode: z.string(),
  market_state: z.string(),
  confidence: NullableNumber,
  risk_score: NullableNumber,
  coins: z
    .record(
      z.string(),
      z.object({
        price: NullableNumber,
        confidence: NullableNumber,
        bias: z.string().nullable().catch(null),
      }),
    )
    .catch({}),
});
export type HistoryRun = z.infer<typeof HistoryRun>;

/** How many runs the charts show at most (the pipeline keeps about 200). */
export const CHART_RUNS = 200;

export async function readRunHistory(file: string | undefined): Promise<HistoryRun[]> {
  if (!file) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return [];
  }
  const runs = (parsed as { runs?: unknown } | null)?.runs;
  if (!Array.isArray(runs)) return [];
  return runs
    .map((run) => HistoryRun.safeParse(run))
    .flatMap((result) => (result.success ? [result.data] : []))
    .sort((a, b) => a.generated_at.localeCompare(b.generated_at))
    .slice(-CHART_RUNS);
}

/** How many runs a chart needs before it draws a trend; below it the page says "collecting, N of M runs". */
export const MIN_CHART_RUNS = 12;

async function latestRows(publishedDir: string, resource: string): Promise<Array<Record<string, unknown>>> {
  try {
    const parsed = JSON.parse(
      await readFile(join(publishedDir, 'api', 'history', resource, 'latest.json'), 'utf8'),
    ) as { rows?: unknown };
    return Array.isArray(parsed.rows) ? (parsed.rows as Array<Record<string, unknown>>) : [];
  } catch {
    return []; // no history published yet: the charts say they are collecting
  }
}

/**
 * The charts' runs from the published history (`api/history/<resource>/latest.json`), so a deployed site draws
 * the same trends any client can download: the market regime's rows joined with the main brain's by run time.
 */
export async function readPublishedHistory(publishedDir: string): Promise<HistoryRun[]> {
  const regime = await latestRows(publishedDir, 'market-regime');
  const brain = new Map((await latestRows(publishedDir, 'main-brain')).map((row) => [row.run_at, row]));
  return regime
    .map((row) => {
      const coins = brain.get(row.run_at) ?? {};
      return HistoryRun.safeParse({
        generated_at: row.run_at,
        mode: row.data_mode,
        market_mode: row.market_mode,
        market_state: row.market_state,
        confidence: row.confidence,
        risk_score: row.risk_score,
        coins: Object.fromEntries(
          TRACKED_ASSETS.map((asset) => {
            const a = asset.toLowerCase();
            return [
              asset,
              { price: coins[`${a}_price`], confidence: coins[`${a}_confidence`], bias: coins[`${a}_bias`] },
            ];
          }),
        ),
      });
    })
    .flatMap((result) => (result.success ? [result.data] : []))
    .sort((a, b) => a.generated_at.localeCompare(b.generated_at))
    .slice(-CHART_RUNS);
}
