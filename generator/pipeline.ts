// One generator run: collect market data, compute every body, update the arena, validate, publish.
// Nothing is published unless every body passes its schema; a failed run leaves the last good files in place.
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { DEFAULT_REASONING_ASSET, TRACKED_ASSETS } from '../schemas/common.ts';
import type { DataMode } from '../schemas/common.ts';
import { PERFORMANCE_STORE_UNAVAILABLE } from '../schemas/performance.ts';
import { FREE_RESOURCES, PAID_RESOURCES, reasoningFileFor } from '../schemas/resources.ts';
import { ReasoningResponse } from '../schemas/reasoning.ts';
import type { RunClock } from './engines/clock.ts';
import { buildFreeSnapshots } from './engines/index.ts';
import type { FreeSnapshots } from './engines/index.ts';
import { buildPaidBodies } from './engines/paid/index.ts';
import type { MarketSnapshot, SourceIssue } from './market/types.ts';
import { serialiseAll } from './publish/publish.ts';
import type { PublishItem } from './publish/publish.ts';
import { stageFile, writeFileAtomic } from './publish/atomic-write.ts';
import { allSettledOrThrow } from './publish/settled.ts';
import { beginGeneration, realFs, tidyInBackground } from './publish/generations.ts';
import type { Generation, PublishFs, ServedLink } from './publish/generations.ts';
import { STATUS_FILE, readRunStatus, runStatus } from './publish/status.ts';
import { assertWritableFolder } from './publish/writable.ts';
import { isTemporaryFile } from './site/link-tree.ts';
import { roundAt } from './engines/arena/rounds.ts';
import { priceTimesOf, referencePricesAt } from './engines/arena/reference-price.ts';
import { importEndpointVotes, importWorkerVotes } from './state/endpoint-votes.ts';
import {
  ArenaStoreBusyError,
  openArenaStore,
  publicPerformance,
  runArenaStep,
  runOwner,
  withRunLock,
} from './state/index.ts';
import type { ArenaBodies, BrainCall } from './state/index.ts';
import { withFileRunLock } from './state/lock.ts';
import { dailyBackup, storeFailure, unusableStoreMessage } from './state/repair.ts';
import { runHistoryWith } from './run-history.ts';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED } from './defaults.ts';
import { appendHistory, marketRowsOf, retentionFromEnv, rowsOfRun as allRowsOfRun } from './history/index.ts';
import type { AppendResult, RunRows } from './history/index.ts';
import { collectFor } from './market-source.ts';
import type { CollectRequest, SourceName } from './market-source.ts';
import { oneLine } from './cli-options.ts';

/** The published history's folder inside a generation. */
const HISTORY_ROOT = 'api/history';
/** The free files computed from the arena store: kept as they were when the store cannot be read. */
const ARENA_IDS: readonly string[] = ['humanConsensus', 'teacherLessons', 'statistics', 'sharedIntelligence'];
/** Files written at once while staging a generation. */
const PARALLEL_WRITES = 16;
const ARENA_FILES = FREE_RESOURCES.filter((r) => ARENA_IDS.includes(r.id)).map((r) => r.file);

export interface PipelineOptions {
  /** Public site root: free endpoints land in `api/` and `arena/` below it. */
  outDir: string;
  /** Private root for the paid bodies; never inside the public site. */
  paidDir: string;
  /** Folder for the arena store, the run report and the run history. */
  stateDir: string;
  source: SourceName;
  seed: number;
  /** Market time to describe (ms). Defaults to the current minute. */
  asOf?: number;
  symbols?: readonly string[];
  /** Seconds between scheduled runs: sets `next_update_due`. */
  cadenceSeconds?: number;
  /** The system clock, injectable for tests. */
  now?: () => number;
  /** Replaces the source selection entirely (tests, benchmarks). */
  collector?: (request: CollectRequest) => Promise<MarketSnapshot>;
  /** Extra source options (replay folder, recording folder, config), passed to the source selector. */
  sourceOptions?: Record<string, unknown>;
}

