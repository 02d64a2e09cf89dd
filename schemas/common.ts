// Shared building blocks of every published resource: constants, enums and small reusable shapes. Every object
// is strict (rejects unknown keys), so that no internal value can slip into a published file by accident.
import * as z from 'zod';
import { ARENA_PREDICTIONS, TRACKED_ASSETS } from './constants.ts';

export { ARENA_PREDICTIONS, TRACKED_ASSETS };
export const TrackedAsset = z.enum(TRACKED_ASSETS);
export type TrackedAsset = z.infer<typeof TrackedAsset>;
export const DEFAULT_REASONING_ASSET: TrackedAsset = 'BTC';

/**
 * Key of an asset map. Published output only ever holds the tracked assets; the key type is a symbol
 * pattern rather than the enum so that benchmarks can run synthetic universes through the same schemas.
 */
export const AssetSymbol = z.string().regex(/^[A-Z0-9]{2,12}$/, 'an upper-case asset symbol');

export const PROJECT = 'Educational Market Intelligence';
export const CATALOG_VERSION = '1.3.0';
/** Decision: regime and main brain carry the formal schema's "v1.3"; liquidity and derivatives "v1" (spec 9). */
export const SNAPSHOT_VERSION = 'v1.3';
export const LITE_VERSION = 'v1';
export const SCHEMA_VERSION = '1.3.0';
/** Decision: every free endpoint says "free_public" (the published examples); "public" is the access class. */
export const FREE_ACCESS = 'free_public';
export const CACHE_SECONDS = 60;
/**
 * How far ahead of a reader's clock a body's generation time may be (clock skew between hosts): beyond it the body's
 * age cannot be told, and it is neither sold (the paywall's `data_stale`) nor called fresh (the MCP tools).
 */
export const MAX_CLOCK_SKEW_SECONDS = 60;

/**
 * Digits grouped in threes with commas, as en-US prints them ("1000000" -> "1,000,000"). Written out rather than
 * `toLocaleString`, whose first call loads ICU's number formatting: about 17 ms of every command that reads a schema.
 */
export const groupThousands = (digits: string): string => digits.replace(/\B(?=(\d{3})+$)/g, ',');

export const DISCLAIMER =
  'Educational information only. This is not financial, investment, trading, tax, legal, betting, gambling or ' +
  'fund-management advice, gives no personalised recommendation and no guarantee of future outcomes. ' +
  'Confidence describes the strength and agreement of the available evidence, not certainty.';

/** The notice of the bodies that carry no `disclaimer` (arena, reasoning, history): the same scope, said shorter. */
export const EDUCATIONAL_NOTICE =
  'Educational market context only: not financial, investment, trading, tax, legal, betting, gambling or ' +
  'fund-management advice, no personalised recommendation and no guarantee of future outcomes. Do not treat any ' +
  'bias, consensus or score here as a recommendation to buy, sell or hold.';

/**
 * The notices published before this one, which the history's finished day files keep (a day file is never
 * rewritten once its day is over).
 */
export const EARLIER_EDUCATIONAL_NOTICES = [
  'Educational market context only, not advice. Do not treat any bias, consensus or score here as a ' +
    'recommendation to buy, sell or hold.',
] as const;

/** Where the numbers came from: a seeded simulation, live public venues, or a replay of recorded responses. */
export const DataMode = z.enum(['simulated', 'live', 'replay']);
export type DataMode = z.infer<typeof DataMode>;

export const Bias = z.enum(['bullish', 'bearish', 'neutral']);
export type Bias = z.infer<typeof Bias>;

export const IsoTimestamp = z.iso.datetime({ offset: false });
/** Confidence on a 0-100 scale: strength and agreement of the evidence, never certainty. */
export const Confidence = z.number().min(0).max(100);
/** A human-readable note of what is missing, mixed or estimated. */
export const Limitation = z.string().min(1);

/**
 * How every market-wide confidence (the main brain's average, the derivatives body's, the paid main brain's, the
 * atlas's overall) is taken from the assets' confidences; generator/engines/aggregate.ts applies it.
 */
export const MEAN_OVER_ALL_ASSETS_RULE =
  'the mean over all tracked assets, an asset without evidence (a null confidence) counting as 0, so that it ' +
  'never rises when an asset’s evidence goes missing; null when no asset has evidence';

/** What a published `price` is: the quote differs by venue, so the field says which. */
export const PRICE_MEANING =
  'last price in US dollars from one venue, the one the asset’s `price_source` names (in /api/main-brain.php): ' +
  'its last trade, or without a quote the close of its last hourly candle; a USDT pair on Binance spot (USDT taken ' +
  'at par with the dollar), a USD pair on Coinbase or Kraken, CoinGecko’s USD price; null when the asset has no data';

/** Freshness and provenance of one published snapshot (the `source` object of the free endpoints). */
export const SourceInfo = z
  .strictObject({
    mode: DataMode,
    provider: z
      .string()
      .describe('who produced the numbers, e.g. "seeded market simulator" or "public venues"'),
    simulated: z.boolean().describe('true when no number in this response is a real market observation'),
    venues: z.array(z.string()).describe('venues (or simulated venues) that supplied data for this run'),
    seed: z.number().int().nullable().describe('simulator seed; null for live and replay runs'),
    as_of: IsoTimestamp.describe('market time the snapshot describes'),
    generated_at: IsoTimestamp.describe('when the generator produced this file'),
    next_update_due: IsoTimestamp.describe('when the next scheduled run should replace this file'),
    cache_seconds: z.number().int().min(0),
    degraded: z.boolean().describe('true when some section lacked data and was published with limitations'),
  })
  .describe('freshness and provenance of this snapshot: data mode, provider, venues, seed and timestamps');
export type SourceInfo = z.infer<typeof SourceInfo>;

export const AgentGuidance = z.strictObject({
  recommended_for: z.array(z.string()),
  when_to_use: z.string(),
  when_not_to_use: z.string(),
  next_step: z.string(),
});

/** A link to a related resource, always relative to the service's base URL. */
export const ResourceLink = z.strictObject({
  path: z.string().startsWith('/'),
  description: z.string(),
});
export const ResourceLinks = z.record(z.string(), ResourceLink);

/**
 * How much market data one asset had this run. `unavailable`: no price and no evidence at all (every venue failed
 * or lacked the asset), so every reading of the entry is null and a limitation says why; `partial`: some section
 * was missing or touched by a collection issue; `available`: every section came in clean.
 */
export const DataStatus = z.enum(['available', 'partial', 'unavailable']);
export type DataStatus = z.infer<typeof DataStatus>;

/** Availability of a published snapshot: "degraded" when a section lacked data or came in weaker; each reason is a limitation. */
export const SnapshotStatus = z.enum(['available', 'degraded']);
export type SnapshotStatus = z.infer<typeof SnapshotStatus>;

/** Arena classes, ordered bearish < neutral < bullish: a vote, a resolved outcome or the brain's call. */
export const ArenaPrediction = z.enum(ARENA_PREDICTIONS);
export type ArenaPrediction = z.infer<typeof ArenaPrediction>;
/** The crowd's reading (NONE without votes) or the brain's call (NONE when it had no call). */
export const ArenaReading = z.enum([...ARENA_PREDICTIONS, 'NONE']);
export type ArenaReading = z.infer<typeof ArenaReading>;
