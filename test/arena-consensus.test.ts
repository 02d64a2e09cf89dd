import { describe, expect, it } from 'vitest';
import {
  consensusOf,
  crowdCallStatus,
  disagreementScore,
  fairLargestRemainder,
  humanConsensus,
  largestRemainderPercents,
} from '../generator/engines/arena/consensus.ts';
import { HumanConsensus } from '../schemas/arena.ts';

describe('human consensus arithmetic', () => {
  it('reports NONE, zero counts and zero percentages without votes', () => {
    const c = humanConsensus({ bullish: 0, bearish: 0, neutral: 0 });
    expect(c).toEqual({
      total: 0,
      bullish: 0,
      bearish: 0,
      neutral: 0,
      bullish_percent: 0,
      bearish_percent: 0,
      neutral_percent: 0,
      rounding_residual_percent: 0,
      consensus: 'NONE',
      call_status: 'no_votes',
      disagreement_score: 0,
      rules_url: '/docs/arena-rules/',
    });
    expect(HumanConsensus.parse(c)).toEqual(c);
  });

  // Issue 17 changed these expectations: plain largest remainder gave 5/5/1 as 45.5/45.4/9.1 and 1/1/1 as
  // 33.4/33.3/33.3 (equal counts, unequal shares). Equal counts now always get equal shares.
  it('gives equal counts equal shares and still totals 100 where equal shares allow it', () => {
    expect(largestRemainderPercents([5, 5, 1])).toEqual([45.5, 45.5, 9]);
    expect(largestRemainderPercents([2, 1, 0])).toEqual([66.7, 33.3, 0]);
    expect(largestRemainderPercents([1, 5, 1])).toEqual([14.3, 71.4, 14.3]);
    expect(fairLargestRemainder([1, 1, 1])).toEqual({ percents: [33.3, 33.3, 33.3], residual: 0.1 });
    expect(humanConsensus({ bullish: 1, bearish: 1, neutral: 1 }).rounding_residual_percent).toBe(0.1);
  });

  it('never gives equal counts different shares, stays within 0.1 of the exact share, totals 100 minus the residual', () => {
    let residualCases = 0;
    for (let a = 0; a <= 15; a++) {
      for (let b = 0; b <= 15; b++) {
        for (let n = 0; n <= 15; n++) {
          const counts = [a, b, n];
          const total = a + b + n;
          if (total === 0) continue;
          const { percents, residual } = fairLargestRemainder(counts);
          const tenths = percents.map((p) => Math.round(p * 10));
          expect(tenths.reduce((x, y) => x + y, 0) + Math.round(residual * 10)).toBe(1000);
          counts.forEach((c, i) => {
            expect(Math.abs(tenths[i]! - (c * 1000) / total)).toBeLessThan(1);
            counts.forEach((d, j) => {
              if (c === d) expect(tenths[i]).toBe(tenths[j]);
            });
          });
          // A residual only where no fair hand-out (floor or ceiling of each exact share, equal counts alike)
          // reaches 1000 tenths: checked by trying all of them.
          if (residual > 0) {
            residualCases += 1;
            const exact = counts.map((k) => (k * 1000) / total);
            for (let mask = 0; mask < 8; mask++) {
              const pick = exact.map((x, i) => ((mask >> i) & 1 ? Math.ceil(x) : Math.floor(x)));
              const fair = counts.every((k, i) => counts.every((m, j) => k !== m || pick[i] === pick[j]));
              if (fair) expect(pick.reduce((x, y) => x + y, 0)).not.toBe(1000);
            }
          }
          const c = humanConsensus({ bullish: a, bearish: b, neutral: n });
          expect(
            c.bullish_percent + c.bearish_percent + c.neutral_percent + c.rounding_residual_percent,
          ).toBeCloseTo(100, 9);
        }
      }
    }
    expect(residualCases).toBeGreaterThan(0);
  });

  // Issue 17: a tie used to read NEUTRAL; now the crowd makes no call.
  it('takes the majority class and reads any tie at the top as no call (NONE, call_status tie)', () => {
    expect(consensusOf({ bullish: 3, bearish: 1, neutral: 1 })).toBe('BULLISH');
    expect(consensusOf({ bullish: 0, bearish: 1, neutral: 0 })).toBe('BEARISH');
    expect(consensusOf({ bullish: 2, bearish: 2, neutral: 1 })).toBe('NONE');
    expect(consensusOf({ bullish: 2, bearish: 0, neutral: 2 })).toBe('NONE');
    expect(consensusOf({ bullish: 1, bearish: 1, neutral: 1 })).toBe('NONE');
    expect(crowdCallStatus({ bullish: 2, bearish: 2, neutral: 1 })).toBe('tie');
    expect(crowdCallStatus({ bullish: 0, bearish: 0, neutral: 0 })).toBe('no_votes');
    expect(crowdCallStatus({ bullish: 2, bearish: 1, neutral: 1 })).toBe('called');
  });

  it('scores disagreement as normalised entropy: 0 unanimous, 1 evenly split', () => {
    expect(disagreementScore({ bullish: 5, bearish: 0, neutral: 0 })).toBe(0);
    expect(disagreementScore({ bullish: 4, bearish: 4, neutral: 4 })).toBe(1);
    // -(2/3 ln 2/3 + 1/3 ln 1/3) / ln 3 = 0.63651 / 1.09861
    expect(disagreementScore({ bullish: 2, bearish: 1, neutral: 0 })).toBeCloseTo(0.5794, 4);
  });
});
