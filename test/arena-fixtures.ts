// Shared helpers of the arena tests: a store in a temporary folder and a run at a given time.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DataMode } from '../schemas/common.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import { runArenaStep, type ArenaStepInput } from '../generator/state/step.ts';
import type { BrainCall } from '../generator/engines/arena/types.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';

export const tempStorePath = (): string =>
  path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'emi-arena-')), 'nested', 'arena.sqlite');

export const tempStore = (): ArenaStore => openArenaStore(tempStorePath());

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
/** 2025-01-01T10:00Z: round index 481_906, asset TRACKED_ASSETS[481_906 % 7]. */
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
