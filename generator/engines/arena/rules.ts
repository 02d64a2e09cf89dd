// The arena's written rules, in one place: when a vote counts, which price a round is measured from, how a
// split crowd reads. The docs page (site/docs/arena-rules.njk) and the schema descriptions quote these.
import { iso } from '../clock.ts';
import { ENTRY_WINDOW_MINUTES, ROUND_MS, roundByIndex, type Round } from './rounds.ts';

/** Where every published arena figure points for the rules behind it (site-relative). */
export const RULES_URL = '/docs/arena-rules/';

/**
 * A vote counts only if the server received it before its round opened or within this grace period after the
 * start (network delay, clocks a few seconds apart). After that the round is closed to votes: the price has
 * started to move and a late vote would be a look at the answer.
 */
export const VOTE_GRACE_SECONDS = 60;
const GRACE_MS = VOTE_GRACE_SECONDS * 1000;

/** How far ahead a vote may be cast: the next full rotation (one round of every asset). */
export const VOTE_HORIZON_ROUNDS = 7;

export const VOTE_RULE =
  `A vote counts only if the server received it (by its own clock) before the round started or less than ` +
  `${VOTE_GRACE_SECONDS} seconds after the start; the voter's own timestamp is never used. One vote per voter ` +
  `per round; votes open up to ${VOTE_HORIZON_ROUNDS} rounds ahead.`;

export const REFERENCE_PRICE_RULE =
  'The reference price of a round is the first price the generator saw at or after the round start, by the ' +
  "price's own time (the venue's ticker time, or the close of an hourly candle), within " +
  `${ENTRY_WINDOW_MINUTES} minutes of the start: the first run of the round records the brain call, and when its ` +
  'price is older than the start a later run of those minutes brings the reference price; when none does, the ' +
  'round is voided.';

export const TIE_RULE =
  'When two or three classes share the most votes the crowd makes no call (consensus NONE, call_status "tie"): ' +
  'a tie is left out of crowd accuracy and counted separately as a no-call round.';

export const COMBINED_TIE_RULE =
  'The combined view (equal-weight average of the brain and human crowd probabilities) calls its most probable ' +
  'class, compared at the 4 decimals published in combined_probabilities. When two or three classes share the top ' +
  'it makes no call (combined_call_status "tie"; combined_lean then shows NEUTRAL, the middle class, only to keep ' +
  "the field's values unchanged): a tie is left out of the combined hit rate and counted in " +
  'teacher_brain.metrics.combined_no_call_rounds; its Brier, RPS and skill scores still count.';

export const ROUNDING_RULE =
  'Percentages are in tenths by the largest-remainder method, made fair: equal counts always get equal shares. ' +
  'Leftover tenths go to classes with the largest remainders (the larger count first on equal remainders), classes ' +
  'with equal counts only together; among ' +
  'the fair hand-outs that make exactly 100.0 the one closest to the exact shares is taken. Only when none exists ' +
  '(1/1/1 votes: 33.3 each; 1/1/14: 6.2, 6.2, 87.5) the total is 99.9 and rounding_residual_percent says so; no ' +
  'share is ever off its exact value by a tenth or more.';

/** When `round` closes to votes: a vote counts only if the server received it before this time. */
export const votesCloseAt = (round: Round): number => round.start + GRACE_MS;

/** Whether a vote that the server received at `receivedAt` may count in `round`. */
export const voteWindowProblem = (round: Round, receivedAt: number): string | null => {
  if (receivedAt >= round.start + GRACE_MS) {
    return `round ${round.id} started at ${iso(round.start)} and closed to votes ${VOTE_GRACE_SECONDS} s later`;
  }
  if (round.start - receivedAt > VOTE_HORIZON_ROUNDS * ROUND_MS) {
    return `round ${round.id} is more than ${VOTE_HORIZON_ROUNDS} rounds ahead; votes for it are not open yet`;
  }
  return null;
};

/** The round of `asset` that takes votes at `ms`: the open one inside its grace period, else the next one. */
export const votingRoundFor = (asset: string, ms: number): Round | null => {
  const first = Math.floor((ms - GRACE_MS) / ROUND_MS) + 1;
  for (let index = first; index < first + VOTE_HORIZON_ROUNDS; index++) {
    const round = roundByIndex(index);
    if (round.asset === asset && voteWindowProblem(round, ms) === null) return round;
  }
  return null;
};

/** Parses a round id back into its round; null for ids the schedule never produces. */
export const roundFromId = (id: string): Round | null => {
  const m = /^([A-Z]+)-(\d{4})(\d{2})(\d{2})T(\d{2})Z$/.exec(id);
  if (!m) return null;
  const start = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]), Number(m[5]));
  const round = roundByIndex(Math.floor(start / ROUND_MS));
  return round.id === id ? round : null;
};
