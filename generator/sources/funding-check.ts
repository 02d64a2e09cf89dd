// Cross-venue funding check: each asset's funding rate is compared with the next funding venue of the fallback order
// that gives a current rate for it (a venue that fails, lacks the asset or answers for another time is passed over,
// at most MAX_REFERENCE_VENUES per asset). Without it the positioning vote's sign could rest on whichever venue
// answered first: +0.2 % per 8 h at one venue reads crowded longs (bearish), -0.06 % at the next crowded shorts
// (bullish). Two rates further apart than the threshold are an issue on that asset's funding, and so is a rate no
// other configured venue could confirm; the engines list both as limitations and lower the asset's confidence.
// A plan with one funding venue has nothing to compare with: no check and no issue (the operator's choice).
import type { AssetMarket, SourceIssue } from '../market/types.ts';
import { crossCheck } from './cross-check.ts';
import type { CrossCheck, CrossCheckOptions } from './cross-check.ts';

/**
 * Two venues' rates further apart than this (percentage points per 8 h) disagree: the size of the -0.05 % mark and
 * half the +0.1 % mark of FUNDING_RULE, so a gap past it can move a reading across a fixed mark.
 */
export const FUNDING_DISAGREEMENT_PCT_8H = 0.05;

export interface FundingCheckOptions extends CrossCheckOptions<'funding'> {
  /** Percentage points per 8 h, e.g. 0.05. */
  thresholdPct8h: number;
}

type AssetCheck = CrossCheck<'funding'>;

/** A rate per 8 h in percent, signed, at the decimals `rate_8h_pct` is published with: 0.002 -> "+0.2000 %". */
const pct8h = (rate8h: number): string => `${rate8h > 0 ? '+' : ''}${(rate8h * 100).toFixed(4)} %`;

/** The gap between two rates in percentage points per 8 h, at the 4 decimals it is stated with (and judged at). */
const gapPct8h = (a: number, b: number): number => Math.round(Math.abs(a - b) * 1e6) / 1e4;

const fundingIssue = (
  { symbol, primary }: Pick<AssetCheck, 'symbol' | 'primary'>,
  message: string,
): SourceIssue => ({ venue: primary.provenance.venue, symbol, section: 'funding', message });

/** The issue an asset's finished check comes to, or null when another venue confirmed the rate. */
function fundingVerdict(check: AssetCheck, thresholdPct8h: number): SourceIssue | null {
  const rate = check.primary.value.rate8h;
  const [reference] = check.references;
  if (!reference) {
    // No venue asked and none passed over: the run was stopped (its deadline) before the check could start.
    const tried = check.misses.length > 0 ? check.misses.join('; ') : 'the collection was stopped before';
    return fundingIssue(
      check,
      `funding ${pct8h(rate)} per 8 h not cross-checked: no other venue gave a current funding rate (${tried})`,
    );
  }
  const other = reference.value.rate8h;
  const gap = gapPct8h(rate, other);
  if (!(gap > thresholdPct8h)) return null;
  return fundingIssue(
    check,
    `funding ${pct8h(rate)} per 8 h differs from ${reference.provenance.venue} (${pct8h(other)}) by ` +
      `${gap.toFixed(4)} points per 8 h, beyond the ${thresholdPct8h}-point cross-venue threshold; the ` +
      'positioning read from it may not hold',
  );
}

/**
 * Cross-checks every asset's funding rate against the other funding venues of the plan. Rounds of calls, one venue
 * per asset per round, batched by venue; no new round once the run's signal (its deadline) has fired.
 */
export async function checkFunding(
  assets: readonly AssetMarket[],
  options: FundingCheckOptions,
): Promise<SourceIssue[]> {
  // One current rate from another venue confirms it or not.
  const unconfirmed = (check: AssetCheck) => check.references.length === 0;
  const checks = await crossCheck('funding', assets, options, unconfirmed, 'no funding rate for this asset');
  return checks.flatMap((check) => fundingVerdict(check, options.thresholdPct8h) ?? []);
}