export interface RunReport {
  /** ok; degraded: published with some sections missing; stale: nothing usable came in, nothing published. */
  status: 'ok' | 'degraded' | 'stale' | 'failed';
  mode: DataMode | null;
  seed: number | null;
  as_of: string;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  files_written: number;
  issues: SourceIssue[];
  error: string | null;
}

export { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED };

const startOfMinute = (ms: number): number => Math.floor(ms / 60_000) * 60_000;

/** Simulated and replayed runs take their clock from the as-of time, so the same inputs give the same bytes. */
export function runClock(asOf: number, mode: DataMode, now: number, cadenceSeconds: number): RunClock {
  const generatedAt = mode === 'live' ? now : asOf;
  return { asOf, generatedAt, nextUpdateDue: generatedAt + cadenceSeconds * 1000 };
}

/** What the arena needs of the brain: its call and the price it saw, per tracked asset. */
export function brainCallsOf(free: FreeSnapshots): BrainCall[] {
  return Object.values(free.mainBrain.coins).map((coin) => ({
    asset: coin.asset,
    bias: coin.bias,
    confidence: coin.confidence,
    price: coin.price,
  }));
}

/** The free files of a run; without arena bodies (store unreadable) only the market snapshots. */
export function publicItems(root: string, free: FreeSnapshots, arena: ArenaBodies | null): PublishItem[] {
  const bodies: Record<string, unknown> = {
    marketRegime: free.marketRegime,
    mainBrain: free.mainBrain,
    liquidityLite: free.liquidityLite,
    derivatives: free.derivatives,
    reasoning: free.reasoning[DEFAULT_REASONING_ASSET],
    ...(arena && {
      humanConsensus: arena.humanConsensus,
      teacherLessons: arena.teacherLessons,
      statistics: arena.statistics,
      sharedIntelligence: arena.sharedIntelligence,
    }),
  };
  const items: PublishItem[] = FREE_RESOURCES.filter((r) => r.id in bodies).map((r) => ({
    root,
    file: r.file,
    schema: r.schema,
    body: bodies[r.id],
  }));
  for (const [asset, body] of Object.entries(free.reasoning)) {
    items.push({ root, file: reasoningFileFor(asset), schema: ReasoningResponse, body });
  }
  return items;
}

export function paidItems(root: string, free: FreeSnapshots, clock: RunClock): PublishItem[] {
  const bodies: Record<string, unknown> = { ...buildPaidBodies(free, clock) };
  return PAID_RESOURCES.map((r) => ({ root, file: r.file, schema: r.schema, body: bodies[r.id] }));
}

/** A run with no price for any asset has nothing honest to say: publishing it would only erase good files. */
export const hasAnyPrice = (snapshot: MarketSnapshot): boolean =>
  snapshot.assets.some((asset) => asset.ticker !== null || (asset.candles?.value.length ?? 0) > 0);

/** Where complete generations of the published files live, and the folders readers open through them. */
export const publishedStore = (stateDir: string): string => join(stateDir, 'published');
export const servedLinks = (options: Pick<PipelineOptions, 'outDir' | 'paidDir'>): ServedLink[] => [
  { path: join(options.outDir, 'api'), entry: 'api' },
  { path: join(options.outDir, 'arena'), entry: 'arena' },
  { path: options.paidDir, entry: 'paid' },
];

/** Test hook: stop after the first staged file until a signal comes (the signal tests kill the run there). */
async function holdIfAsked(): Promise<void> {
  if (process.env.EMI_TEST_HOLD_AT_FIRST_STAGED_FILE !== '1') return;
  process.stderr.write('emi: holding at the first staged file\n');
  await new Promise(() => setInterval(() => undefined, 60_000));
}

/** What a run computed, ready to be written as a generation. */
interface RunBodies {
  free: FreeSnapshots;
  /** Null when the arena store could not be read: the last arena files are carried over unchanged. */
  arena: ArenaBodies | null;
  files: Array<{ target: string; data: string }>;
}

