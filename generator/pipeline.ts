// One generator run: collect market data, compute every body, update the arena, validate, publish.
// Nothing is published unless every body passes its schema; a failed run leaves the last good files in place.
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { DEFAULT_REASONING_ASSET, TRACKED_ASSETS } from '../schemas/common.ts';
import type { DataMode } from '../schemas/common.ts';
import type { SiteBuildFailure } from '../schemas/status.ts';
import { PERFORMANCE_STORE_UNAVAILABLE } from '../schemas/performance.ts';
import type { CoinSnapshot } from '../schemas/main-brain.ts';
import { FREE_RESOURCES, PAID_RESOURCES, reasoningFileFor } from '../schemas/resources.ts';
import { ReasoningResponse } from '../schemas/reasoning.ts';
import type { RunClock } from './engines/clock.ts';
import { analyzeSnapshot, buildFreeSnapshots, freeSnapshotsFrom } from './engines/index.ts';
import { coinSnapshot } from './engines/main-brain-body.ts';
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
import { importRunVotes } from './state/endpoint-votes.ts';
import { ArenaStoreBusyError, openArenaStore, runArenaStep, runOwner, withRunLock } from './state/index.ts';
import type { ArenaBodies, BrainCall } from './state/index.ts';
import { withFileRunLock } from './state/lock.ts';
import { dailyBackup, storeFailure, unusableStoreMessage } from './state/repair.ts';
import { logUnpublishedRun, settleRun } from './state/run-log.ts';
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
  /**
   * The longest collection may take, in ms (default DEFAULT_COLLECT_DEADLINE_MS): then every venue call still
   * waiting is cut short, and the run goes on with what came in (stale when no price did), saying so.
   */
  collectDeadlineMs?: number;
  /**
   * Aborted when the process is asked to stop (SIGINT, SIGTERM; its reason says which): a run that has not yet
   * switched to its new generation stops, removes what it staged and is recorded as failed, interrupted.
   */
  signal?: AbortSignal;
}

/**
 * Collection's whole-run deadline by default. The venues' own settings bound each call (10 s per attempt, 2
 * retries, backoffs), not a run: venues that accept connections and never answer kept a live run collecting for
 * over ten minutes, past the systemd unit's TimeoutStartSec. Two minutes is far more than a healthy run takes (a
 * few seconds) and leaves the unit's 300 s room to compute, publish and build after it (deploy/systemd).
 */
export const DEFAULT_COLLECT_DEADLINE_MS = 120_000;
/** How long a collector that does not stop when asked is waited for after the deadline or a stop. */
const COLLECT_GRACE_MS = 2_000;

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
  /**
   * Present when the site build after this run failed (the cycles record it, publish/status.ts): the site was not
   * rebuilt, and says which build is still served; the next good build clears it. Says nothing of the run itself.
   */
  build?: SiteBuildFailure;
}

export { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED };

const startOfMinute = (ms: number): number => Math.floor(ms / 60_000) * 60_000;

/** Simulated and replayed runs take their clock from the as-of time, so the same inputs give the same bytes. */
export function runClock(asOf: number, mode: DataMode, now: number, cadenceSeconds: number): RunClock {
  const generatedAt = mode === 'live' ? now : asOf;
  return { asOf, generatedAt, nextUpdateDue: generatedAt + cadenceSeconds * 1000 };
}

