// Crowd consensus from vote counts: largest-remainder percentages, a tie rule and a disagreement score.
import type { ArenaPrediction } from '../../../schemas/common.ts';
import type { HumanConsensus } from '../../../schemas/arena.ts';

export type VoteCounts = Record<'bullish' | 'bearish' | 'neutral', number>;

export const NO_VOTES: VoteCounts = { bullish: 0, bearish: 0, neutral: 0 };

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/**
 * Shares in tenths of a percent by the largest-remainder method: floor every share, then hand the leftover
 * tenths to the largest remainders (ties to the earlier class), so the three always add up to exactly 100.0.
 */
export const largestRemainderPercents = (counts: readonly number[], unitsTotal = 1000): number[] => {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return counts.map(() => 0);
  const exact = counts.map((c) => (c * unitsTotal) / total);
  const units = exact.map(Math.floor);
  let left = unitsTotal - units.reduce((a, b) => a + b, 0);
  const byRemainder = exact
    .map((x, i) => ({ i, r: x - Math.floor(x) }))
    .sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    units[i]! += 1;
    left -= 1;
  }
  return units.map((u) => (u * 100) / unitsTotal);
};

/** Most votes wins; a tie at the top (any two or three classes) reads NEUTRAL: a split crowd has no lean. */
export const consensusOf = (c: VoteCounts): ArenaPrediction | 'NONE' => {
  const total = c.bullish + c.bearish + c.neutral;
  if (total === 0) return 'NONE';
  const top = Math.max(c.bullish, c.bearish, c.neutral);
  const leaders = (['bullish', 'bearish', 'neutral'] as const).filter((k) => c[k] === top);
  return leaders.length === 1 ? (leaders[0]!.toUpperCase() as ArenaPrediction) : 'NEUTRAL';
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
  const [bullishPct, bearishPct, neutralPct] = largestRemainderPercents([c.bullish, c.bearish, c.neutral]);
  return {
    total: c.bullish + c.bearish + c.neutral,
    bullish: c.bullish,
    bearish: c.bearish,
    neutral: c.neutral,
    bullish_percent: bullishPct!,
    bearish_percent: bearishPct!,
    neutral_percent: neutralPct!,
    consensus: consensusOf(c),
    disagreement_score: disagreementScore(c),
  };
};
