// `emi backfill`: replays the simulated market over past rounds so a fresh install shows lessons and a track
// record at once. Everything it writes is marked replayed wherever it shows. With a public folder it also fills
// the published history (api/history/) with one simulated row per hour, labelled simulated in every row, so the
// charts have a past on the first start.
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { parseAsOf, parsePositiveInt, parseSeed } from './cli-options.ts';
import { stateFolder } from './defaults.ts';
import { DEFAULT_BACKFILL_DAYS } from './defaults.ts';
import { buildFreeSnapshots } from './engines/index.ts';
import type { FreeSnapshots } from './engines/index.ts';
import type { MarketSnapshot } from './market/types.ts';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED, brainCallsOf, publishedStore, runClock } from './pipeline.ts';
import { publishGeneration } from './publish/generations.ts';
import { collectSimulatedMarket } from './sources/collect.ts';
import { MAX_BACKFILL_DAYS, backfill, openArenaStore, runOwner, withRunLock } from './state/index.ts';
import type { BackfillResult } from './state/index.ts';
import { appendHistory, marketRowsOf, retentionFromEnv } from './history/index.ts';
import type { AppendResult, MarketRows } from './history/index.ts';

export { DEFAULT_BACKFILL_DAYS };

const HOUR_MS = 3_600_000;

/**
 * Simulated market rows, one per hour over `days` ending at `asOf`, appended to the published history where it has
 * none: days that already have a file are final and keep it, and a time already on record keeps its row (a live run
 * at the top of an hour); only missing days and today's gaps are written.
 */
async function backfillHistory(
  outDir: string,
  options: { days: number; asOf: number; stateDir: string },
  rowsAt: (ms: number) => Promise<MarketRows>,
): Promise<AppendResult> {
  const rows: { [K in keyof MarketRows]: MarketRows[K][] } = {
    'market-regime': [],
    'main-brain': [],
    'liquidity-lite': [],
    derivatives: [],
  };
  const last = Math.floor(options.asOf / HOUR_MS) * HOUR_MS;
  for (let ms = last - options.days * 24 * HOUR_MS + HOUR_MS; ms <= last; ms += HOUR_MS) {
    const run = await rowsAt(ms);
    for (const id of Object.keys(rows) as (keyof MarketRows)[]) rows[id].push(run[id]);
  }
  // Written as a new generation: the served one's files carried over whole, the history appended, one switch.
  let result: AppendResult | null = null;
  await publishGeneration(
    publishedStore(options.stateDir),
    [
      { path: join(outDir, 'api'), entry: 'api' },
      { path: join(outDir, 'arena'), entry: 'arena' },
    ],
    async (generation) => {
      for (const folder of ['api', 'arena', 'paid']) await generation.carryOver(folder);
      result = await appendHistory(rows, {
        root: generation.dir,
        now: Date.now(),
        retentionDays: retentionFromEnv(),
        gapsOnly: true,
      });
    },
  );
  return result!;
}

/** One simulated hour: the market at its start and the free bodies built from it. */
interface SimulatedHour {
  snapshot: MarketSnapshot;
  free: FreeSnapshots;
}

/**
 * Rounds are replayed in time order, each hour read as one round's end and the next one's start: the last few hours
 * are kept, not the whole window (90 days of snapshots kept took 2.35 GB). Each hour's history rows, a few KB, are
 * kept for the history written after the rounds.
 */
const KEPT_HOURS = 4;