/** Writes a complete new generation (files, carried-over history, this run's history rows), not yet served. */
async function stageGeneration(
  options: PipelineOptions,
  clock: RunClock,
  bodies: RunBodies,
  fs: PublishFs,
): Promise<Generation> {
  const generation = await beginGeneration(publishedStore(options.stateDir), servedLinks(options), fs);
  try {
    const [first, ...rest] = bodies.files;
    if (first) await generation.write(first.target, first.data);
    await holdIfAsked();
    // Each file is flushed on its own; many at once let the disk batch the flushes (a generation is not served
    // before all of them are done, so their order does not matter). The history lives in folders of its own, so
    // it is carried over and appended meanwhile.
    const writes = pLimit(PARALLEL_WRITES);
    const staging = stageHistory(generation, clock, bodies);
    await allSettledOrThrow<unknown>([
      allSettledOrThrow(rest.map(({ target, data }) => writes(() => generation.write(target, data)))),
      staging,
    ]);
    const history = await staging;
    for (const refused of history.refused) {
      console.error(`history: ${refused.resource} row of ${refused.run_at} not kept: ${refused.reason}`);
    }
    return generation;
  } catch (error) {
    await generation.abort().catch(() => undefined);
    throw error;
  }
}

/** History is part of the generation: the previous one's files, linked, then this run's rows appended. */
async function stageHistory(
  generation: Generation,
  clock: RunClock,
  bodies: RunBodies,
): Promise<AppendResult> {
  await allSettledOrThrow([
    ...(bodies.arena ? [] : ARENA_FILES.map((file) => generation.carryOver(file))),
    generation.carryOver(HISTORY_ROOT),
  ]);
  const rows = rowsOfRun(bodies.free, bodies.arena);
  return appendHistory(Object.fromEntries(Object.entries(rows).map(([id, row]) => [id, [row]])), {
    root: generation.dir,
    now: clock.generatedAt,
    retentionDays: retentionFromEnv(),
  });
}

/** A run's history rows: market rows always, arena rows only when the arena store was read. */
function rowsOfRun(free: FreeSnapshots, arena: ArenaBodies | null): Partial<RunRows> {
  return arena ? allRowsOfRun({ ...free, ...arena }) : marketRowsOf(free);
}

/** Computes every body with the arena store, under the store's run lock, and publishes the generation. */
async function publishWithStore(
  options: PipelineOptions,
  snapshot: MarketSnapshot,
  clock: RunClock,
  publish: (bodies: RunBodies) => Promise<void>,
): Promise<void> {
  const store = openArenaStore(storeFileOf(options));
  try {
    await withRunLock(store, runOwner(), async () => {
      // Votes taken by this machine's vote endpoint, or by a Cloudflare Worker's (EMI_VOTE_EXPORT_URL).
      const { EMI_VOTE_EXPORT_URL: workerUrl, EMI_VOTE_EXPORT_TOKEN: token = '' } = process.env;
      await (workerUrl
        ? importWorkerVotes(store, workerUrl, token, clock.asOf)
        : importEndpointVotes(store, join(options.stateDir, 'arena-votes.sqlite'), clock.asOf));
      const free = buildFreeSnapshots(snapshot, clock, publicPerformance(store, clock.asOf, snapshot.mode));
      const prices = Object.fromEntries(
        Object.values(free.mainBrain.coins).map((coin) => [coin.asset, coin.price]),
      );
      const arena = runArenaStep({
        store,
        asOf: clock.asOf,
        mode: snapshot.mode,
        seed: snapshot.seed,
        brainCalls: brainCallsOf(free).filter((call) =>
          (TRACKED_ASSETS as readonly string[]).includes(call.asset),
        ),
        prices,
        priceTimes: priceTimesOf(snapshot),
        referencePrices: referencePricesAt(snapshot, roundAt(clock.asOf).start),
        clock,
      });
      await publish({
        free,
        arena,
        files: serialiseAll([...publicItems('', free, arena), ...paidItems('paid', free, clock)]),
      });
      // A backup failure never fails a published run; it is said, and the next run tries again.
      await dailyBackup(store, clock.generatedAt).catch((error: Error) =>
        console.error(`emi: the daily arena store backup failed: ${error.message}`),
      );
    });
  } finally {
    store.close();
  }
}

