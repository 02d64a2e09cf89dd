// Shared helpers of the arena tests: a store in a temporary folder and a run at a given time.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { DataMode } from '../schemas/common.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import { runArenaStep, type ArenaStepInput } from '../generator/state/step.ts';
import type { BrainCall } from '../generator/engines/arena/types.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { MIGRATIONS } from '../generator/state/migrations.ts';
import { tempDirSync } from './helpers/temp-dir.ts';

/** A store file's path in a new folder, removed when the test ends (test/helpers/temp-dir.ts). */
export const tempStorePath = (): string => path.join(tempDirSync('emi-arena-'), 'nested', 'arena.sqlite');

export const tempStore = (): ArenaStore => openArenaStore(tempStorePath());

/**
 * A new store file at schema version 1, as an emi from before the later migrations left it (its migration row dated
 * `appliedAt`), open for the caller to fill with old rows and close.
 */
export const schemaOneStore = (appliedAt: string): { file: string; db: Database.Database } => {
  const file = tempStorePath();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  db.exec(MIGRATIONS[0]!.sql);
  db.prepare("INSERT INTO schema_migrations VALUES (1, 'v1', ?)").run(appliedAt);
  return { file, db };
};

/**
 * Turns a store this code made into what an emi of schema 2 left: its run log (no arena_step; ok meant the arena
 * step ran), none of the later migrations' tables, and their migration rows gone. `keepRows`: the rows logged so far
 * are kept in the old log.
 */
/**
 * What store schema 5 added (totals, their triggers, indexes), for a store rewound by hand to an earlier schema as
 * its emi left it; the tables take their own triggers and indexes along, the rest are named.
 */
export const DROP_SCHEMA_5 = `
  DROP TABLE call_totals; DROP TABLE outcome_totals; DROP TABLE lesson_totals; DROP TABLE outcome_times;
  DROP TABLE lesson_times; DROP TABLE open_calls; DROP TABLE vote_totals; DROP TABLE vote_round_totals;
  DROP TRIGGER call_totals_insert; DROP TRIGGER outcome_times_insert; DROP TRIGGER lesson_times_insert;
  DROP TRIGGER outcome_totals_insert; DROP TRIGGER lesson_totals_insert; DROP TRIGGER open_calls_insert;
  DROP TRIGGER open_calls_settled; DROP TRIGGER vote_totals_insert; DROP TRIGGER vote_totals_called;
  DROP INDEX brain_predictions_by_mode_time; DROP INDEX rounds_by_end; DROP INDEX votes_human;
`;

export const rewindToSchema2 = (db: Database.Database, keepRows = false): void => {
  db.exec(`
    CREATE TABLE run_log_v2 (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, mode TEXT NOT NULL,
      as_of_ms INTEGER NOT NULL, finished_at_ms INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('ok', 'failed')), detail TEXT);
    ${keepRows ? 'INSERT INTO run_log_v2 SELECT id, owner, mode, as_of_ms, finished_at_ms, status, detail FROM run_log;' : ''}
    DROP TABLE run_log;
    ALTER TABLE run_log_v2 RENAME TO run_log;
    DROP TABLE run_totals;
    ${DROP_SCHEMA_5}
    DELETE FROM schema_migrations WHERE version > 2;
    DELETE FROM meta WHERE key = 'run_log_rows_before_outcomes';
  `);
};

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
/** 2025-01-01T10:00Z: round index 482_146, asset TRACKED_ASSETS[481_906 % 7]. */
export const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);

export const callsFor = (bias: BrainCall['bias'], confidence: number | null, price: number): BrainCall[] =>
  TRACKED_ASSETS.map((asset) => ({ asset, bias, confidence, price }));

export const pricesAll = (price: number | null): Record<string, number | null> =>
  Object.fromEntries(TRACKED_ASSETS.map((a) => [a, price]));

export const step = (
  store: ArenaStore,
  at: number,
  opts: Partial<Omit<ArenaStepInput, 'store' | 'asOf' | 'clock'>> & { price?: number | null } = {},
) =>
  runArenaStep({
    store,
    asOf: at,
    clock: { asOf: at, generatedAt: at, nextUpdateDue: at + MINUTE },
    mode: opts.mode ?? ('simulated' satisfies DataMode),
    seed: opts.seed ?? 7,
    brainCalls: opts.brainCalls ?? callsFor('bullish', 60, opts.price ?? 100),
    prices: opts.prices ?? pricesAll(opts.price === undefined ? 100 : opts.price),
    ...(opts.onBeforeCommit ? { onBeforeCommit: opts.onBeforeCommit } : {}),
    ...(opts.referencePrices ? { referencePrices: opts.referencePrices } : {}),
  });
