// Chooses where a run's market data comes from: the embedded simulator (the default; no network), live public
// venues (optionally recording every answer), or a replay of a recording.
import type { MarketSnapshot } from './market/types.ts';
import { collectSimulatedMarket } from './sources/collect.ts';
import { collectLiveMarket, collectReplayMarket } from './sources/live.ts';
import type { SourceRunOptions } from './sources/live.ts';
import { recordingProblem } from './sources/recording/replay-transport.ts';
import { asOfProblem } from './sources/run-as-of.ts';

import { SOURCE_NAMES } from './defaults.ts';

export { SOURCE_NAMES };
export type SourceName = (typeof SOURCE_NAMES)[number];

export interface CollectRequest extends Omit<SourceRunOptions, 'asOf' | 'symbols'> {
  seed: number;
  asOf: number;
  symbols: readonly string[];
}

/**
 * What is wrong with a run's choice of source, recording and replay folders and as-of time, or null: --record only
 * records a live run, --replay and --source replay go together, and the --replay folder must hold a recording (its
 * index is read); an `asOf` given (--as-of) must be the current minute for a live run (`now`, default the clock)
 * and the recording's own time for a replay. `emi generate`, `schedule` and `up` check it as a usage error before
 * anything is written (config-file.ts); a run is checked again here.
 */
export function sourceFlagsProblem(
  source: string,
  {
    recordDir,
    replayDir,
    asOf,
    now = Date.now(),
  }: {
    recordDir?: string | undefined;
    replayDir?: string | undefined;
    asOf?: number | undefined;
    now?: number;
  },
): string | null {
  if (recordDir && source !== 'live') return '--record applies to live runs only (--source live)';
  if (replayDir && source !== 'replay') return '--replay needs --source replay';
  if (source === 'replay' && !replayDir)
    return '--source replay needs --replay DIR (a folder made with --record)';
  const unreadable = source === 'replay' && replayDir ? recordingProblem(replayDir) : null;
  if (unreadable) return unreadable;
  return asOf === undefined ? null : asOfProblem(source, asOf, { replayDir, now });
}

export async function collectFor(source: SourceName, request: CollectRequest): Promise<MarketSnapshot> {
  // The folders only: a run made in code (tests, the benchmark) may describe a simulated venue server's time. The
  // replay's time is checked when the recording is opened, and every value's venue time by the collector.
  const problem = sourceFlagsProblem(source, { recordDir: request.recordDir, replayDir: request.replayDir });
  if (problem) throw new Error(problem);
  switch (source) {
    case 'sim':
      return collectSimulatedMarket(request);
    case 'live':
      return collectLiveMarket(request);
    case 'replay':
      return collectReplayMarket(request);
  }
}
