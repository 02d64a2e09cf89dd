// One generator run: collect market data, compute every body, update the arena, validate, publish.
// Nothing is published unless every body passes its schema; a failed run leaves the last good files in place.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_REASONING_ASSET, TRACKED_ASSETS } from '../schemas/common.ts';
import type { DataMode } from '../schemas/common.ts';
import { FREE_RESOURCES, PAID_RESOURCES, reasoningFileFor } from '../schemas/resources.ts';
import { ReasoningResponse } from '../schemas/reasoning.ts';
import type { RunClock } from './engines/clock.ts';
import { buildFreeSnapshots } from './engines/index.ts';
import type { FreeSnapshots } from './engines/index.ts';
import { buildPaidBodies } from './engines/paid/index.ts';
import type { MarketSnapshot, SourceIssue } from './market/types.ts';
import { publishAll } from './publish/publish.ts';
import type { PublishItem } from './publish/publish.ts';
import { writeFileAtomic } from './publish/atomic-write.ts';
import { writeRunStatus } from './publish/status.ts';
import { assertWritableFolder } from './publish/writable.ts';
import { roundAt } from './engines/arena/rounds.ts';
import { referencePricesAt } from './engines/arena/reference-price.ts';
import { importEndpointVotes, importWorkerVotes } from './state/endpoint-votes.ts';
import { openArenaStore, publicPerformance, runArenaStep, runOwner, withRunLock } from './state/index.ts';
import type { ArenaBodies, BrainCall } from './state/index.ts';
import { appendRunHistory } from './run-history.ts';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED } from './defaults.ts';
import { recordRunHistory } from './history/index.ts';
import { collectFor } from './market-source.ts';
import type { CollectRequest, SourceName } from './market-source.ts';

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

export function publicItems(root: string, free: FreeSnapshots, arena: ArenaBodies): PublishItem[] {
  const bodies: Record<string, unknown> = {
    marketRegime: free.marketRegime,
    mainBrain: free.mainBrain,
    liquidityLite: free.liquidityLite,
    derivatives: free.derivatives,
    reasoning: free.reasoning[DEFAULT_REASONING_ASSET],
    humanConsensus: arena.humanConsensus,
    teacherLessons: arena.teacherLessons,
    statistics: arena.statistics,
    sharedIntelligence: arena.sharedIntelligence,
  };
  const items: PublishItem[] = FREE_RESOURCES.map((r) => ({
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

async function computeAndPublish(
  options: PipelineOptions,
  snapshot: MarketSnapshot,
  clock: RunClock,
): Promise<number> {
  const store = openArenaStore(join(options.stateDir, 'arena.sqlite'));
  try {
    return await withRunLock(store, runOwner(), async () => {
      // Votes taken by this machine's vote endpoint, or by a Cloudflare Worker's (EMI_VOTE_EXPORT_URL).
      const { EMI_VOTE_EXPORT_URL: workerUrl, EMI_VOTE_EXPORT_TOKEN: token = '' } = process.env;
      await (workerUrl
        ? importWorkerVotes(store, workerUrl, token, clock.asOf)
        : importEndpointVotes(store, join(options.stateDir, 'arena-votes.sqlite'), clock.asOf));
      const free = buildFreeSnapshots(snapshot, clock, publicPerformance(store, clock.asOf));
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
        referencePrices: referencePricesAt(snapshot, roundAt(clock.asOf).start),
        clock,
      });
      const written = await publishAll([
        ...publicItems(options.outDir, free, arena),
        ...paidItems(options.paidDir, free, clock),
      ]);
      await appendRunHistory(join(options.stateDir, 'run-history.json'), free);
      // The run's own clock: a simulated or replayed run writes the same history bytes for the same as-of.
      await recordRunHistory(options.outDir, { ...free, ...arena }, { now: clock.generatedAt });
      return written.length;
    });
  } finally {
    store.close();
  }
}

export async function runPipeline(options: PipelineOptions): Promise<RunReport> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const asOf = options.asOf ?? startOfMinute(startedAt);
  const cadence = options.cadenceSeconds ?? DEFAULT_CADENCE_SECONDS;
  await assertWritableFolder(options.stateDir, 'state folder');
  await mkdir(options.stateDir, { recursive: true });

  let snapshot: MarketSnapshot | null = null;
  let clock: RunClock | null = null;
  let report: RunReport;
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
      clock = runClock(asOf, snapshot.mode, now(), cadence);
      const files = await computeAndPublish(options, snapshot, clock);
      report = finish('ok', files, null);
    }
  } catch (error) {
    report = finish('failed', 0, (error as Error).message);
  }
  await writeFileAtomic(join(options.stateDir, 'last-run.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeRunStatus(options.outDir, report, snapshot?.provider ?? null, clock).catch((error: unknown) => {
    // A failed run has said why already (often this very folder); otherwise say that the status is behind.
    if (report.status !== 'failed') console.error(`status.json was not written: ${(error as Error).message}`);
  });
  return report;

  function finish(status: 'ok' | 'stale' | 'failed', files: number, error: string | null): RunReport {
    const finishedAt = now();
    const issues = snapshot?.issues ?? [];
    return {
      status: status === 'ok' && issues.length > 0 ? 'degraded' : status,
      mode: snapshot?.mode ?? null,
      seed: snapshot?.seed ?? null,
      as_of: new Date(asOf).toISOString(),
      started_at: new Date(startedAt).toISOString(),
      finished_at: new Date(finishedAt).toISOString(),
      duration_ms: finishedAt - startedAt,
      files_written: files,
      issues,
      error,
    };
  }
}
