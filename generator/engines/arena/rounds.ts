// The arena's deterministic round schedule: 60-minute rounds aligned to the UTC hour, the asset rotating through
// the seven tracked assets in spec order by the round's index since the Unix epoch.
import { TRACKED_ASSETS, type TrackedAsset } from '../../../schemas/constants.ts';
import type { RoundInfo } from '../../../schemas/arena.ts';
import { iso } from '../clock.ts';

export const ROUND_MINUTES = 60;
export const ROUND_MS = ROUND_MINUTES * 60_000;
/** The brain's call is recorded by the first run inside this many minutes of a round's start, never later. */
export const ENTRY_WINDOW_MINUTES = 15;
/** A round is resolved by the first run inside this many minutes of its end; later the price is stale: voided. */
export const RESOLVE_WINDOW_MINUTES = 15;
export const SCHEDULE_ALIGNMENT =
  `${ROUND_MINUTES}-minute rounds aligned to the UTC hour; round k starts at k x ${ROUND_MINUTES} minutes after ` +
  `the Unix epoch and plays asset k mod 7 in the order BTC, ETH, XRP, SOL, ALGO, XLM, HBAR.`;

export interface Round {
  index: number; // floor(start / ROUND_MS)
  id: string;
  asset: TrackedAsset;
  start: number; // ms, inclusive
  end: number; // ms, exclusive
}

export const assetForRound = (index: number): TrackedAsset =>
  TRACKED_ASSETS[((index % TRACKED_ASSETS.length) + TRACKED_ASSETS.length) % TRACKED_ASSETS.length]!;

/** "BTC-20250101T10Z": readable, sortable per asset, and unique because an index fixes both hour and asset. */
export const roundId = (asset: string, startMs: number): string => {
  const s = iso(startMs);
  return `${asset}-${s.slice(0, 4)}${s.slice(5, 7)}${s.slice(8, 10)}T${s.slice(11, 13)}Z`;
};

export const roundByIndex = (index: number): Round => {
  const start = index * ROUND_MS;
  const asset = assetForRound(index);
  return { index, id: roundId(asset, start), asset, start, end: start + ROUND_MS };
};

/** The round whose window [start, end) holds the given time. */
export const roundAt = (ms: number): Round => roundByIndex(Math.floor(ms / ROUND_MS));

/** Whole seconds left, rounded up, so a round shows 00:01 in its last second and 60:00 at its first instant. */
export const secondsLeft = (round: Round, ms: number): number =>
  Math.max(0, Math.ceil((round.end - ms) / 1000));

export const formatTimer = (seconds: number): string => {
  const mm = Math.floor(seconds / 60);
  const ss = seconds % 60;
  return `${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}`;
};

export const roundInfo = (round: Round, ms: number): RoundInfo => {
  const left = secondsLeft(round, ms);
  return {
    round_id: round.id,
    asset: round.asset,
    start: iso(round.start),
    end: iso(round.end),
    seconds_left: left,
    timer: formatTimer(left),
  };
};
