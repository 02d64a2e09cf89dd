// A data issue on a section that still came in lowers a confidence above 0 by at least a point (README: "lower
// confidence like any data issue"): x0.9 per issue, down to x0.7, then rounded, so rounding never hides the drop.
import { describe, expect, it } from 'vitest';
import { withIssuePenalty } from '../generator/engines/asset-analysis.ts';

describe('the confidence a data issue leaves', () => {
  it('is the rounded figure without issues', () => {
    expect(withIssuePenalty(42.4, 0)).toBe(42);
    expect(withIssuePenalty(0.3, 0)).toBe(0);
  });

  it('is at least a point lower with one, however small the confidence', () => {
    // Before: 4 x 0.9 = 3.6 rounded back to 4, and 1 x 0.9 to 1: the issue cost nothing.
    expect(withIssuePenalty(4, 1)).toBe(3);
    expect(withIssuePenalty(1, 1)).toBe(0);
    expect(withIssuePenalty(50, 1)).toBe(45);
    for (let c = 1; c <= 95; c++) expect(withIssuePenalty(c, 1), `${c}`).toBeLessThan(c);
  });

  it('falls with each issue down to x0.7, and never below 0', () => {
    expect(withIssuePenalty(95, 2)).toBe(77);
    expect(withIssuePenalty(95, 5)).toBe(67);
    expect(withIssuePenalty(95, 9)).toBe(67);
    expect(withIssuePenalty(0, 3)).toBe(0);
    expect(withIssuePenalty(0.4, 1)).toBe(0);
  });
});