/** The market snapshots alone, when the arena store cannot be read: arena files carried over, never recomputed. */
async function publishWithoutStore(
  options: PipelineOptions,
  snapshot: MarketSnapshot,
  clock: RunClock,
  publish: (bodies: RunBodies) => Promise<void>,
): Promise<void> {
  await withFileRunLock(join(options.stateDir, 'run.lock'), runOwner(), async () => {
    const free = buildFreeSnapshots(snapshot, clock, PERFORMANCE_STORE_UNAVAILABLE);
    const market = publicItems('', free, null);
    await publish({ free, arena: null, files: serialiseAll([...market, ...paidItems('paid', free, clock)]) });
  });
}

const storeFileOf = (options: PipelineOptions): string => join(options.stateDir, 'arena.sqlite');

/** A file staged beside its target before the switch, renamed into place after it. */
interface StagedFile {
  temp: string;
  target: string;
}

const pretty = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * Serves the generation and records the run, all or nothing: the private run history, the run report and
 * /status.json are staged (written and flushed) before the switch and renamed into place after it, the status
 * last; a failure after the switch goes back to the previous generation, so `ok` is only ever recorded for a run
 * whose files, history and report all landed.
 */
async function serveAndRecord(generation: Generation, staged: readonly StagedFile[]): Promise<void> {
  try {
    await generation.commit();
    try {
      for (const file of staged) await rename(file.temp, file.target);
    } catch (error) {
      await generation.rollback();
      throw error;
    }
  } finally {
    await Promise.all(staged.map((file) => rm(file.temp, { force: true })));
  }
}

/** Stages every file at once; if any fails, the others are removed and the first failure is thrown. */
async function stageAll(files: ReadonlyArray<{ target: string; data: string }>): Promise<StagedFile[]> {
  const outcomes = await Promise.allSettled(files.map(({ target, data }) => stageFile(target, data)));
  const staged = outcomes.flatMap((outcome, i) =>
    outcome.status === 'fulfilled' ? [{ temp: outcome.value, target: files[i]!.target }] : [],
  );
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (!failure) return staged;
  await Promise.all(staged.map((file) => rm(file.temp, { force: true })));
  throw failure.reason;
}

/** Writes a file atomically; when the disk is too full for a staged copy, overwrites the old one in place. */
async function writeRecord(file: string, data: string): Promise<void> {
  try {
    await writeFileAtomic(file, data);
  } catch {
    // Truncating first frees the old file's blocks, so a failed status still fits where `ok` stood.
    await writeFile(file, data).catch((error: Error) => {
      console.error(`emi: could not write ${file}: ${error.message}`);
    });
  }
}

/** Removes staging files that a killed run left beside the run's records (the served folders hold no others). */
async function removeLeftovers(folder: string): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter(isTemporaryFile)
      .map((name) => rm(join(folder, name), { force: true }).catch(() => undefined)),
  );
}

