// Crowd consensus from vote counts: fair largest-remainder percentages, the tie rule and a disagreement score.
import type { ArenaPrediction } from '../../../schemas/common.ts';
import type { HumanConsensus } from '../../../schemas/arena.ts';
import { RULES_URL } from './rules.ts';

export type VoteCounts = Record<'bullish' | 'bearish' | 'neutral', number>;

export const NO_VOTES: VoteCounts = { bullish: 0, bearish: 0, neutral: 0 };

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

export interface FairShares {
  percents: number[];
  /** 100 minus the published total: 0 unless equal counts made an exact 100.0 impossible (e.g. 1/1/1). */
  residual: number;
}

/**
 * Shares in tenths of a percent, largest remainder made fair (see ROUNDING_RULE): floor every share; the
 * leftover tenths go to whole groups of equal counts, choosing among the sets of groups whose sizes add up to
 * the leftover the one with the largest remainders (closest to the exact shares; on equal remainders the larger
 * count first). Equal counts always get equal shares. When no set fits exactly (three equal counts), the
 * largest set that fits is served and the rest is the residual.
 */
export const fairLargestRemainder = (counts: readonly number[], unitsTotal = 1000): FairShares => {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return { percents: counts.map(() => 0), residual: 0 };
  // Remainders compared in exact integer arithmetic: (c * units) mod total.
  const units = counts.map((c) => Math.floor((c * unitsTotal) / total));
  const left = unitsTotal - units.reduce((a, b) => a + b, 0);
  // Classes with equal counts form one group that is served whole; larger remainders first, then larger counts.
  const groups = [...new Set(counts)]
    .map((c) => ({ r: (c * unitsTotal) % total, c, members: counts.flatMap((x, i) => (x === c ? [i] : [])) }))
    .filter((g) => g.r > 0)
    .sort((a, b) => b.r - a.r || b.c - a.c);
  let best: { take: number[]; size: number; weight: number } = { take: [], size: 0, weight: 0 };
  for (let mask = 0; mask < 1 << groups.length; mask++) {
    const chosen = groups.filter((_, g) => (mask >> g) & 1);
    const size = chosen.reduce((a, g) => a + g.members.length, 0);
    if (size > left) continue;
    const weight = chosen.reduce((a, g) => a + g.r * g.members.length, 0);
    if (size > best.size || (size === best.size && weight > best.weight)) {
      best = { take: chosen.flatMap((g) => g.members), size, weight };
    }
  }
  for (const i of best.take) units[i]! += 1;
  const residualUnits = left - best.size;
  return {
    percents: units.map((u) => (u * 100) / unitsTotal),
    residual: (residualUnits * 100) / unitsTotal,
  };
};

/** The published percentages only; see fairLargestRemainder. */
export const largestRemainderPercents = (counts: readonly number[], unitsTotal = 1000): number[] =>
  fairLargestRemainder(counts, unitsTotal).percents;

export type CrowdCallStatus = 'called' | 'tie' | 'no_votes';

export const crowdCallStatus = (c: VoteCounts): CrowdCallStatus => {
  const total = c.bullish + c.bearish + c.neutral;
  if (total === 0) return 'no_votes';
  const top = Math.max(c.bullish, c.bearish, c.neutral);
  return [c.bullish, c.bearish, c.neutral].filter((n) => n === top).length === 1 ? 'called' : 'tie';
};

/** Most votes wins; a tie at the top is no call (NONE), like no votes at all (see TIE_RULE). */
export const consensusOf = (c: VoteCounts): ArenaPrediction | 'NONE' => {
  if (crowdCallStatus(c) !== 'called') return 'NONE';
  const top = Math.max(c.bullish, c.bearish, c.neutral);
  return (['bullish', 'bearish', 'neutral'] as const)
    .find((k) => c[k] === top)!
    .toUpperCase() as ArenaPrediction;
};

/** Normalised Shannon entropy of the shares, H / ln 3: 0 when unanimous (or no votes), 1 when evenly split. */
export const disagreementScore = (c: VoteCounts): number => {
  const total = c.bullish + c.bearish + c.neutral;
  if (total === 0) return 0;
  const h = [c.bullish, c.bearish, c.neutral]
    .filter((n) => n > 0)
    .reduce((acc, n) => acc - (n / total) * Math.log(n / total), 0);
  return round4(h / Math.log(3));
};

export const humanConsensus = (c: VoteCounts): HumanConsensus => {
  const shares = fairLargestRemainder([c.bullish, c.bearish, c.neutral]);
  const [bullishPct, bearishPct, neutralPct] = shares.percents;
  return {
    total: c.bullish + c.bearish + c.neutral,
    bullish: c.bullish,
    bearish: c.bearish,
    neutral: c.neutral,
    bullish_percent: bullishPct!,
    bearish_percent: bearishPct!,
    neutral_percent: neutralPct!,
    rounding_residual_percent: shares.residual,
    consensus: consensusOf(c),
    call_status: crowdCallStatus(c),
    disagreement_score: disagreementScore(c),
    rules_url: RULES_URL,
  };
};
