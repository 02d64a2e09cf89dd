// Proper scores for the arena's three ordered classes (bearish < neutral < bullish), and the outcome rule.
import type { ArenaPrediction, ArenaReading } from '../../../schemas/common.ts';
import type { VoteCounts } from './consensus.ts';
import { ENTRY_WINDOW_MINUTES, RESOLVE_WINDOW_MINUTES } from './rounds.ts';

/** Probabilities in class order [bearish, neutral, bullish]. */
export type ClassProbs = readonly [number, number, number];

export const CLASS_ORDER: readonly ArenaPrediction[] = ['BEARISH', 'NEUTRAL', 'BULLISH'];
export const UNIFORM: ClassProbs = [1 / 3, 1 / 3, 1 / 3];

/** |simple return| over the round below this is NEUTRAL. Fixed for every asset and published before any round. */
export const NEUTRAL_BAND = 0.0025;
/** A confidence of 100 moves the brain's forecast 70% of the way from uniform to certainty (at most p = 0.8). */
export const BRAIN_SHRINK = 0.7;

export const OUTCOME_RULE =
  `Return r = end price / start price - 1, start price = the first price the generator saw at or after the round ` +
  `start, by the price's own time (the venue's ticker time, or the close of an hourly candle; a price from before ` +
  `the start never counts): the price of the first run of the round whose price is that recent (within ` +
  `${ENTRY_WINDOW_MINUTES} minutes of the start, else the round is voided; a run every minute makes it the start ` +
  `minute), or the open of the first closed hourly candle opening at or after the start when that run already had ` +
  `one, end price = the first price from at or after the round end, by its own time, seen by a run within ` +
  `${RESOLVE_WINDOW_MINUTES} minutes of the end (else the round is voided). ` +
  `|r| < ${NEUTRAL_BAND * 100}% is NEUTRAL, r >= ${NEUTRAL_BAND * 100}% BULLISH, r <= -${NEUTRAL_BAND * 100}% BEARISH, ` +
  `compared exactly on the two prices as decimals (r is never rounded first); one fixed band for all assets.`;

export const SCORE_DEFINITIONS =
  'Classes ordered bearish < neutral < bullish. Crowd probabilities (n_i + 1) / (N + 3). Brain probabilities: ' +
  `uniform shrunk towards its called class, p = (1 - w) / 3 + w for the call, w = ${BRAIN_SHRINK} x confidence / 100 ` +
  '(uniform when there is no call; a call at confidence 0 is uniform too, a three-way tie: left out of the brain ' +
  'hit rate, whose n counts only the calls above 0, and still scored by Brier, RPS and skill). Combined = equal-weight average of brain and crowd; its call is its most ' +
  'probable class, compared at the 4 published decimals, and a tie at the top is no call: left out of the ' +
  'combined hit rate (whose n counts only the rounds with a call) and counted in ' +
  'teacher_brain.metrics.combined_no_call_rounds, while its Brier, RPS and skill score every round. Brier = sum of squared ' +
  'errors over the three classes (0-2). RPS = half the sum of squared differences of cumulative probabilities ' +
  '(0-1). shared_intelligence_score = 1 - RPS(combined). learning_score = RPS(brain) - RPS(crowd). Hit rate = ' +
  'share of exact class hits with a 95% Wilson interval. Skill = 1 - RPS / RPS(base rate), base rate = smoothed ' +
  'outcome frequencies in the same window. Agreement: brain call equals human crowd consensus; a tied crowd ' +
  'makes no call and is left out of crowd hit rate and agreement (crowd_no_call_rounds).';

export const classIndex = (c: ArenaPrediction): number => CLASS_ORDER.indexOf(c);

/** A finite number as the decimal its shortest form (String(x): what JSON and the venues wrote) says: digits x 10^exponent. */
const decimalOf = (x: number): { digits: bigint; exponent: number } => {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (!m) throw new RangeError(`not a finite number: ${x}`);
  const fraction = m[3] ?? '';
  return { digits: BigInt(`${m[1]}${m[2]}${fraction}`), exponent: Number(m[4] ?? 0) - fraction.length };
};

const pow10 = (n: number): bigint => 10n ** BigInt(Math.max(0, n));

/**
 * The outcome of a round, as OUTCOME_RULE says: |end - start| < band x start is NEUTRAL, compared in exact decimal
 * arithmetic. Binary floating point would put a move of exactly the band (100 -> 100.25, 0.1 -> 0.10025) on either
 * side, and rounding r first (as this did, to 1e-10) calls a move just short of the band (1000000 -> 1002499.99997)
 * a move of the band.
 */
