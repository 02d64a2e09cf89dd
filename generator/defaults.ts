// Defaults that `emi --help` shows. This module imports nothing, so the CLI can describe its options without
// loading the pipeline, the sources or the scheduler; those modules re-export the values from here.

/** Simulator seed of the embedded default market. */
export const DEFAULT_SEED = 42;
/** Seconds until the next scheduled run, published as `next_update_due`. */
export const DEFAULT_CADENCE_SECONDS = 60;
/** Where market data comes from: the embedded simulator, live venues, or a recording. */
export const SOURCE_NAMES = ['sim', 'live', 'replay'] as const;
/** Every minute, matching the 60-second cache hint. */
export const DEFAULT_CRON = '* * * * *';
/** Days of simulated arena rounds `emi up` replays into a fresh store. */
export const DEFAULT_BACKFILL_DAYS = 7;
/** The most days `emi backfill` and `emi up --backfill-days` replay. */
export const MAX_BACKFILL_DAYS = 90;
/** Where `emi up`, `emi serve` and `emi paywall` listen. */
export const DEFAULT_PORT = 8080;
/** Where `emi serve`, `emi up` and `emi paywall` start the development facilitator, and where `emi buy` looks. */
export const DEFAULT_DEV_FACILITATOR_PORT = 4021;

/**
 * The state folder (arena store, run reports, the paywall's payment book and credit ledger): EMI_STATE_DIR, trimmed,
 * or `var` when it is unset or blank (an empty path would be the working folder, spaces a folder named by spaces).
 */
export const stateFolder = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  env.EMI_STATE_DIR?.trim() || 'var';

/** The wallet-signed votes in the state folder: the paywall writes them, `emi generate` imports them. */
export const VOTE_STORE_FILE = 'arena-votes.sqlite';
