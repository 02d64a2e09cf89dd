// The seeded synthetic crowd of simulated mode: deterministic from the seed and the round id, so reruns add the
// same voters with the same votes and times. Always labelled synthetic where it shows.
import type { ArenaPrediction } from '../../../schemas/common.ts';
import { ROUND_MS, type Round } from './rounds.ts';

export interface SyntheticVote {
  voterKey: string; // stable per round; hashed like any voter id before it is stored
  prediction: ArenaPrediction;
  at: number; // ms, in the hour before the round starts
}

/** FNV-1a, 32 bit: turns the seed and round id into a PRNG seed. */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
};

/** mulberry32: a small, well-mixed 32-bit generator; numbers in [0, 1). */
const mulberry32 = (seed: number): (() => number) => {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/**
 * 8-24 voters who all vote during the hour before the round starts (the rules count no vote cast later than the
 * grace period), leaning one way by a round-specific amount.
 */
export const syntheticCrowd = (seed: number, round: Round): SyntheticVote[] => {
  const rand = mulberry32(fnv1a(`${seed}:${round.id}`));
  const size = 8 + Math.floor(rand() * 17);
  const lean = rand() * 0.3 - 0.15;
  const pBull = 0.4 + lean;
  const pBear = 0.4 - lean;
  return Array.from({ length: size }, (_, i) => {
    const at = round.start - ROUND_MS + Math.floor(rand() * ROUND_MS);
    const u = rand();
    const prediction: ArenaPrediction = u < pBull ? 'BULLISH' : u < pBull + pBear ? 'BEARISH' : 'NEUTRAL';
    return { voterKey: `synthetic:${round.id}:${i}`, prediction, at };
  });
};
