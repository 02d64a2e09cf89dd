// The per-asset join every paid body reads: for each coin of the free main brain, its liquidity, derivatives and
// reasoning sections side by side, whether they lean the same way, and how stressed the asset looks. Pure.
import { PAID_CATALOG } from '../../../schemas/catalog.ts';
import type { DataMode, SourceInfo } from '../../../schemas/common.ts';
import type { DerivativesAsset } from '../../../schemas/derivatives.ts';
import type { LiquidityLiteAsset } from '../../../schemas/liquidity-lite.ts';
import type { CoinSnapshot } from '../../../schemas/main-brain.ts';
import { ASSET_RISK_RULE, type RiskLevel } from '../../../schemas/market-regime.ts';
import type { ReasoningResponse } from '../../../schemas/reasoning.ts';
import type { Agreement, AgreementReadings } from '../../../schemas/paid/paid-main-brain.ts';
import { agreementOf, bookLeanOf } from '../agreement.ts';
import type { FreeSnapshots } from '../index.ts';
import { symbolList } from '../labels.ts';

export { agreementOf } from '../agreement.ts';

export interface AssetView {
  asset: string;
  coin: CoinSnapshot;
  liquidity: LiquidityLiteAsset | null;
  derivatives: DerivativesAsset | null;
  reasoning: ReasoningResponse['reasoning'] | null;
  sectionsAvailable: number;
  agreement: Agreement;
  /** Every reading the agreement is computed from, published beside it so a reader can recompute it. */
  agreementReadings: AgreementReadings;
  riskLevel: RiskLevel | null;
  evidence: string[];
  limitations: string[];
}

const RISK_LEVELS: readonly RiskLevel[] = ['low', 'moderate', 'elevated', 'high'];

/** Bands a count of stress signs into a level (also used market-wide for counts of assets). */
export const levelFromCount = (count: number): RiskLevel =>
  RISK_LEVELS[count <= 0 ? 0 : count === 1 ? 1 : count <= 3 ? 2 : 3] as RiskLevel;

/**
 * Signs of stress on one asset (ASSET_RISK_RULE, quoted by the field's description): crowded or unwinding
 * positioning, extreme funding, thin books, a large move. A missing reading is not a calm one: without the 24-hour
 * change, the liquidity context or a positioning state there is no level, since the count could only understate.
 */
function riskLevelOf(
  coin: CoinSnapshot,
  liquidity: LiquidityLiteAsset | null,
  derivatives: DerivativesAsset | null,
): RiskLevel | null {
  const context = liquidity?.liquidity_context ?? null;
  const state = derivatives?.state ?? null;
  if (coin.change_24h === null || context === null || state === null || state === 'unavailable') return null;
  const r = ASSET_RISK_RULE;
  let signs = 0;
  if (state === 'crowded_longs' || state === 'crowded_shorts') signs += r.crowded;
  if (state === 'deleveraging') signs += r.deleveraging;
  const level = derivatives?.funding?.level;
  if (level === 'extreme_high' || level === 'extreme_low') signs += r.extremeFunding;
  if (context === 'thin') signs += r.thin;
  if (context === 'moderate') signs += r.moderate;
  const move = Math.abs(coin.change_24h);
  if (move >= r.largeMovePct) signs += r.largeMove;
  else if (move >= r.movePct) signs += r.move;
  return levelFromCount(signs);
}

const unique = (lines: string[]): string[] => [...new Set(lines)];

export function joinAssets(free: FreeSnapshots): AssetView[] {
  return Object.values(free.mainBrain.coins).map((coin) => {
    const liquidity = free.liquidityLite.assets[coin.asset] ?? null;
    const derivatives = free.derivatives.assets[coin.asset] ?? null;
    const reasoning = free.reasoning[coin.asset]?.reasoning ?? null;
    // A null status is data that came in whole but was not observed live (simulated, replayed): still a reading.
    const hasLiquidity = liquidity !== null && liquidity.status !== 'unavailable';
    const hasDerivatives =
      derivatives !== null && derivatives.state !== null && derivatives.state !== 'unavailable';
    const hasReasoning = reasoning !== null && reasoning.confidence !== null;
    const sectionsAvailable = [coin.price !== null, hasLiquidity, hasDerivatives, hasReasoning].filter(
      Boolean,
    ).length;
    // An asset with no data at all gets one sentence (first in its reasoning's limitations), not one per section.
    const missing =
      coin.data_status === 'unavailable'
        ? []
        : [
            coin.price === null ? 'No price was available for this asset.' : null,
            hasLiquidity ? null : 'No liquidity reading was available for this asset.',
            hasDerivatives ? null : 'No derivatives positioning was available for this asset.',
            hasReasoning ? null : 'The reasoning had no evidence to read for this asset.',
          ].filter((line): line is string => line !== null);
    // The brain's bias and the reasoning share one reading; positioning and book balance are the other voices.
    const agreementReadings: AgreementReadings = {
      brain: coin.bias,
      derivatives: hasDerivatives ? (derivatives?.vote ?? null) : null,
      order_book: bookLeanOf(liquidity?.metrics?.book_imbalance),
    };
    return {
      asset: coin.asset,
      coin,
      liquidity,
      derivatives,
      reasoning,
      sectionsAvailable,
      agreement: agreementOf(Object.values(agreementReadings)),
      agreementReadings,
      riskLevel: riskLevelOf(coin, hasLiquidity ? liquidity : null, hasDerivatives ? derivatives : null),
      evidence: unique([
        ...(reasoning?.reason_points ?? []),
        ...(derivatives?.evidence ?? []),
        ...(liquidity?.notes ?? []),
      ]),
      limitations: unique([
        ...missing,
        ...(reasoning?.limitations ?? []),
        ...(derivatives?.limitations ?? []),
      ]),
    };
  });
}

