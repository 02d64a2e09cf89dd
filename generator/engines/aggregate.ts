// Readings across all assets: how many lean each way, the prevailing positioning, and missing-data notes that
// stay short even for a universe of hundreds of symbols.
import type { Bias } from '../../schemas/common.ts';
import type { DerivativesState } from '../../schemas/derivatives.ts';
import type { MarketSnapshot } from '../market/types.ts';
import type { AssetAnalysis } from './asset-analysis.ts';
import { issueText, symbolList } from './labels.ts';
import { mean } from './math.ts';

export interface Leaning {
  bullish: number;
  bearish: number;
  neutral: number;
}

export const leaningOf = (assets: readonly AssetAnalysis[]): Leaning => {
  const counts: Leaning = { bullish: 0, bearish: 0, neutral: 0 };
  for (const a of assets) if (a.bias) counts[a.bias]++;
  return counts;
};

/** The side with the most assets; a tie at the top reads neutral. */
export const overallBias = (l: Leaning): Bias => {
  const top = Math.max(l.bullish, l.bearish, l.neutral);
  const leaders = (['bullish', 'bearish', 'neutral'] as const).filter((b) => l[b] === top);
  return leaders.length === 1 ? leaders[0]! : 'neutral';
};

/**
 * A market-wide confidence by MEAN_OVER_ALL_ASSETS_RULE (schemas/common.ts, quoted by each field's description): the
 * mean over every tracked asset, one without evidence (null) counting as 0, so that it never rises when an asset's
 * evidence goes missing (averaging only the assets with evidence let a weak asset's loss raise it); null when no
 * asset has evidence. Pass one value per tracked asset.
 */
export const meanOverAllAssets = (values: ReadonlyArray<number | null>): number | null => {
  if (values.every((c) => c === null)) return null;
  const m = mean(values.map((c) => c ?? 0));
  return m === null ? null : Math.round(m);
};

/** The most common positioning state among assets with data; a tie at the top reads "mixed". */
export const prevailingState = (assets: readonly AssetAnalysis[]): DerivativesState | 'mixed' | null => {
  const counts = new Map<DerivativesState, number>();
  for (const a of assets) {
    const s = a.derivatives.state;
    if (s !== 'unavailable') counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  if (counts.size === 0) return null;
  const top = Math.max(...counts.values());
  const leaders = [...counts].filter(([, n]) => n === top).map(([s]) => s);
  return leaders.length === 1 ? leaders[0]! : 'mixed';
};

const SECTION_WORDS = {
  candles: 'hourly candles',
  ticker: '24-hour ticker',
  book: 'order book',
  funding: 'funding',
  openInterest: 'open interest',
  liquidations: 'liquidations',
} as const;
type Section = keyof typeof SECTION_WORDS;

/** One line per missing section ("No funding for XLM, HBAR."), plus run-wide issues, for the given sections. */
export const missingDataNotes = (snapshot: MarketSnapshot, sections: readonly Section[]): string[] => {
  const notes: string[] = [];
  for (const section of sections) {
    const missing = snapshot.assets.filter((a) => a[section] === null).map((a) => a.symbol);
    if (missing.length > 0) notes.push(`No ${SECTION_WORDS[section]} for ${symbolList(missing)} this run.`);
  }
  for (const issue of snapshot.issues) {
    if (issue.symbol === null && (issue.section === 'all' || sections.includes(issue.section)))
      notes.push(issueText(issue));
  }
  return notes;
};

/**
 * Per-asset lines ("XLM: ...") with the same text after the prefix joined into one ("XLM and HBAR: ..."), so that a
 * body-wide list names every asset concerned and stays short.
 */
export const groupedBySymbol = (
  entries: ReadonlyArray<{ symbol: string; lines: readonly string[] }>,
): string[] => {
  const groups = new Map<string, string[]>();
  for (const { symbol, lines } of entries)
    for (const line of lines) {
      const text = line.startsWith(`${symbol}: `) ? line.slice(symbol.length + 2) : line;
      groups.set(text, [...(groups.get(text) ?? []), symbol]);
    }
  return [...groups].map(([text, symbols]) => `${symbolList(symbols)}: ${text}`);
};

/** Every section an asset reading uses: a missing one, or an issue on one, marks the asset `partial`. */
const ASSET_SECTIONS = Object.keys(SECTION_WORDS) as Section[];

/**
 * Every reason an asset is `partial`, for a body-wide list: each missing section, run-wide issues, and the sections
 * that came in weaker (`gaps`), grouped by kind ("XLM and HBAR: ...").
 */
export const assetDataNotes = (snapshot: MarketSnapshot, assets: readonly AssetAnalysis[]): string[] => [
  ...missingDataNotes(snapshot, ASSET_SECTIONS),
  ...groupedBySymbol(assets.map((a) => ({ symbol: a.symbol, lines: a.gaps }))),
];
