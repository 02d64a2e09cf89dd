import { describe, expect, it } from 'vitest';
import {
  consensusOf,
  disagreementScore,
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
      consensus: 'NONE',
      disagreement_score: 0,
    });
    expect(HumanConsensus.parse(c)).toEqual(c);
  });

  it('gives the leftover tenth to the largest remainder so thirds add up to 100', () => {
    expect(largestRemainderPercents([1, 1, 1])).toEqual([33.4, 33.3, 33.3]);
    expect(largestRemainderPercents([2, 1, 0])).toEqual([66.7, 33.3, 0]);
    expect(largestRemainderPercents([1, 5, 1])).toEqual([14.3, 71.4, 14.3]);
  });

  it('always sums to exactly 1000 tenths of a percent', () => {
    for (let a = 0; a <= 12; a++) {
      for (let b = 0; b <= 12; b++) {
        for (let n = 0; n <= 12; n++) {
          if (a + b + n === 0) continue;
          const tenths = largestRemainderPercents([a, b, n]).map((p) => Math.round(p * 10));
          expect(tenths.reduce((x, y) => x + y, 0)).toBe(1000);
          const c = humanConsensus({ bullish: a, bearish: b, neutral: n });
          expect(Math.abs(c.bullish_percent + c.bearish_percent + c.neutral_percent - 100)).toBeLessThan(
            1e-9,
          );
        }
      }
    }
  });

  it('takes the majority class and reads any tie at the top as NEUTRAL', () => {
    expect(consensusOf({ bullish: 3, bearish: 1, neutral: 1 })).toBe('BULLISH');
    expect(consensusOf({ bullish: 0, bearish: 1, neutral: 0 })).toBe('BEARISH');
    expect(consensusOf({ bullish: 2, bearish: 2, neutral: 1 })).toBe('NEUTRAL');
    expect(consensusOf({ bullish: 2, bearish: 0, neutral: 2 })).toBe('NEUTRAL');
    expect(consensusOf({ bullish: 1, bearish: 1, neutral: 1 })).toBe('NEUTRAL');
  });

  it('scores disagreement as normalised entropy: 0 unanimous, 1 evenly split', () => {
    expect(disagreementScore({ bullish: 5, bearish: 0, neutral: 0 })).toBe(0);
    expect(disagreementScore({ bullish: 4, bearish: 4, neutral: 4 })).toBe(1);
    // -(2/3 ln 2/3 + 1/3 ln 1/3) / ln 3 = 0.63651 / 1.09861
    expect(disagreementScore({ bullish: 2, bearish: 1, neutral: 0 })).toBeCloseTo(0.5794, 4);
  });
});
