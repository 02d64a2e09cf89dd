// The history's public surface. The pipeline appends each run's rows inside the run's new generation.

export { appendHistory, buildIndex, columnsOf, listDays, readDayRows, retentionFromEnv } from './store.ts';
export type { AppendResult, HistoryStoreOptions, RefusalKind, RefusedRow } from './store.ts';
export { marketRowsOf, rowsOfRun } from './rows.ts';
export type { HistoryBodies, MarketBodies, MarketRows, RunRows } from './rows.ts';
