// Cross-venue price check: each asset's price is compared with the other ticker venues of the fallback order, in
// order. A venue that cannot give a current price is passed over for the next one (at most MAX_REFERENCE_VENUES per
// asset); a gap beyond the threshold is an issue on that asset's ticker, and so is a price no other venue could
// confirm (the engines list both as limitations and lower the asset's confidence). A gap far beyond the threshold
// gets a second opinion: when two other venues agree with each other, the outlier is set aside and their price used.
import type { AssetMarket, SourceIssue, Sourced, Ticker24h } from '../market/types.ts';
import { crossCheck } from './cross-check.ts';
import type { CrossCheck, CrossCheckOptions } from './cross-check.ts';

/** A gap this large (percent) is a wrong price, not a spread between venues: a second reference is asked. */
export const OUTLIER_GAP_PCT = 10;

export interface PriceCheckOptions extends CrossCheckOptions<'ticker'> {
  /** Percent, e.g. 1 for 1 %. */
  thresholdPct: number;
}

export interface PriceCheckResult {
  issues: SourceIssue[];
  /** Symbol -> the ticker to publish instead of an outlier that two other venues contradicted. */
  replacements: Map<string, Sourced<Ticker24h>>;
}

type AssetCheck = CrossCheck<'ticker'>;

const fmt = (price: number): string => price.toPrecision(6).replace(/\.?0+$/, '');

const gapPct = (price: number, reference: number): number => (Math.abs(price - reference) / reference) * 100;

const quoted = (ticker: Sourced<Ticker24h>): string =>
  `${ticker.provenance.venue} (${fmt(ticker.value.last)})`;

export function disagreement(
  symbol: string,
  primary: Sourced<Ticker24h>,
  reference: Sourced<Ticker24h>,
  thresholdPct: number,
): SourceIssue | null {
  const gap = gapPct(primary.value.last, reference.value.last);
  if (!(gap > thresholdPct)) return null;
  return tickerIssue(primary, symbol, disagreementText(primary, reference, gap, thresholdPct));
}

function disagreementText(
  primary: Sourced<Ticker24h>,
  reference: Sourced<Ticker24h>,
  gap: number,
  thresholdPct: number,
): string {
  return (
    `price ${fmt(primary.value.last)} differs from ${quoted(reference)} ` +
    `by ${gap.toFixed(2)} %, beyond the ${thresholdPct} % cross-venue threshold`
  );
}

const tickerIssue = (primary: Sourced<Ticker24h>, symbol: string, message: string): SourceIssue => ({
  venue: primary.provenance.venue,
  symbol,
  section: 'ticker',
  message,
});

/** Whether the asset's check needs one more venue: none confirmed a price yet, or the one that did is far off. */
function needsAnother(check: AssetCheck): boolean {
  const [first, second] = check.references;
  if (!first) return true;
  return !second && gapPct(check.primary.value.last, first.value.last) > OUTLIER_GAP_PCT;
}

/** The issue (and the replacement price, if any) that an asset's finished check comes to. */
function verdict(
  check: AssetCheck,
  thresholdPct: number,
): { issue: SourceIssue | null; replacement?: Sourced<Ticker24h> } {
  const { symbol, primary, references, misses } = check;
  const [first, second] = references;
  // No venue asked and none passed over: the run was stopped (its deadline) before the check could start.
  const tried = misses.length > 0 ? ` (${misses.join('; ')})` : ' (the collection was stopped before)';
  if (!first)
    return {
      issue: tickerIssue(
        primary,
        symbol,
        `price ${fmt(primary.value.last)} not cross-checked: no other venue gave a current price${tried}`,
      ),
    };
  const firstGap = gapPct(primary.value.last, first.value.last);
  if (firstGap <= thresholdPct) return { issue: null };
  if (!second) return { issue: disagreement(symbol, primary, first, thresholdPct) };
  // The second opinion settles a gap far beyond the threshold.
  if (gapPct(primary.value.last, second.value.last) <= thresholdPct) return { issue: null };
  if (gapPct(second.value.last, first.value.last) <= thresholdPct)
    return {
      issue: tickerIssue(
        primary,
        symbol,
        `price ${fmt(primary.value.last)} set aside as an outlier: it differs by ${firstGap.toFixed(2)} % from ` +
          `${quoted(first)} and ${quoted(second)}, which agree within the ${thresholdPct} % cross-venue ` +
          `threshold; the price published is ${first.provenance.venue}'s`,
      ),
      replacement: first,
    };
  return {
    issue: tickerIssue(
      primary,
      symbol,
      `${disagreementText(primary, first, firstGap, thresholdPct)}; ${quoted(second)} agrees with neither`,
    ),
  };
}

/**
 * Cross-checks every asset's ticker against the other ticker venues. No other ticker venue configured means no check
 * (the operator's choice). Rounds of calls, one venue per asset per round, batched by venue; no new round once the
 * run's signal (its deadline) has fired.
 */
export async function checkPrices(
  assets: readonly AssetMarket[],
  options: PriceCheckOptions,
): Promise<PriceCheckResult> {
  const checks = await crossCheck('ticker', assets, options, needsAnother, 'no price for this asset');
  const issues: SourceIssue[] = [];
  const replacements = new Map<string, Sourced<Ticker24h>>();
  for (const check of checks) {
    const { issue, replacement } = verdict(check, options.thresholdPct);
    if (issue) issues.push(issue);
    if (replacement) replacements.set(check.symbol, replacement);
  }
  return { issues, replacements };
}
