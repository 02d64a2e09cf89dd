// Reads a pre-generated paid file and what a buyer must know before paying for it: its data mode and when it was
// generated. A file is re-read only when the store's version token changes (or, for stores without one, once per
// `cacheMs`), and validated only when its bytes change: an unpaid request costs a lookup, not a parse.
//
// An unpaid request (`known`) trusts a version confirmed less than CONFIRMED_FOR_MS ago: under load one `stat`
// then serves every challenge of that millisecond, and a challenge is never older than a loopback round trip.
// A request with a payment always goes through `load`, which asks the store every time.
import { MAX_CLOCK_SKEW_SECONDS } from '../../schemas/common.ts';
import type { DataMode } from '../../schemas/common.ts';
import type { PaidResource } from '../../schemas/resources.ts';
import type { PaidFileStorage } from '../storage.ts';

export interface PaidFile {
  text: string;
  mode: DataMode;
  /** ISO time the data was generated (the body's `updated`). */
  generatedAt: string;
}

export type PaidFileState =
  { ok: true; file: PaidFile } | { ok: false; cause: 'missing' | 'unreadable' | 'invalid'; detail: string };

const MODES: readonly DataMode[] = ['simulated', 'live', 'replay'];

function facts(body: unknown): { mode: DataMode; generatedAt: string } | null {
  const record = body as Record<string, unknown>;
  const layer = record.intelligence_layer as Record<string, unknown> | undefined;
  const mode = record.source_mode ?? layer?.source_mode;
  const updated = record.updated;
  if (!MODES.includes(mode as DataMode) || typeof updated !== 'string') return null;
  return { mode: mode as DataMode, generatedAt: updated };
}

/** How long a version the store confirmed stands for an unpaid request (ms). */
export const CONFIRMED_FOR_MS = 1;

export class PaidFileReader {
  private readonly cache = new Map<
    string,
    {
      state: PaidFileState;
      text: string | null;
      readAt: number;
      version: string | null | undefined;
      /** Monotonic time the store last confirmed `version`. */
      confirmedAt: number;
    }
  >();

  constructor(
    private readonly storage: PaidFileStorage,
    private readonly cacheMs = 1000,
    private readonly now: () => number = Date.now,
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {}

  async load(resource: PaidResource): Promise<PaidFileState> {
    const cached = this.cache.get(resource.file);
    let text: string | null;
    let version: string | null | undefined;
    const confirmedAt = this.monotonicNow();
    try {
      version = this.storage.versionNow
        ? this.storage.versionNow(resource.file)
        : await this.storage.version?.(resource.file);
      const unchanged =
        version === undefined
          ? this.now() - (cached?.readAt ?? -Infinity) < this.cacheMs
          : version === cached?.version;
      if (cached && unchanged) return cached.state;
      text = await this.storage.read(resource.file);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { ok: false, cause: 'unreadable', detail };
    }
    const state = cached && text === cached.text ? cached.state : this.check(resource, text);
    this.cache.set(resource.file, { state, text, readAt: this.now(), version, confirmedAt });
    return state;
  }

  /**
   * The file's state when it is known without waiting: read before, and the store confirms synchronously that it has
   * not changed since. Undefined whenever that cannot be said at once (a store without `versionNow`, a file never
   * read, changed or unreadable); `load` then finds out.
   */
  known(resource: PaidResource): PaidFileState | undefined {
    const cached = this.cache.get(resource.file);
    if (!cached || !this.storage.versionNow) return undefined;
    const at = this.monotonicNow();
    if (at - cached.confirmedAt < CONFIRMED_FOR_MS) return cached.state;
    try {
      if (this.storage.versionNow(resource.file) !== cached.version) return undefined;
    } catch {
      return undefined;
    }
    cached.confirmedAt = at;
    return cached.state;
  }

  private check(resource: PaidResource, text: string | null): PaidFileState {
    if (text === null) return { ok: false, cause: 'missing', detail: `${resource.file} does not exist` };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { ok: false, cause: 'invalid', detail: `${resource.file} is not JSON` };
    }
    const parsed = resource.schema.safeParse(body);
    const known = parsed.success ? facts(body) : null;
    if (!known) return { ok: false, cause: 'invalid', detail: `${resource.file} fails its schema` };
    return { ok: true, file: { text, ...known } };
  }
}

export interface FreshnessPolicy {
  /** Sell simulated or replayed data (development only): the 402 and the body then say so. */
  allowSimulated: boolean;
  /** Refuse to sell a body generated longer ago than this. */
  maxAgeSeconds: number;
}

/** True of a request without a payment and of one whose payment is refused for this reason alike. */
const NOTHING_TAKEN = 'no payment was taken (a payment sent with this request was not settled)';

/** Why a file may not be sold right now, in words for the buyer; null when it may. */
export function freshnessRefusal(
  file: PaidFile,
  policy: FreshnessPolicy,
  nowMs: number,
): { error: string; message: string } | null {
  if (file.mode !== 'live' && !policy.allowSimulated) {
    return {
      error: 'data_not_live',
      message: `This report is built from ${file.mode} data, which this service does not sell; ${NOTHING_TAKEN}.`,
    };
  }
  const ageSeconds = Math.round((nowMs - Date.parse(file.generatedAt)) / 1000);
  // A file dated ahead of this clock (a skewed generator host, an --as-of in the future) would count as fresh for
  // longer than it is: beyond a minute of skew it is refused as a stale one is.
  if (ageSeconds < -MAX_CLOCK_SKEW_SECONDS) {
    return {
      error: 'data_stale',
      message:
        `This report is dated ${-ageSeconds} s ahead of this service's clock (${file.generatedAt}), so its age ` +
        `cannot be told; ${NOTHING_TAKEN}. Check the clocks of the generator and the paywall.`,
    };
  }
  if (!(ageSeconds <= policy.maxAgeSeconds)) {
    return {
      error: 'data_stale',
      message:
        `This report was generated ${ageSeconds} s ago (${file.generatedAt}), past the ${policy.maxAgeSeconds} s ` +
        `this service sells; ${NOTHING_TAKEN}. Try again after the next update.`,
    };
  }
  return null;
}

/**
 * A body kept by the payment book, read as the paid file it was (its data mode and generation time), or null when
 * it states neither. It was checked against its schema when it was offered.
 */
export function paidFileOfBody(text: string): PaidFile | null {
  try {
    const known = facts(JSON.parse(text));
    return known ? { text, ...known } : null;
  } catch {
    return null;
  }
}
