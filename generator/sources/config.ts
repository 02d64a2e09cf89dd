// Configuration of market-data sources: a JSON file (path via --config or EMI_CONFIG) and environment variables
// over built-in defaults. Everything is validated by zod; a wrong venue name or a typo'd key stops the run early.
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { DEFAULT_LIVE_ORDER, venuesFor } from './adapters/plan.ts';
import type { SourceOrder } from './adapters/plan.ts';
import { SECTION_NAMES } from './adapters/source.ts';
import { DEFAULT_CANDLE_LIMIT, DEFAULT_CONCURRENCY } from './collect.ts';
import { FUNDING_DISAGREEMENT_PCT_8H } from './funding-check.ts';
import type { SectionName } from './adapters/source.ts';
import { VENUE_BASE_URLS, VENUE_IDS, venueDescriptor } from './venues.ts';
import type { VenueId } from './venues.ts';

const Venue = z.enum(VENUE_IDS);
const PositiveInt = z.number().int().positive();
const VenueList = z.array(Venue).min(1).readonly();

const VenueSettings = z.strictObject({
  /** Where to send this venue's calls instead of its public origin (a mirror, a market-data-only host). */
  baseUrl: z.url().optional(),
  concurrency: PositiveInt.optional(),
  requestsPerSecond: z.number().positive().optional(),
});

/**
 * The longest one HTTP request may wait (ms): 10 minutes. Node holds a timer of at most 2^31-1 ms (about 24.8 days) and
 * fires a longer one after 1 ms, so a larger value failed every request at once ("skipped after 2 timeouts in a
 * row"); and a venue that has not answered in 10 minutes is down for a run published every minute.
 */
export const MAX_HTTP_TIMEOUT_MS = 600_000;

/** A wait in ms that Node's timers hold: timeouts and the waits between attempts. */
const TimerMs = z.number().int().max(MAX_HTTP_TIMEOUT_MS, `at most ${MAX_HTTP_TIMEOUT_MS} ms (10 minutes)`);

const HttpSettings = z.strictObject({
  timeoutMs: TimerMs.positive().optional(),
  retries: z.number().int().min(0).max(10).optional(),
  backoffMs: TimerMs.positive().optional(),
  maxBackoffMs: TimerMs.positive().optional(),
  maxRetryAfterMs: TimerMs.min(0).optional(),
  /** Per venue host, unless the venue sets its own. */
  concurrency: PositiveInt.optional(),
  requestsPerSecond: z.number().positive().optional(),
  userAgent: z.string().min(1).optional(),
});

export const SourcesConfigInput = z.strictObject({
  venues: z.partialRecord(Venue, VenueSettings).optional(),
  http: HttpSettings.optional(),
  /** Fallback order per kind of data, e.g. {"ticker": ["coinbase", "kraken"]}. */
  order: z
    .strictObject({
      candles: VenueList.optional(),
      ticker: VenueList.optional(),
      book: VenueList.optional(),
      funding: VenueList.optional(),
      openInterest: VenueList.optional(),
      liquidations: VenueList.optional(),
    })
    .optional(),
  /** Venue calls in flight at once across the whole run. */
  concurrency: PositiveInt.optional(),
  /** Closed hourly bars per asset; under 481 the regime's volatility rank reads a shorter window (named). */
  candleLimit: z.number().int().min(24).max(1000).optional(),
  /** A cross-venue price gap above this (percent) is reported as a limitation. */
  priceDisagreementPct: z.number().positive().optional(),
  /** Two venues' funding rates further apart than this (percentage points per 8 h) are reported as a limitation. */
  fundingDisagreementPct8h: z.number().positive().optional(),
  /**
   * Estimate liquidations from open-interest drops where no venue reports them (labelled as estimates; default off:
   * an upper bound that counts voluntary closes too, orders of magnitude above observed liquidations).
   */
  estimateLiquidations: z.boolean().optional(),
  /** Seed of the retry jitter. */
  jitterSeed: z.number().int().optional(),
});
export type SourcesConfigInput = z.infer<typeof SourcesConfigInput>;