/** What a market-wide count of `liquidity_context` rests on: which assets read thin, and which had no order book. */
export interface LiquidityCounts {
  /** Assets whose context is `thin`. */
  thin: string[];
  /** Assets with any context label. */
  labelled: number;
  /** Assets without a readable order book: no depth, so a label only when the spread alone reads thin. */
  withoutBook: string[];
  total: number;
}

export function liquidityCounts(views: readonly AssetView[]): LiquidityCounts {
  const labelled = views.filter((v) => (v.liquidity?.liquidity_context ?? null) !== null);
  return {
    thin: labelled.filter((v) => v.liquidity?.liquidity_context === 'thin').map((v) => v.asset),
    labelled: labelled.length,
    withoutBook: views
      .filter((v) => v.liquidity?.metrics?.spread_method !== 'order_book')
      .map((v) => v.asset),
    total: views.length,
  };
}

/**
 * Liquidity across the assets in words that say what the count rests on: the thin ones out of those with a label
 * (marking a thin reading taken from the spread alone), and how many assets had no order book, whose depth nobody
 * could read. Every market-wide sentence that counts thin liquidity uses it.
 */
export function liquiditySentence(views: readonly AssetView[]): string {
  const c = liquidityCounts(views);
  const noBook = new Set(c.withoutBook);
  const thin = c.thin.map((a) => (noBook.has(a) ? `${a} (from its spread alone)` : a));
  const share =
    c.thin.length < c.labelled
      ? `${c.thin.length} of the ${c.labelled} assets with a liquidity reading`
      : c.labelled === 1
        ? 'the only asset with a liquidity reading'
        : `all ${c.labelled} assets with a liquidity reading`;
  const reading =
    c.thin.length > 0
      ? `Liquidity reads thin for ${symbolList(thin)}: ${share}.`
      : c.labelled > 0
        ? `None of the ${c.labelled} assets with a liquidity reading reads thin.`
        : 'No asset has a liquidity reading this run.';
  const missing =
    c.withoutBook.length > 0
      ? ` ${c.withoutBook.length} of ${c.total} assets had no order book this run (${symbolList(c.withoutBook)}): ` +
        'their depth could not be read, so they carry a liquidity label only when the spread alone reads thin.'
      : '';
  return reading + missing;
}

const READING_NAMES: Record<keyof AgreementReadings, string> = {
  brain: 'brain',
  derivatives: 'positioning',
  order_book: 'order book',
};

/** "BTC (brain bearish, positioning bullish)": an asset with the readings that take a side, as agreement saw them. */
export function conflictWords(view: AssetView): string {
  const sides = (Object.keys(READING_NAMES) as Array<keyof AgreementReadings>).flatMap((name) => {
    const vote = view.agreementReadings[name];
    return vote === 'bullish' || vote === 'bearish' ? [`${READING_NAMES[name]} ${vote}`] : [];
  });
  return `${view.asset} (${sides.join(', ')})`;
}

/** "crowded_longs" -> "crowded longs". */
export const words = (value: string | null): string | null =>
  value === null ? null : value.replace(/_/g, ' ');

/** The label that leads a paid body's prose when its numbers are not live ("SIMULATED DATA. "), else "". */
export const dataLabelOf = (mode: DataMode): string =>
  ({ simulated: 'SIMULATED DATA. ', replay: 'REPLAYED DATA. ', live: '' })[mode];

/** The run's truth statement, first among a paid body's limitations when its numbers are not live. */
export const dataNoticeLines = (mode: DataMode, truthStatement: string | undefined): string[] =>
  mode !== 'live' && truthStatement ? [truthStatement] : [];

/**
 * Provenance and freshness of a paid body: the run's, as the free regime states it, with the product's own declared
 * cache hint (PAID_CATALOG: 60 s for the paid regime and main brain, 0 for the atlas and the report), degraded when
 * any free body the join reads was.
 */
export const paidSourceOf = (free: FreeSnapshots, product: keyof typeof PAID_CATALOG): SourceInfo => ({
  ...free.marketRegime.source,
  cache_seconds: PAID_CATALOG[product].cacheSeconds,
  degraded: [
    free.marketRegime.source,
    free.mainBrain.source,
    free.liquidityLite.source_details,
    free.derivatives.source_details,
    ...Object.values(free.reasoning).map((body) => body.source),
  ].some((source) => source.degraded),
});
