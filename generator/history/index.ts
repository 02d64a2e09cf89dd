// The history as the pipeline uses it: one call per run, after the run's files are published.
import { rowsOfRun } from './rows.ts';
import type { HistoryBodies } from './rows.ts';
import { appendHistory, retentionFromEnv } from './store.ts';
import type { AppendResult } from './store.ts';

export { appendHistory, buildIndex, columnsOf, listDays, readDayRows, retentionFromEnv } from './store.ts';
export type { AppendResult, HistoryStoreOptions } from './store.ts';
export { marketRowsOf, rowsOfRun } from './rows.ts';
export type { HistoryBodies, MarketBodies, MarketRows, RunRows } from './rows.ts';

/**
 * Appends this run's rows. The history is a by-product: a failure here is reported on stderr and never fails
 * the run whose files are already published.
 */
export async function recordRunHistory(
  root: string,
  bodies: HistoryBodies,
  options: { now?: number; retentionDays?: number } = {},
): Promise<AppendResult | null> {
  try {
    const rows = rowsOfRun(bodies);
    const result = await appendHistory(
      Object.fromEntries(Object.entries(rows).map(([id, row]) => [id, [row]])),
      { root, now: options.now, retentionDays: options.retentionDays ?? retentionFromEnv() },
    );
    for (const refused of result.refused) {
      console.error(`history: ${refused.resource} row of ${refused.run_at} not kept: ${refused.reason}`);
    }
    return result;
  } catch (error) {
    console.error(`history: not updated this run: ${(error as Error).message}`);
    return null;
  }
}