function simulatedHours(seed: number) {
  const hours = new Map<number, Promise<SimulatedHour>>();
  const rows = new Map<number, MarketRows>();
  const hourAt = (ms: number): Promise<SimulatedHour> => {
    let hour = hours.get(ms);
    if (!hour) {
      hour = collectSimulatedMarket({ seed, asOf: ms, symbols: TRACKED_ASSETS }).then((snapshot) => {
        const free = buildFreeSnapshots(snapshot, runClock(ms, 'simulated', ms, DEFAULT_CADENCE_SECONDS));
        rows.set(ms, marketRowsOf(free));
        return { snapshot, free };
      });
      hours.set(ms, hour);
      const oldest = hours.keys().next().value;
      if (hours.size > KEPT_HOURS && oldest !== undefined) hours.delete(oldest);
    }
    return hour;
  };
  return {
    hourAt,
    rowsAt: async (ms: number): Promise<MarketRows> => rows.get(ms) ?? (await hourAt(ms), rows.get(ms)!),
  };
}

/** Replays `days` of rounds ending at `asOf` into the store under `stateDir` (and the history under `outDir`). */
export async function backfillSimulated(options: {
  stateDir: string;
  outDir?: string;
  days: number;
  seed: number;
  asOf: number;
}): Promise<BackfillResult & { history: AppendResult | null }> {
  const { hourAt, rowsAt } = simulatedHours(options.seed);
  const brainCallAt = async (ms: number) => brainCallsOf((await hourAt(ms)).free);
  const priceAt = async (asset: string, ms: number) => {
    const market = (await hourAt(ms)).snapshot.assets.find((a) => a.symbol === asset);
    return market?.ticker?.value.last ?? market?.candles?.value.at(-1)?.close ?? null;
  };

  const store = openArenaStore(join(options.stateDir, 'arena.sqlite'));
  try {
    return await withRunLock(store, runOwner(), async () => {
      const rounds = await backfill(store, {
        days: options.days,
        asOf: options.asOf,
        seed: options.seed,
        brainCallAt,
        priceAt,
      });
      const history = options.outDir ? await backfillHistory(options.outDir, options, rowsAt) : null;
      return { ...rounds, history };
    });
  } finally {
    store.close();
  }
}

/** Backfills up to now (or `asOf`) and prints one line of what happened. */
export async function backfillAndReport(options: {
  stateDir: string;
  outDir?: string;
  days: number;
  seed: number;
  asOf?: number;
}) {
  const result = await backfillSimulated({ ...options, asOf: options.asOf ?? Date.now() });
  console.log(
    `backfill: ${result.rounds} rounds in the window (${result.resolved} replayed and resolved, ` +
      `${result.voided} voided, ${result.skipped} already on record)`,
  );
  if (result.history) {
    console.log(
      `backfill: ${result.history.appended} simulated history rows published ` +
        `(${result.history.refused.length} kept out: days already final, times already on record, or outside ` +
        'retention)',
    );
  }
}

function parseDays(value: string): number {
  const days = parsePositiveInt(value);
  if (days > MAX_BACKFILL_DAYS)
    throw new InvalidArgumentError(`at most ${MAX_BACKFILL_DAYS} days can be replayed.`);
  return days;
}

export function registerBackfillCommand(program: Command): void {
  program
    .command('backfill')
    .description('replay the simulated market over past rounds to build arena history (marked replayed)')
    .option(
      '--days <n>',
      `how many days of rounds to replay (1-${MAX_BACKFILL_DAYS})`,
      parseDays,
      DEFAULT_BACKFILL_DAYS,
    )
    .option('--seed <n>', 'simulator seed', parseSeed, DEFAULT_SEED)
    .option('--as-of <iso>', 'replay rounds that ended by this time; defaults to now', parseAsOf)
    .option('--state <dir>', 'folder holding the arena store', stateFolder())
    .option(
      '--out <dir>',
      'public site folder whose api/history/ gets simulated rows (--no-out: none)',
      'site',
    )
    .option('--no-out', 'fill the arena store only, not the published history')
    .action(async (o: { days: number; seed: number; asOf?: number; state: string; out: string | false }) => {
      await backfillAndReport({
        stateDir: resolve(o.state),
        outDir: o.out ? resolve(o.out) : undefined,
        days: o.days,
        seed: o.seed,
        asOf: o.asOf,
      });
    });
}
