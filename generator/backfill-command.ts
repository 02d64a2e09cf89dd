// `emi backfill`: replays the simulated market over past rounds so a fresh install shows lessons and a track
// record at once. Everything it writes is marked replayed wherever it shows. With a public folder it also fills
// the published history (api/history/) with one simulated row per hour over whole UTC days, labelled simulated in
// every row, so the charts have a past on the first start.
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
import type { AppendResult, MarketRows, RefusalKind, RefusedRow } from './history/index.ts';

export { DEFAULT_BACKFILL_DAYS };

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The hours a backfill writes history rows for (ms, both ends included): from 00:00 UTC of the day of the earliest
 * hour `days` reach back from `asOf`, to `asOf`'s hour. Whole days: a window starting mid-day made a day file that
 * began mid-day, final once later days had files, so a wider backfill later could not fill its morning and left a
 * hole of up to 23 hours in the history. The arena's rounds keep their own window (state/backfill.ts).
 */
export function historyWindow(asOf: number, days: number): { first: number; last: number } {
  const last = Math.floor(asOf / HOUR_MS) * HOUR_MS;
  const earliest = last - days * DAY_MS + HOUR_MS;
  return { first: Math.floor(earliest / DAY_MS) * DAY_MS, last };
}

/**
 * Simulated market rows, one per hour over the whole UTC days `historyWindow` gives, appended to the published
 * history where it has none: days that already have a file are final and keep it, a time already on record keeps
 * its row (a live run at the top of an hour), and days before a final day whose rows begin mid-day are not written
 * (they would stand behind a hole); only missing days and today's gaps are written.
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
  const { first, last } = historyWindow(options.asOf, options.days);
  for (let ms = first; ms <= last; ms += HOUR_MS) {
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
  // Never past the clock, whoever calls (the CLI refuses such an --as-of): no history row for an hour not yet begun.
  const asOf = Math.min(options.asOf, Date.now());
  const { hourAt, rowsAt } = simulatedHours(options.seed);
  const brainCallAt = async (ms: number) =>
    brainCallsOf(Object.values((await hourAt(ms)).free.mainBrain.coins));
  const priceAt = async (asset: string, ms: number) => {
    const market = (await hourAt(ms)).snapshot.assets.find((a) => a.symbol === asset);
    return market?.ticker?.value.last ?? market?.candles?.value.at(-1)?.close ?? null;
  };

  const store = openArenaStore(join(options.stateDir, 'arena.sqlite'));
  try {
    return await withRunLock(store, runOwner(), async () => {
      const rounds = await backfill(store, {
        days: options.days,
        asOf,
        seed: options.seed,
        brainCallAt,
        priceAt,
      });
      const history = options.outDir
        ? await backfillHistory(options.outDir, { ...options, asOf }, rowsAt)
        : null;
      return { ...rounds, history };
    });
  } finally {
    store.close();
  }
}

/** How the summary names each kind of refused row, in the order it lists them. */
const KEPT_OUT: ReadonlyArray<readonly [RefusalKind, string]> = [
  ['on-record', 'times already on record'],
  ['final-day', 'in final day files'],
  ['hole', 'before a final day that begins mid-day'],
  ['retention', 'outside retention'],
  ['ahead', 'of days not begun by the clock'],
  ['damaged', 'in damaged day files'],
  ['invalid', 'failing their row schema'],
];

/**
 * The lines `emi backfill` prints about the history: rows published and rows kept out by kind, then, when rows were
 * refused because of a hole, one line naming the final day and why, so that a hole is never a bare count.
 */
export function historySummary(history: AppendResult): string[] {
  const count = (kind: RefusalKind) => history.refused.filter((row) => row.kind === kind).length;
  const kinds = KEPT_OUT.filter(([kind]) => count(kind) > 0).map(
    ([kind, label]) => `${count(kind)} ${label}`,
  );
  const lines = [
    `backfill: ${history.appended} simulated history rows published` +
      (kinds.length > 0 ? ` (${history.refused.length} kept out: ${kinds.join(', ')})` : ''),
  ];
  const holes = new Map<string, RefusedRow[]>();
  for (const row of history.refused.filter((r) => r.kind === 'hole')) {
    holes.set(row.reason, [...(holes.get(row.reason) ?? []), row]);
  }
  for (const [reason, rows] of holes) {
    const resources = [...new Set(rows.map((row) => row.resource))].join(', ');
    const days = rows.map((row) => row.run_at.slice(0, 10)).sort();
    const span = days[0] === days.at(-1) ? days[0] : `${days[0]} to ${days.at(-1)}`;
    lines.push(`backfill: ${rows.length} history rows of ${span} not written (${resources}): ${reason}`);
  }
  return lines;
}

/** Backfills up to now (or `asOf`) and prints what happened. */
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
  if (result.history) for (const line of historySummary(result.history)) console.log(line);
}

/**
 * Why `asOf` cannot be a backfill's end, or null: a time after `now`. A backfill replays rounds that ended by its
 * --as-of, resolved against the simulated market's price at their end; a round that ends after the clock has no
 * outcome yet, so replaying it would publish one that has not happened (a lesson dated tomorrow, history rows of
 * hours still ahead) and make the round refuse the votes people still send for it.
 */
export function backfillAsOfProblem(asOf: number, now: number): string | null {
  if (asOf <= now) return null;
  return (
    `${new Date(asOf).toISOString()} is after this machine's clock (${new Date(now).toISOString()}): ` +
    'emi backfill replays the rounds that ended by --as-of, and no round after the clock has ended yet; ' +
    'leave --as-of out to replay up to now'
  );
}

/** --as-of of `emi backfill`: a time as `parseAsOf` takes it, not after this machine's clock. */
export function parseBackfillAsOf(value: string): number {
  const asOf = parseAsOf(value);
  const problem = backfillAsOfProblem(asOf, Date.now());
  if (problem) throw new InvalidArgumentError(problem);
  return asOf;
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
    .option(
      '--as-of <iso>',
      'replay rounds that ended by this time, not after now; defaults to now',
      parseBackfillAsOf,
    )
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