export interface SourcesConfig {
  venues: Record<VenueId, { baseUrl: string; concurrency: number; requestsPerSecond: number }>;
  http: {
    timeoutMs: number;
    retries: number;
    backoffMs: number;
    maxBackoffMs: number;
    maxRetryAfterMs: number;
    userAgent: string;
  };
  order: SourceOrder;
  concurrency: number;
  candleLimit: number;
  priceDisagreementPct: number;
  fundingDisagreementPct8h: number;
  estimateLiquidations: boolean;
  jitterSeed: number;
}

export const DEFAULT_HTTP = {
  timeoutMs: 10_000,
  retries: 2,
  backoffMs: 500,
  maxBackoffMs: 8_000,
  maxRetryAfterMs: 30_000,
  concurrency: 4,
  requestsPerSecond: 8,
  userAgent: 'educational-market-intelligence/1 (keyless public market data)',
} as const;

export const DEFAULT_PRICE_DISAGREEMENT_PCT = 1;

/** `EMI_SOURCE_ORDER_OPEN_INTEREST` for `openInterest`. */
export const orderEnvName = (section: SectionName): string =>
  `EMI_SOURCE_ORDER_${section.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
/** `EMI_VENUE_URL_BINANCE_SPOT` for `binance-spot`. */
export const venueUrlEnvName = (venue: VenueId): string =>
  `EMI_VENUE_URL_${venue.replace(/-/g, '_').toUpperCase()}`;

type Env = Readonly<Record<string, string | undefined>>;

/** Edit distance (insertions, deletions, substitutions) between two names. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known names `name` was probably meant to be: the same name in upper case or with `_` for `-`, names it is
 * the start of (EMI_VENUE_URL_BINANCE: BINANCE_SPOT, BINANCE_USDM), else the nearest within two edits.
 */
function closeNames(name: string, known: readonly string[], prefix: string): string[] {
  const typed = name.slice(prefix.length).toUpperCase().replace(/-/g, '_');
  const suffixes = known.map((k) => k.slice(prefix.length));
  const exact = suffixes.filter((s) => s === typed || s.replace(/_/g, '') === typed.replace(/_/g, ''));
  if (exact.length > 0) return exact.map((s) => prefix + s);
  const extended = suffixes.filter((s) => s.startsWith(`${typed}_`));
  if (typed && extended.length > 0) return extended.map((s) => prefix + s);
  const distances = suffixes.map((s) => editDistance(typed, s));
  const nearest = Math.min(...distances);
  return nearest <= 2 ? suffixes.filter((_, i) => distances[i] === nearest).map((s) => prefix + s) : [];
}

/**
 * Throws on a set variable that starts with `prefix` but is none of `known` (a typo would otherwise be ignored, while
 * the same typo in the file is refused): one line naming the close matches and the known names.
 */
function refuseUnknownNames(env: Env, prefix: string, known: readonly string[], kind: string): void {
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith(prefix) && env[name] && !known.includes(name))
    .sort();
  const [first] = unknown;
  if (first === undefined) return;
  const close = closeNames(first, known, prefix);
  const hint = close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : '';
  const more = unknown.length > 1 ? ` (and ${unknown.slice(1).join(', ')})` : '';
  throw new Error(
    `invalid source configuration in environment: unknown variable ${first}${hint}${more}; ` +
      `the ${kind} variables are ${known.join(', ')}`,
  );
}

const numberFrom = (value: string | undefined): number | undefined =>
  value === undefined || value.trim() === '' ? undefined : Number(value);

/**
 * Throws one line naming EMI_HTTP_TIMEOUT_MS, its value and the range when it is a number of ms above the maximum
 * (zod's line would name the file's key, http.timeoutMs, not the variable); other bad values are zod's to refuse.
 */
function refuseHttpTimeoutAboveMaximum(env: Env): void {
  const raw = env.EMI_HTTP_TIMEOUT_MS;
  const value = numberFrom(raw);
  if (value === undefined || !(value > MAX_HTTP_TIMEOUT_MS)) return;
  throw new Error(
    'invalid source configuration in environment: EMI_HTTP_TIMEOUT_MS must be a positive whole number of ms, at ' +
      `most ${MAX_HTTP_TIMEOUT_MS} (10 minutes for one request): ${JSON.stringify(raw)}`,
  );
}

/** The environment's settings, in the file's shape (so the same schema checks them). */
export function configFromEnv(env: Env): SourcesConfigInput {
  refuseUnknownNames(env, 'EMI_VENUE_URL_', VENUE_IDS.map(venueUrlEnvName), 'venue URL');
  refuseUnknownNames(env, 'EMI_SOURCE_ORDER_', SECTION_NAMES.map(orderEnvName), 'source order');
  refuseHttpTimeoutAboveMaximum(env);
  const order = Object.fromEntries(
    SECTION_NAMES.flatMap((section) => {
      const value = env[orderEnvName(section)];
      return value
        ? [
            [
              section,
              value
                .split(',')
                .map((v) => v.trim())
                .filter(Boolean),
            ],
          ]
        : [];
    }),
  );
  const venues = Object.fromEntries(
    VENUE_IDS.flatMap((venue) => {
      const baseUrl = env[venueUrlEnvName(venue)];
      return baseUrl ? [[venue, { baseUrl }]] : [];
    }),
  );
  const http = Object.fromEntries(
    Object.entries(HTTP_ENV_NAMES)
      .map(([key, name]) => [key, numberFrom(env[name])] as const)
      .filter(([, v]) => v !== undefined),
  );
  const raw = {
    venues,
    order,
    http,
    ...Object.fromEntries(Object.entries(TOP_ENV_NAMES).map(([key, name]) => [key, numberFrom(env[name])])),
  };
  const result = SourcesConfigInput.safeParse(raw);
  if (result.success) return result.data;
  // Said by the variable the operator set, with its value, not by the file's key it stands for (`order.ticker[1]`).
  const problems = result.error.issues.map((issue) => {
    const name = envNameOf(issue.path);
    const value = env[name];
    if (value === undefined) return `${name}: ${issue.message}`;
    const plainly =
      issue.code !== 'invalid_type'
        ? issue.message
        : issue.expected === 'int'
          ? 'not a whole number'
          : issue.expected === 'number' && Number.isNaN(Number(value))
            ? 'not a number'
            : issue.message;
    return `${name}: ${plainly}: ${JSON.stringify(value)}`;
  });
  throw new Error(`invalid source configuration in environment: ${[...new Set(problems)].join('; ')}`);
}

/** The variables of the `http` settings and of the top-level ones, by the key each stands for. */
const HTTP_ENV_NAMES = {
  timeoutMs: 'EMI_HTTP_TIMEOUT_MS',
  retries: 'EMI_HTTP_RETRIES',
  concurrency: 'EMI_HTTP_CONCURRENCY',
  requestsPerSecond: 'EMI_HTTP_RPS',
} as const;
const TOP_ENV_NAMES = {
  concurrency: 'EMI_SOURCE_CONCURRENCY',
  priceDisagreementPct: 'EMI_PRICE_DISAGREEMENT_PCT',
  fundingDisagreementPct8h: 'EMI_FUNDING_DISAGREEMENT_PCT_8H',
} as const;

/** The variable that gave the value at `path` of the file's shape. */
function envNameOf(path: readonly PropertyKey[]): string {
  const [first, second] = path.map(String);
  if (first === 'venues' && second) return venueUrlEnvName(second as VenueId);
  if (first === 'order' && second) return orderEnvName(second as SectionName);
  if (first === 'http' && second && second in HTTP_ENV_NAMES)
    return HTTP_ENV_NAMES[second as keyof typeof HTTP_ENV_NAMES];
  if (first && first in TOP_ENV_NAMES) return TOP_ENV_NAMES[first as keyof typeof TOP_ENV_NAMES];
  return path.join('.');
}

function parseInput(raw: unknown, origin: string): SourcesConfigInput {
  const result = SourcesConfigInput.safeParse(raw);
  if (!result.success)
    throw new Error(`invalid source configuration in ${origin}: ${z.prettifyError(result.error)}`);
  return result.data;
}

/** The file holds the project's configuration; this module reads its `sources` part (other keys belong to others). */
const ConfigFile = z.looseObject({ sources: z.unknown().optional() });

export async function readConfigFile(path: string): Promise<SourcesConfigInput> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read configuration ${path}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`configuration ${path} is not valid JSON`);
  }
  const file = ConfigFile.safeParse(json);
  if (!file.success) throw new Error(`configuration ${path} is not a JSON object`);
  return parseInput(file.data.sources ?? {}, `${path} (sources)`);
}

/** Later layers win, key by key (an order given for one section leaves the others at their defaults). */
export function resolveConfig(...layers: SourcesConfigInput[]): SourcesConfig {
  const pick = <T>(get: (layer: SourcesConfigInput) => T | undefined, fallback: T): T =>
    layers.reduce<T>((value, layer) => get(layer) ?? value, fallback);
  const http = {
    timeoutMs: pick((l) => l.http?.timeoutMs, DEFAULT_HTTP.timeoutMs),
    retries: pick((l) => l.http?.retries, DEFAULT_HTTP.retries),
    backoffMs: pick((l) => l.http?.backoffMs, DEFAULT_HTTP.backoffMs),
    maxBackoffMs: pick((l) => l.http?.maxBackoffMs, DEFAULT_HTTP.maxBackoffMs),
    maxRetryAfterMs: pick((l) => l.http?.maxRetryAfterMs, DEFAULT_HTTP.maxRetryAfterMs),
    userAgent: pick((l) => l.http?.userAgent, DEFAULT_HTTP.userAgent),
  };
  const hostConcurrency = pick((l) => l.http?.concurrency, DEFAULT_HTTP.concurrency);
  const hostRate = pick((l) => l.http?.requestsPerSecond, undefined as number | undefined);
  const venues = Object.fromEntries(
    VENUE_IDS.map((venue) => [
      venue,
      {
        baseUrl: pick((l) => l.venues?.[venue]?.baseUrl, VENUE_BASE_URLS[venue]),
        concurrency: pick((l) => l.venues?.[venue]?.concurrency, hostConcurrency),
        requestsPerSecond: pick(
          (l) => l.venues?.[venue]?.requestsPerSecond,
          hostRate ?? venueDescriptor(venue).requestsPerSecond ?? DEFAULT_HTTP.requestsPerSecond,
        ),
      },
    ]),
  ) as SourcesConfig['venues'];
  const order = Object.fromEntries(
    SECTION_NAMES.map((section) => {
      const venuesInOrder = pick((l) => l.order?.[section], DEFAULT_LIVE_ORDER[section]);
      const unknown = venuesInOrder.filter((venue) => !venuesFor(section).includes(venue));
      if (unknown.length > 0) {
        throw new Error(
          `${unknown.join(', ')} cannot serve ${section}: choose from ${venuesFor(section).join(', ')}`,
        );
      }
      return [section, venuesInOrder];
    }),
  ) as unknown as SourceOrder;
  return {
    venues,
    http,
    order,
    concurrency: pick((l) => l.concurrency, DEFAULT_CONCURRENCY),
    candleLimit: pick((l) => l.candleLimit, DEFAULT_CANDLE_LIMIT),
    priceDisagreementPct: pick((l) => l.priceDisagreementPct, DEFAULT_PRICE_DISAGREEMENT_PCT),
    fundingDisagreementPct8h: pick((l) => l.fundingDisagreementPct8h, FUNDING_DISAGREEMENT_PCT_8H),
    // Off unless asked for: open-interest drops count every closed position, not forced ones (liquidation-estimate.ts).
    estimateLiquidations: pick((l) => l.estimateLiquidations, false),
    jitterSeed: pick((l) => l.jitterSeed, 1),
  };
}

/** Defaults, then the file (--config or EMI_CONFIG), then the environment, then values given in code (tests). */
export async function loadSourcesConfig(options: {
  file?: string;
  env?: Env;
  overrides?: SourcesConfigInput;
}): Promise<SourcesConfig> {
  const env = options.env ?? process.env;
  const file = options.file ?? env.EMI_CONFIG;
  const fromFile = file ? await readConfigFile(file) : {};
  return resolveConfig(fromFile, configFromEnv(env), parseInput(options.overrides ?? {}, 'code'));
}
