// The plain constants behind the shared enums, without zod, so that browser code (the arena vote form) can use
// the same lists as the generator without bundling a schema library. schemas/common.ts builds the enums on them.

/** The seven tracked assets, in the order the spec lists them. */
export const TRACKED_ASSETS = ['BTC', 'ETH', 'XRP', 'SOL', 'ALGO', 'XLM', 'HBAR'] as const;
export type TrackedAsset = (typeof TRACKED_ASSETS)[number];

/** Arena classes, ordered bearish < neutral < bullish: a vote, a resolved outcome or the brain's call. */
export const ARENA_PREDICTIONS = ['BULLISH', 'BEARISH', 'NEUTRAL'] as const;
export type ArenaPrediction = (typeof ARENA_PREDICTIONS)[number];