/** What the arena needs of the brain: its call and the price it saw (as the main brain publishes them), per asset. */
export function brainCallsOf(coins: Iterable<CoinSnapshot>): BrainCall[] {
  return [...coins].map((coin) => ({
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

/**
 * Test hook: stop after the first staged file until a signal comes (the signal tests stop or kill the run there).
 * A stop asked for through `signal` ends the hold, as it ends any other step before the switch.
 */
async function holdIfAsked(signal?: AbortSignal): Promise<void> {
  if (process.env.EMI_TEST_HOLD_AT_FIRST_STAGED_FILE !== '1') return;
  process.stderr.write('emi: holding at the first staged file\n');
  await new Promise<never>((_, reject) => {
    const keepAlive = setInterval(() => undefined, 60_000);
    const stop = () => {
      clearInterval(keepAlive);
      reject(signal?.reason as Error);
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}

/** What a run computed, ready to be written as a generation. */
interface RunBodies {
  free: FreeSnapshots;
  /** Null when the arena store could not be read: the last arena files are carried over unchanged. */
  arena: ArenaBodies | null;
  files: Array<{ target: string; data: string }>;
  /** What the run published despite, for its report (degraded): a vote store it could not read. */
  problems: string[];
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
    await holdIfAsked(options.signal);
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
    options.signal?.throwIfAborted(); // asked to stop while staging: the generation is removed, never served
    return generation;
  } catch (error) {
    await generation.abort().catch(() => undefined);
    throw error;
  }
}

/**
 * History is part of the generation: the previous one's files, linked, then this run's rows appended. Days are
 * judged by this machine's clock, never by the run's as-of: a simulated or replayed run ahead of the clock (a
 * future `--as-of`) keeps no row rather than open a day that would close today; the index still says the run's
 * own time, so the same seed and as-of give the same bytes.
 */
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
  const now = Date.now();
  const result = await appendHistory(
    Object.fromEntries(Object.entries(rows).map(([id, row]) => [id, [row]])),
    { root: generation.dir, now, updatedAt: clock.generatedAt, retentionDays: retentionFromEnv() },
  );
  const ahead = [...new Set(result.ahead.map((file) => file.slice(file.indexOf('/') + 1)))];
  if (ahead.length > 0) {
    const today = new Date(now).toISOString().slice(0, 10);
    console.error(
      `history: day files of ${ahead.join(', ')} are ahead of this machine's clock (${today}): kept, but ` +
        'left out of latest.* and closing no earlier day until their day begins; if a clock that ran ahead ' +
        'wrote them, delete ' +
        `${HISTORY_ROOT}/<resource>/<day>.json and .csv in the served generation (<state>/published/current/)`,
    );
  }
  return result;
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
      // Votes taken by this machine's vote endpoint, or by a Cloudflare Worker's (EMI_VOTE_EXPORT_URL). A store that
      // could not be read degrades the run, and the arena step holds the rounds whose votes may be in it.
      const { unread } = await importRunVotes(store, options.stateDir, clock.asOf);
      if (unread) console.error(`emi: ${unread.problem}`);
      // The brain's calls do not depend on its track record, and the step that records them also resolves the
      // rounds that ended: the bodies are built after it, so the main brain publishes the track record this run's
      // statistics and teacher lessons publish, not the one of the run before.
      const analysis = analyzeSnapshot(snapshot);
      const calls = brainCallsOf(analysis.assets.map(coinSnapshot));
      const prices = Object.fromEntries(calls.map((call) => [call.asset, call.price]));
      const arena = runArenaStep({
        store,
        asOf: clock.asOf,
        mode: snapshot.mode,
        seed: snapshot.seed,
        brainCalls: calls.filter((call) => (TRACKED_ASSETS as readonly string[]).includes(call.asset)),
        prices,
        priceTimes: priceTimesOf(snapshot),
        referencePrices: referencePricesAt(snapshot, roundAt(clock.asOf).start),
        clock,
        ...(unread && { unreadVotes: { readThrough: unread.readThrough } }),
      });
      const free = freeSnapshotsFrom(analysis, clock, arena.statistics.main_brain.public_performance);
      await publish({
        free,
        arena,
        files: serialiseAll([...publicItems('', free, arena), ...paidItems('paid', free, clock)]),
        problems: unread ? [unread.problem] : [],
      });
      // The files are served: the run log says ok now, not after the backup (a run killed during it published).
      settleRun(store, { status: 'ok' });
      // A backup failure never fails a published run; it is said, and the next run tries again. Named by the
      // machine's day, not the market time: a run dated tomorrow must not take tomorrow's copy today.
      await dailyBackup(store, (options.now ?? Date.now)()).catch((error: Error) =>
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
    const files = serialiseAll([...market, ...paidItems('paid', free, clock)]);
    await publish({ free, arena: null, files, problems: [] });
  });
}

const storeFileOf = (options: PipelineOptions): string => join(options.stateDir, 'arena.sqlite');

/** The data mode a source gives, for the run log of a run that ended before it collected anything. */
const MODE_OF_SOURCE: Readonly<Record<SourceName, DataMode>> = {
  sim: 'simulated',
  live: 'live',
  replay: 'replay',
};

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

/** The issue and report text of a collection cut short by its deadline. */
const deadlineReached = (ms: number): string =>
  `collection stopped at its deadline of ${ms / 1000} s (EMI_COLLECT_DEADLINE_SECONDS)`;

/**
 * Runs `collect` with a signal that aborts at the deadline or when `stop` aborts: the sources then cut every call
 * still waiting short (each a SourceIssue) and return what came in. A collector that does not return within
 * COLLECT_GRACE_MS of that is not waited for: the run fails with the reason.
 */
async function collectWithin(
  collect: (signal: AbortSignal) => Promise<MarketSnapshot>,
  deadlineMs: number,
  stop: AbortSignal | undefined,
): Promise<{ snapshot: MarketSnapshot; cutShort: boolean }> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error(deadlineReached(deadlineMs))), deadlineMs);
  const signal = stop ? AbortSignal.any([stop, deadline.signal]) : deadline.signal;
  // Every venue call in flight or waiting for its turn listens to it (AbortSignal.any keeps a listener per call until
  // it is collected): dozens at once by design, so Node's leak warning at 11 would only alarm the operator.
  setMaxListeners(0, signal);
  let givingUp: ReturnType<typeof setTimeout> | undefined;
  let giveUp = (): void => undefined;
  const abandoned = new Promise<never>((_, reject) => {
    giveUp = () => {
      givingUp = setTimeout(() => {
        const reason: unknown = signal.reason;
        const text = reason instanceof Error ? reason.message : String(reason);
        reject(new Error(`${text}, and the sources did not stop within ${COLLECT_GRACE_MS / 1000} s of it`));
      }, COLLECT_GRACE_MS);
    };
    if (signal.aborted) giveUp();
    else signal.addEventListener('abort', giveUp, { once: true });
  });
  try {
    const snapshot = await Promise.race([collect(signal), abandoned]);
    return { snapshot, cutShort: deadline.signal.aborted };
  } finally {
    clearTimeout(timer);
    clearTimeout(givingUp);
    // Node keeps a composite signal with an abort listener alive until the listener goes (so that it can still
    // fire): left on, it held every run's snapshot through `abandoned`, 0.8 MB a run in `emi up` and `emi schedule`.
    signal.removeEventListener('abort', giveUp);
  }
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
  /** Whether the run reached the arena store: from there on the store's run log records how it ended. */
  let reachedStore = false;
  /** What the run was doing, for the record of a run that was asked to stop. */
  let phase = 'checking its folders';
  /** Whether the output folder passed its check: one this user may not write to cannot take status.json either. */
  let outputWritable = false;
  /** The folders the public status names paths relative to (it never shows a server's absolute paths). */
  const statusFolders = [options.outDir, options.stateDir];
  try {
    await assertWritableFolder(options.outDir, 'output folder');
    outputWritable = true;
    await assertWritableFolder(options.paidDir, 'paid folder');
    phase = 'collecting market data';
    const deadlineMs = options.collectDeadlineMs ?? DEFAULT_COLLECT_DEADLINE_MS;
    const collected = await collectWithin(
      (signal) => {
        const request = {
          seed: options.seed,
          asOf,
          symbols: options.symbols ?? TRACKED_ASSETS,
          ...options.sourceOptions,
          signal,
        };
        return options.collector ? options.collector(request) : collectFor(options.source, request);
      },
      deadlineMs,
      options.signal,
    );
    snapshot = collected.snapshot;
    options.signal?.throwIfAborted(); // stopped while collecting: nothing is published
    phase = 'preparing the new files';
    // Cut short by the deadline: what came in is used, as when a venue times out (each missing part is an issue).
    const cutShort = collected.cutShort ? deadlineReached(deadlineMs) : null;
    if (!hasAnyPrice(snapshot)) {
      report = finish(
        'stale',
        0,
        cutShort
          ? `${cutShort} before any source delivered a price; the last good files were kept`
          : 'no source delivered a price for any asset; the last good files were kept',
      );
    } else {
      if (cutShort) console.error(`emi: ${cutShort}: publishing what came in before it`);
      const runClockNow = runClock(asOf, snapshot.mode, now(), cadence);
      clock = runClockNow;
      const provider = snapshot.provider;
      // Publishes one run's bodies; `storeProblem` says why the arena store was left out, as a note of the run.
      const publish = (storeProblem: string | null) => async (bodies: RunBodies) => {
        await removeLeftovers(options.outDir);
        await removeLeftovers(options.stateDir);
        const generation = await stageGeneration(options, runClockNow, bodies, fs);
        const notes = [
          cutShort && `${cutShort}: published what came in before it`,
          storeProblem,
          ...bodies.problems,
        ];
        const done = finish('ok', bodies.files.length, notes.filter(Boolean).join('; ') || null);
        const history = join(options.stateDir, 'run-history.json');
        let staged: StagedFile[];
        try {
          staged = await stageAll([
            { target: history, data: await runHistoryWith(history, bodies.free) },
            { target: reportFile, data: pretty(done) },
            {
              target: join(options.outDir, STATUS_FILE),
              data: pretty(
                runStatus(done, provider, runClockNow, await readRunStatus(options.outDir), statusFolders),
              ),
            },
          ]);
        } catch (error) {
          await generation.abort().catch(() => undefined);
          throw error;
        }
        if (options.signal?.aborted) {
          // Asked to stop before the switch: nothing staged is kept, and the last good generation stays served.
          await Promise.all(staged.map((file) => rm(file.temp, { force: true })));
          await generation.abort().catch(() => undefined);
          options.signal.throwIfAborted();
        }
        await serveAndRecord(generation, staged);
        report = done;
        tidyInBackground(publishedStore(options.stateDir), fs);
      };
      try {
        reachedStore = true;
        await publishWithStore(options, snapshot, runClockNow, publish(null));
      } catch (error) {
        if (report) throw error;
        // A damaged store, or one this user may not use: the market snapshots are published without it.
        const storeProblem = await unusableStoreMessage(storeFileOf(options), error);
        if (storeProblem === null) throw storeFailure(storeFileOf(options), error);
        console.error(`emi: ${storeProblem}`);
        await publishWithoutStore(options, snapshot, runClockNow, publish(storeProblem));
      }
    }
  } catch (error) {
    // Refused because another run holds the lock: this run changed nothing, and the records are the holder's.
    refused = error instanceof ArenaStoreBusyError;
    const message = stopReason()
      ? `${stopReason()} while ${phase}; nothing was published`
      : error instanceof Error
        ? error.message
        : String(error);
    // The report keeps one line (see finish); a longer message, such as a zod dump, goes whole to stderr.
    if (oneLine(message) !== message.trim()) console.error(`emi: the run failed: ${message}`);
    report = finish('failed', 0, message);
  }
  const final: RunReport = report ?? finish('failed', 0, 'the run ended without publishing');
  if (final.status === 'ok' || final.status === 'degraded') return final; // recorded with its generation
  if (refused) return final;
  // Stale, or failed before the arena store: it left the previous files in place, and the run log counts it with
  // the failed runs (a run that reached the store is recorded there by its lock, run-log.ts).
  if (!reachedStore) {
    logUnpublishedRun(storeFileOf(options), {
      owner: runOwner(),
      mode: final.mode ?? MODE_OF_SOURCE[options.source],
      asOf,
      finishedAt: Date.parse(final.finished_at),
      detail:
        final.status === 'stale' ? `stale: ${final.error ?? 'nothing was published'}` : (final.error ?? ''),
    });
  }
  await writeRecord(reportFile, pretty(final));
  // The run's error already names an output folder it may not write to, in one line: no second line about its file.
  if (!outputWritable) return final;
  try {
    const status = runStatus(
      final,
      snapshot?.provider ?? null,
      clock,
      await readRunStatus(options.outDir),
      statusFolders,
    );
    await writeRecord(join(options.outDir, STATUS_FILE), pretty(status));
  } catch (error) {
    console.error(`status.json was not written: ${(error as Error).message}`);
  }
  return final;

  /** Why the run was asked to stop ("interrupted by SIGTERM"), once it was and before it published; else null. */
  function stopReason(): string | null {
    if (!options.signal?.aborted || report !== null) return null;
    const reason: unknown = options.signal.reason;
    return reason instanceof Error ? reason.message : String(reason);
  }

  function finish(status: 'ok' | 'stale' | 'failed', files: number, error: string | null): RunReport {
    const finishedAt = now();
    const stopped = stopReason();
    // The calls a stop cut short are no fault of their sources: the issues are the sources' own.
    const issues = (snapshot?.issues ?? []).filter(
      (issue) => stopped === null || !issue.message.includes(stopped),
    );
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
