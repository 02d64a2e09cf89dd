// The per-asset join every paid body reads: for each coin of the free main brain, its liquidity, derivatives and
// reasoning sections side by side, whether they lean the same way, and how stressed the asset looks. Pure.
import type { DerivativesAsset } from '../../../schemas/derivatives.ts';
import type { LiquidityLiteAsset } from '../../../schemas/liquidity-lite.ts';
import type { CoinSnapshot } from '../../../schemas/main-brain.ts';
import type { RiskLevel } from '../../../schemas/market-regime.ts';
import type { ReasoningResponse } from '../../../schemas/reasoning.ts';
import type { Agreement, AgreementReadings } from '../../../schemas/paid/paid-main-brain.ts';
import { agreementOf, bookLeanOf } from '../agreement.ts';
import type { FreeSnapshots } from '../index.ts';

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

/** Signs of stress on one asset: crowded or unwinding positioning, extreme funding, thin books, a large move. */
function riskLevelOf(
  coin: CoinSnapshot,
  liquidity: LiquidityLiteAsset | null,
  derivatives: DerivativesAsset | null,
): RiskLevel | null {
  if (coin.change_24h === null && !liquidity?.liquidity_context && !derivatives?.state) return null;
  let signs = 0;
  if (derivatives?.state === 'crowded_longs' || derivatives?.state === 'crowded_shorts') signs += 2;
  if (derivatives?.state === 'deleveraging') signs += 1;
  if (derivatives?.funding?.level === 'extreme_high' || derivatives?.funding?.level === 'extreme_low')
    signs += 1;
  if (liquidity?.liquidity_context === 'thin') signs += 2;
  if (liquidity?.liquidity_context === 'moderate') signs += 1;
  const move = Math.abs(coin.change_24h ?? 0);
  if (move >= 10) signs += 2;
  else if (move >= 5) signs += 1;
  return levelFromCount(signs);
}

const unique = (lines: string[]): string[] => [...new Set(lines)];

export function joinAssets(free: FreeSnapshots): AssetView[] {
  return Object.values(free.mainBrain.coins).map((coin) => {
    const liquidity = free.liquidityLite.assets[coin.asset] ?? null;
    const derivatives = free.derivatives.assets[coin.asset] ?? null;
    const reasoning = free.reasoning[coin.asset]?.reasoning ?? null;
    const hasLiquidity =
      liquidity !== null && liquidity.status !== null && liquidity.status !== 'unavailable';
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