export const outcomeOf = (startPrice: number, endPrice: number, band = NEUTRAL_BAND): ArenaPrediction => {
  const [s, e, b] = [decimalOf(startPrice), decimalOf(endPrice), decimalOf(band)];
  const exponent = Math.min(s.exponent, e.exponent);
  const start = s.digits * pow10(s.exponent - exponent);
  const move = e.digits * pow10(e.exponent - exponent) - start;
  // |move| < band x start, both sides scaled to whole numbers: band = b.digits x 10^b.exponent.
  const size = (move < 0n ? -move : move) * pow10(-b.exponent);
  if (size < b.digits * start * pow10(b.exponent)) return 'NEUTRAL';
  return move > 0n ? 'BULLISH' : 'BEARISH';
};

/** The class OUTCOME_RULE gives a return written in percent. */
const classOfPercent = (percent: number): ArenaPrediction =>
  Math.abs(percent) < NEUTRAL_BAND * 100 ? 'NEUTRAL' : percent > 0 ? 'BULLISH' : 'BEARISH';

/** More decimals than any price a venue quotes can call for: past this the two-decimal text is kept. */
const MAX_RETURN_DECIMALS = 12;

/**
 * A round's return in percent, signed ("+0.31%", "-0.245%"): two decimals, or as many more as it takes for the
 * number shown to fall in the round's outcome class, so that a reader applying OUTCOME_RULE to it gets the
 * published outcome (-0.24539% is "-0.245%", NEUTRAL; at two decimals it would read "-0.25%", the band).
 */
export const returnPercentText = (fraction: number, outcome: ArenaPrediction | null): string => {
  const percent = fraction * 100;
  const texts = Array.from({ length: MAX_RETURN_DECIMALS - 1 }, (_, i) => percent.toFixed(i + 2));
  const text = texts.find((t) => outcome === null || classOfPercent(Number(t)) === outcome) ?? texts[0]!;
  return text.startsWith('-') ? `${text}%` : `+${text}%`;
};

export const brainProbs = (call: ArenaReading, confidence: number | null): ClassProbs => {
  if (call === 'NONE') return UNIFORM;
  const w = (BRAIN_SHRINK * Math.min(100, Math.max(0, confidence ?? 0))) / 100;
  const k = classIndex(call);
  const p = [0, 1, 2].map((i) => (1 - w) / 3 + (i === k ? w : 0));
  return [p[0]!, p[1]!, p[2]!];
};

export const crowdProbs = (c: VoteCounts): ClassProbs => {
  const n = c.bearish + c.neutral + c.bullish;
  return [(c.bearish + 1) / (n + 3), (c.neutral + 1) / (n + 3), (c.bullish + 1) / (n + 3)];
};

export const averageProbs = (a: ClassProbs, b: ClassProbs): ClassProbs => [
  (a[0] + b[0]) / 2,
  (a[1] + b[1]) / 2,
  (a[2] + b[2]) / 2,
];

const oneHot = (outcome: ArenaPrediction): ClassProbs => {
  const k = classIndex(outcome);
  return [k === 0 ? 1 : 0, k === 1 ? 1 : 0, k === 2 ? 1 : 0];
};

/** Multi-class Brier score: sum over classes of (p - o)^2, 0 (perfect) to 2. */
export const brierScore = (p: ClassProbs, outcome: ArenaPrediction): number => {
  const o = oneHot(outcome);
  return p.reduce((acc, pi, i) => acc + (pi - o[i]!) ** 2, 0);
};

/** Ranked probability score (Murphy 1970) over the cumulative distributions, normalised by K - 1 to 0..1. */
export const rankedProbabilityScore = (p: ClassProbs, outcome: ArenaPrediction): number => {
  const o = oneHot(outcome);
  let cumP = 0;
  let cumO = 0;
  let sum = 0;
  for (let i = 0; i < 2; i++) {
    cumP += p[i]!;
    cumO += o[i]!;
    sum += (cumP - cumO) ** 2;
  }
  return sum / 2;
};

/** 95% Wilson score interval for k hits out of n. */
export const wilsonInterval = (k: number, n: number, z = 1.96): { low: number; high: number } => {
  if (n === 0) return { low: 0, high: 1 };
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
};

export const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;
