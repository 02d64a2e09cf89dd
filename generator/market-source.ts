// Chooses where a run's market data comes from. The simulator is the embedded default; it needs no network.
import type { MarketSnapshot } from './market/types.ts';
import { collectSimulatedMarket } from './sources/collect.ts';

export const SOURCE_NAMES = ['sim'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

export interface CollectRequest {
  seed: number;
  asOf: number;
  symbols: readonly string[];
}

export function parseSourceName(value: string): SourceName {
  if ((SOURCE_NAMES as readonly string[]).includes(value)) return value as SourceName;
  throw new Error(`unknown source "${value}": expected one of ${SOURCE_NAMES.join(', ')}`);
}

export async function collectFor(source: SourceName, request: CollectRequest): Promise<MarketSnapshot> {
  switch (source) {
    case 'sim':
      return collectSimulatedMarket(request);
  }
}
