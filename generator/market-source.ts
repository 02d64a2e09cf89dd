// Chooses where a run's market data comes from: the embedded simulator (the default; no network), live public
// venues (optionally recording every answer), or a replay of a recording.
import type { MarketSnapshot } from './market/types.ts';
import { collectSimulatedMarket } from './sources/collect.ts';
import { collectLiveMarket, collectReplayMarket } from './sources/live.ts';
import type { SourceRunOptions } from './sources/live.ts';

import { SOURCE_NAMES } from './defaults.ts';

export { SOURCE_NAMES };
export type SourceName = (typeof SOURCE_NAMES)[number];

export interface CollectRequest extends Omit<SourceRunOptions, 'asOf' | 'symbols'> {
  seed: number;
  asOf: number;
  symbols: readonly string[];
}

export function parseSourceName(value: string): SourceName {
  if ((SOURCE_NAMES as readonly string[]).includes(value)) return value as SourceName;
  throw new Error(`unknown source "${value}": expected one of ${SOURCE_NAMES.join(', ')}`);
}

export async function collectFor(source: SourceName, request: CollectRequest): Promise<MarketSnapshot> {
  if (request.recordDir && source !== 'live')
    throw new Error('--record applies to live runs only (--source live)');
  if (request.replayDir && source !== 'replay') throw new Error('--replay needs --source replay');
  switch (source) {
    case 'sim':
      return collectSimulatedMarket(request);
    case 'live':
      return collectLiveMarket(request);
    case 'replay':
      return collectReplayMarket(request);
  }
}
