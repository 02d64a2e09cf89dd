// The return a lesson or an event shows falls on the same side of the neutral band as the published outcome, and
// the outcome is OUTCOME_RULE applied exactly. The audit: r = -0.0024539 was shown as "price moved -0.25% (neutral
// band ±0.25%) so the outcome was NEUTRAL" (a reader applying the rule to -0.25% gets BEARISH), and the rule rounded
// r to 1e-10 before comparing, unsaid, so 1000000 -> 1002499.99997 (just short of the band) was BULLISH.
import { afterEach, describe, expect, it } from 'vitest';
import { buildLesson, type ResolvedRound } from '../generator/engines/arena/lessons.ts';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { OUTCOME_RULE, outcomeOf, returnPercentText } from '../generator/engines/arena/scoring.ts';
import { brainCallFor } from '../generator/state/repo.ts';
import { recordRoundCall, settleRound } from '../generator/state/settle.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { readArenaView } from '../generator/state/view.ts';
import { tempStore } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const ROUND = roundAt(Date.UTC(2026, 10, 26, 12));

const lessonOf = (start: number, end: number) => {
  const outcome = outcomeOf(start, end);
  const round: ResolvedRound = {
    roundId: ROUND.id,
    asset: ROUND.asset,
    brainCall: 'BEARISH',
    brainConfidence: 60,
    counts: { bullish: 0, bearish: 0, neutral: 0 },
    humanVotes: 0,
    syntheticVotes: 0,
    outcome,
    returnFraction: end / start - 1,
    resolvedAt: ROUND.end,
    replayed: false,
  };
  return buildLesson(round);
};

/** The class the published rule gives a return read off a text such as "-0.245%". */
const classOfShown = (text: string) => {
  const percent = Number(/(?:price moved |\()([+-][\d.]+)%/.exec(text)![1]);
  return Math.abs(percent) < 0.25 ? 'NEUTRAL' : percent > 0 ? 'BULLISH' : 'BEARISH';
};

describe('the return shown in a lesson', () => {
  it.each([
    [99.7546, 'NEUTRAL', 'price moved -0.245% (neutral band ±0.25%) so the outcome was NEUTRAL'],
    [100.2454, 'NEUTRAL', 'price moved +0.245% (neutral band ±0.25%) so the outcome was NEUTRAL'],
    [99.75, 'BEARISH', 'price moved -0.25% (neutral band ±0.25%) so the outcome was BEARISH'],
    [100.25, 'BULLISH', 'price moved +0.25% (neutral band ±0.25%) so the outcome was BULLISH'],
    [100.31, 'BULLISH', 'price moved +0.31% (neutral band ±0.25%) so the outcome was BULLISH'],
  ])('100 -> %s: %s, shown on its side of the band', (end, outcome, text) => {
    const lesson = lessonOf(100, end);
    expect(lesson.actual_outcome).toBe(outcome);
    expect(lesson.summary).toContain(text);
    expect(classOfShown(lesson.summary)).toBe(outcome);
  });

  it('takes as many decimals as the side of the band needs', () => {
    expect(returnPercentText(0.00249999997, 'NEUTRAL')).toBe('+0.249999997%');
    expect(returnPercentText(-0.0024539, 'NEUTRAL')).toBe('-0.245%');
    expect(returnPercentText(-0.0024539, null)).toBe('-0.25%');
    expect(returnPercentText(0.0031, 'BULLISH')).toBe('+0.31%');
    expect(returnPercentText(0, 'NEUTRAL')).toBe('+0.00%');
  });
});

describe('the return shown in an event', () => {
  it('falls on the side of the band of the outcome it names', () => {
    const s = tempStore();
    open.push(s);
    const call = { asset: ROUND.asset, bias: 'bearish' as const, confidence: 60, price: 100 };
    recordRoundCall(s.db, ROUND, call, 100, ROUND.start, false, 'simulated');
    settleRound(s.db, {
      round: ROUND,
      call: brainCallFor(s.db, ROUND.id)!,
      endPrice: 99.7546,
      resolvedAt: ROUND.end,
      replayed: false,
    });
    const at = ROUND.end;
    const view = readArenaView(s, {
      mode: 'simulated',
      clock: { asOf: at, generatedAt: at, nextUpdateDue: at + 60_000 },
      brainCalls: [],
      prices: {},
    });
    const resolved = view.events.find((e) => e.kind === 'round_resolved')!;
    expect(resolved.detail).toBe('resolved NEUTRAL (-0.245%); brain called BEARISH');
    expect(classOfShown(resolved.detail)).toBe('NEUTRAL');
  });
});

describe('the outcome rule', () => {
  it('compares the move with the band exactly: just short of it is NEUTRAL, exactly on it is not', () => {
    expect(outcomeOf(1_000_000, 1_002_499.99997)).toBe('NEUTRAL');
    expect(outcomeOf(1_000_000, 997_500.00003)).toBe('NEUTRAL');
    expect(outcomeOf(1_000_000, 1_002_500)).toBe('BULLISH');
    expect(outcomeOf(1_000_000, 997_500)).toBe('BEARISH');
    // Moves of exactly the band in prices that binary floating point cannot hold exactly.
    expect(outcomeOf(0.1, 0.10025)).toBe('BULLISH');
    expect(outcomeOf(0.3, 0.29925)).toBe('BEARISH');
    expect(outcomeOf(2.86, 2.86715)).toBe('BULLISH');
    expect(outcomeOf(0.000012, 0.00001203)).toBe('BULLISH');
    expect(outcomeOf(1.2e-7, 1.203e-7)).toBe('BULLISH');
    expect(outcomeOf(100, 100)).toBe('NEUTRAL');
  });

  it('says that the comparison is exact, never of a rounded return', () => {
    expect(OUTCOME_RULE).toContain(
      'compared exactly on the two prices as decimals (r is never rounded first)',
    );
  });
});
