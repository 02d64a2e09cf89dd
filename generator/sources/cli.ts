// `emi sources ...`: operator commands for the market-data sources, plus the generate flags that choose recording,
// replay and configuration.
import type { Command } from 'commander';
import { Option } from 'commander';
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import { SIMULATOR_ORDER } from './adapters/plan.ts';
import { checkVenues, formatChecks } from './check.ts';
import { formatLiveProbes, hasUsableValue, probeVenuesLive } from './check-live.ts';
import { loadSourcesConfig } from './config.ts';
import { createConfiguredLiveTransport } from './live.ts';
import { createReplayTransport, recordedAsOf } from './recording/replay-transport.ts';
import { asOfProblem } from './run-as-of.ts';
import { createSimulatedTransport, SIMULATED_VENUES } from './simulator/transport.ts';
import type { Transport } from './transport.ts';
import { VENUE_BASE_URLS, VENUE_IDS } from './venues.ts';
import type { VenueId } from './venues.ts';

/** The generate flags owned by the sources: where to record, what to replay, which configuration file. */
export interface SourceFlags {
  source: string;
  asOf?: number;
  record?: string;
  replay?: string;
  config?: string;
}

/**
 * Pipeline inputs from the flags: a replay describes the recorded instant. Refuses, before the run starts, an
 * --as-of that a live run (not the current minute) or a replay (not the recording's time) cannot describe.
 */
export async function resolveSourceFlags(
  flags: SourceFlags,
  now: number = Date.now(),
): Promise<{ asOf: number | undefined; sourceOptions: Record<string, unknown> }> {
  if (flags.asOf !== undefined) {
    const problem = asOfProblem(flags.source, flags.asOf, { replayDir: flags.replay, now });
    if (problem) throw new Error(problem);
  }
  // A recording that cannot be read (gone since a schedule started) leaves the time open: the run then fails on it
  // and records why, rather than failing here, before any record is written.
  const asOf =
    flags.asOf ??
    (flags.source === 'replay' && flags.replay
      ? await recordedAsOf(flags.replay).catch(() => undefined)
      : undefined);
  return {
    asOf,
    sourceOptions: { recordDir: flags.record, replayDir: flags.replay, configFile: flags.config },
  };
}

interface CheckFlags {
  source: 'live' | 'sim' | 'replay';
  config?: string;
  replay?: string;
  json?: boolean;
  /** Probe every kind of data of every venue: parse, value ranges, units. */
  live?: boolean;
}

async function runCheck(flags: CheckFlags): Promise<void> {
  const config = await loadSourcesConfig({ file: flags.config });
  const baseUrls = Object.fromEntries(VENUE_IDS.map((v) => [v, config.venues[v].baseUrl])) as Record<
    VenueId,
    string
  >;
  let transport: Transport;
  let asOf = Date.now();
  let venues: readonly VenueId[] = VENUE_IDS;
  let order = config.order;
  if (flags.source === 'sim') {
    // The venues as the default simulated run meets them: some leave assets out (simulator/listings.ts).
    transport = createSimulatedTransport({ seed: 1, asOf, listings: 'with-gaps' });
    [venues, order] = [SIMULATED_VENUES, SIMULATOR_ORDER];
    for (const venue of venues) baseUrls[venue] = `simulated ${VENUE_BASE_URLS[venue]}`;
  } else if (flags.source === 'replay') {
    if (!flags.replay) throw new Error('--source replay needs --replay DIR');
    asOf = await recordedAsOf(flags.replay);
    transport = await createReplayTransport(flags.replay);
    for (const venue of venues) baseUrls[venue] = `recorded ${VENUE_BASE_URLS[venue]}`;
  } else {
    transport = createConfiguredLiveTransport(config);
  }
  if (flags.live) {
    const context = { transport, asOf, candleLimit: 24, shared: new Map() };
    const probes = await probeVenuesLive({ venues, symbols: TRACKED_ASSETS, context });
    console.log(flags.json ? JSON.stringify(probes, null, 2) : formatLiveProbes(probes));
    // As the table: answers a run would set aside (stale, ahead) are no answer.
    if (!probes.some(hasUsableValue)) process.exitCode = 1;
    return;
  }
  const checks = await checkVenues({ venues, baseUrls, symbols: TRACKED_ASSETS, transport, asOf, order });
  console.log(flags.json ? JSON.stringify(checks, null, 2) : formatChecks(checks));
  const usable = checks.filter((c) => c.status === 'ok' || c.status === 'partial').length;
  if (!flags.json) console.log(`\n${usable} of ${checks.length} venues answered`);
  if (usable === 0) process.exitCode = 1;
}

export function registerSourcesCommands(program: Command): void {
  const sources = program
    .command('sources')
    .description('market-data sources: check venues and configuration');
  sources
    .command('check')
    .description('probe each venue: reachability, latency and which assets it covers')
    .addOption(
      new Option('--source <name>', 'what to probe').choices(['live', 'sim', 'replay']).default('live'),
    )
    .option('--config <file>', 'JSON configuration file (default: EMI_CONFIG)')
    .option('--replay <dir>', 'recording folder, with --source replay')
    .option('--json', 'print the result as JSON')
    .option(
      '--live',
      'probe every venue once per kind of data: whether the answer parses, value ranges and units (with --source live: needs internet)',
    )
    .action(runCheck);
}
