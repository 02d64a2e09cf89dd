// The run history the pipeline keeps for the charts. Read leniently: a missing, empty or damaged file only
// costs the charts their past, never the build; malformed entries are dropped one by one.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

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