export async function runPipeline(options: PipelineOptions, fs: PublishFs = realFs): Promise<RunReport> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const asOf = options.asOf ?? startOfMinute(startedAt);
  const cadence = options.cadenceSeconds ?? DEFAULT_CADENCE_SECONDS;
  const reportFile = join(options.stateDir, 'last-run.json');
  await assertWritableFolder(options.stateDir, 'state folder');
  await mkdir(options.stateDir, { recursive: true });

  let snapshot: MarketSnapshot | null = null;
  let clock: RunClock | null = null;
  let report: RunReport | null = null;
  let refused = false;
  try {
    await assertWritableFolder(options.outDir, 'output folder');
    await assertWritableFolder(options.paidDir, 'paid folder');
    const request = {
      seed: options.seed,
      asOf,
      symbols: options.symbols ?? TRACKED_ASSETS,
      ...options.sourceOptions,
    };
    snapshot = await (options.collector ? options.collector(request) : collectFor(options.source, request));
    if (!hasAnyPrice(snapshot)) {
      report = finish('stale', 0, 'no source delivered a price for any asset; the last good files were kept');
    } else {
      const runClockNow = runClock(asOf, snapshot.mode, now(), cadence);
      clock = runClockNow;
      const provider = snapshot.provider;
      let storeProblem: string | null = null;
      const publish = async (bodies: RunBodies) => {
        await removeLeftovers(options.outDir);
        await removeLeftovers(options.stateDir);
        const generation = await stageGeneration(options, runClockNow, bodies, fs);
        const done = finish('ok', bodies.files.length, storeProblem);
        const history = join(options.stateDir, 'run-history.json');
        let staged: StagedFile[];
        try {
          staged = await stageAll([
            { target: history, data: await runHistoryWith(history, bodies.free) },
            { target: reportFile, data: pretty(done) },
            {
              target: join(options.outDir, STATUS_FILE),
              data: pretty(runStatus(done, provider, runClockNow, await readRunStatus(options.outDir))),
            },
          ]);
        } catch (error) {
          await generation.abort().catch(() => undefined);
          throw error;
        }
        await serveAndRecord(generation, staged);
        report = done;
        tidyInBackground(publishedStore(options.stateDir), fs);
      };
      try {
        await publishWithStore(options, snapshot, runClockNow, publish);
      } catch (error) {
        if (report) throw error;
        // A damaged store, or one this user may not use: the market snapshots are published without it.
        storeProblem = await unusableStoreMessage(storeFileOf(options), error);
        if (storeProblem === null) throw storeFailure(storeFileOf(options), error);
        console.error(`emi: ${storeProblem}`);
        await publishWithoutStore(options, snapshot, runClockNow, publish);
      }
    }
  } catch (error) {
    // Refused because another run holds the lock: this run changed nothing, and the records are the holder's.
    refused = error instanceof ArenaStoreBusyError;
    const message = error instanceof Error ? error.message : String(error);
    // The report keeps one line (see finish); a longer message, such as a zod dump, goes whole to stderr.
    if (oneLine(message) !== message.trim()) console.error(`emi: the run failed: ${message}`);
    report = finish('failed', 0, message);
  }
  const final: RunReport = report ?? finish('failed', 0, 'the run ended without publishing');
  if (final.status === 'ok' || final.status === 'degraded') return final; // recorded with its generation
  if (refused) return final;
  await writeRecord(reportFile, pretty(final));
  try {
    const status = runStatus(final, snapshot?.provider ?? null, clock, await readRunStatus(options.outDir));
    await writeRecord(join(options.outDir, STATUS_FILE), pretty(status));
  } catch (error) {
    console.error(`status.json was not written: ${(error as Error).message}`);
  }
  return final;

  function finish(status: 'ok' | 'stale' | 'failed', files: number, error: string | null): RunReport {
    const finishedAt = now();
    const issues = snapshot?.issues ?? [];
    // A run that published with a problem (source issues, or the arena store unreadable) is degraded.
    return {
      status: status === 'ok' && (issues.length > 0 || error !== null) ? 'degraded' : status,
      mode: snapshot?.mode ?? null,
      seed: snapshot?.seed ?? null,
      as_of: new Date(asOf).toISOString(),
      started_at: new Date(startedAt).toISOString(),
      finished_at: new Date(finishedAt).toISOString(),
      duration_ms: finishedAt - startedAt,
      files_written: files,
      issues,
      // One readable line in last-run.json and status.json: a zod error's message is its issues as JSON.
      error: error === null ? null : oneLine(error),
    };
  }
}
