// One pass over the snapshot: every asset's reading and the market regime. The free bodies and the paid
// engines both read this, so the evidence is computed once per run.
import { DEFAULT_REASONING_ASSET } from '../../schemas/common.ts';
import type { MarketSnapshot } from '../market/types.ts';
import { analyzeAsset, type AssetAnalysis } from './asset-analysis.ts';
import { analyzeRegime, type RegimeReading } from './regime.ts';
import { venuesOf } from './labels.ts';

export interface MarketAnalysis {
  snapshot: MarketSnapshot;
  /** In snapshot order. */
  assets: AssetAnalysis[];
  regime: RegimeReading;
  /** The asset `reasoning.php` shows without a query: BTC when present, else the first symbol. */
  defaultAsset: string;
  supportedAssets: string[];
  /** Every venue that supplied data this run, sorted. */
  venues: string[];
}

export function analyzeSnapshot(snapshot: MarketSnapshot): MarketAnalysis {
  const assets = snapshot.assets.map((a) => analyzeAsset(a, snapshot.issues, snapshot.mode));
  const supportedAssets = snapshot.assets.map((a) => a.symbol);
  return {
    snapshot,
    assets,
    regime: analyzeRegime(snapshot.assets, assets),
    defaultAsset: supportedAssets.includes(DEFAULT_REASONING_ASSET)
      ? DEFAULT_REASONING_ASSET
      : (supportedAssets[0] ?? DEFAULT_REASONING_ASSET),
    supportedAssets,
    venues: venuesOf(snapshot),
  };
}
