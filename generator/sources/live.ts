// Live and replayed runs: configuration -> transport (live HTTP, optionally recording; or a recording folder) ->
// the configured fallback plan -> collectMarket.
import type { MarketSnapshot } from '../market/types.ts';
import { buildPlan } from './adapters/plan.ts';
import { collectMarket } from './collect.ts';
import { loadSourcesConfig } from './config.ts';
import type { SourcesConfig, SourcesConfigInput } from './config.ts';
import type { HostLimits } from './http/host-budget.ts';
import { createLiveTransport } from './http/live-transport.ts';
import { seededRandom } from './http/retry-policy.ts';
import { createRecordingTransport } from './recording/recording-transport.ts';
import { createReplayTransport, recordedAsOf } from './recording/replay-transport.ts';
import { replayAsOfProblem } from './run-as-of.ts';
import type { Transport } from './transport.ts';
import { VENUE_BASE_URLS, VENUE_IDS } from './venues.ts';

export interface SourceRunOptions {
  asOf: number;
  symbols: readonly string[];
  /** JSON configuration file (default: EMI_CONFIG). */
  configFile?: string;
  /** Settings over the file and the environment (tests, embedding). */
  config?: SourcesConfigInput;
  env?: Readonly<Record<string, string | undefined>>;
  /** Live runs: save every raw answer in this folder. */
  recordDir?: string;
  /** Replayed runs: the recording folder. */
  replayDir?: string;
  /** Injected fetch (tests, benchmark). */
  fetch?: typeof globalThis.fetch;
  signal?: AbortSignal;
}

/** Canonical origins routed to configured base URLs (only where they differ). */
export function venueRoutes(config: SourcesConfig): Record<string, string> {
  return Object.fromEntries(
    VENUE_IDS.filter((venue) => config.venues[venue].baseUrl !== VENUE_BASE_URLS[venue]).map((venue) => [
      new URL(VENUE_BASE_URLS[venue]).origin,
      config.venues[venue].baseUrl,
    ]),
  );
}

export function createConfiguredLiveTransport(config: SourcesConfig, fetchImpl?: typeof fetch): Transport {
  const byHost = new Map<string, HostLimits>(
    VENUE_IDS.map((venue) => [new URL(VENUE_BASE_URLS[venue]).host, config.venues[venue]]),
  );
  const fallback = { concurrency: 1, requestsPerSecond: 1 };
  return createLiveTransport({
    retry: config.http,
    timeoutMs: config.http.timeoutMs,
    userAgent: config.http.userAgent,
    limitsFor: (host) => byHost.get(host) ?? fallback,
    routes: venueRoutes(config),
    random: seededRandom(config.jitterSeed),
    fetch: fetchImpl,
  });
}

const collectWith = (transport: Transport, config: SourcesConfig, options: SourceRunOptions) =>
  collectMarket({
    transport,
    symbols: options.symbols,
    asOf: options.asOf,
    seed: null,
    plan: buildPlan(config.order),
    concurrency: config.concurrency,
    candleLimit: config.candleLimit,
    priceDisagreementPct: config.priceDisagreementPct,
    fundingDisagreementPct8h: config.fundingDisagreementPct8h,
    estimateLiquidations: config.estimateLiquidations,
    signal: options.signal,
  });

const configOf = (options: SourceRunOptions): Promise<SourcesConfig> =>
  loadSourcesConfig({ file: options.configFile, env: options.env, overrides: options.config });

export async function collectLiveMarket(options: SourceRunOptions): Promise<MarketSnapshot> {
  const config = await configOf(options);
  const live = createConfiguredLiveTransport(config, options.fetch);
  if (!options.recordDir) return collectWith(live, config, options);
  const recording = createRecordingTransport(live, options.recordDir, options.asOf);
  const snapshot = await collectWith(recording, config, options);
  await recording.flushed();
  return snapshot;
}

export async function collectReplayMarket(options: SourceRunOptions): Promise<MarketSnapshot> {
  if (!options.replayDir) throw new Error('a replayed run needs a recording folder (--replay DIR)');
  // A recording describes its own as-of: replayed for another time, its answers would pass for that time's.
  const problem = replayAsOfProblem(options.asOf, await recordedAsOf(options.replayDir), options.replayDir);
  if (problem) throw new Error(problem);
  const config = await configOf(options);
  return collectWith(await createReplayTransport(options.replayDir), config, options);
}
