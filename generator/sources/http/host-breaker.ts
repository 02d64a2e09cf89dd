// A per-run circuit breaker per venue host. A host that keeps failing the same way is not called again this run, so
// its calls fail at once and their sections fall back to the next venue instead of spending the run's deadline:
// - unreachable (refused, unresolvable): after as many attempts in a row as one call may make, since one refusal may
//   be a restart but that many mean nothing listens;
// - timed out: after a few timeouts in a row, since each costs a whole `http.timeoutMs` and a slow venue would
//   otherwise take every call's retries (15 calls x 3 attempts x 10 s at 4 in flight outlast the run's deadline).
// Counts run across the calls side by side; any HTTP answer resets them. A reset connection counts toward neither.
import type { TransportResponse } from '../transport.ts';
import { VENUE_BASE_URLS, VENUE_IDS } from '../venues.ts';

/** Timeouts in a row after which a host is skipped for the rest of the run. */
export const TIMEOUTS_TO_SKIP_HOST = 2;

/** An attempt that got no answer within its timeout. */
export class TimedOut extends Error {
  override readonly name = 'TimedOut';
}

/**
 * A call not made, or not retried, because its host is skipped for the rest of the run. `venue` and `reason` let a
 * collector name the skip once for the whole run.
 */
export class HostSkipped extends Error {
  override readonly name = 'HostSkipped';

  constructor(
    message: string,
    readonly venue: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Connection errors that say nothing listens at the host, or it cannot be found or reached: unlike a reset or a
 * timeout, the next attempt would meet the same.
 */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

const isUnreachable = (error: Error): boolean => {
  const code = ((error.cause as { cause?: { code?: unknown } } | undefined)?.cause?.code ?? '') as string;
  return UNREACHABLE_CODES.has(code);
};

const VENUE_BY_HOST = new Map<string, string>(VENUE_IDS.map((id) => [new URL(VENUE_BASE_URLS[id]).host, id]));

/** The venue id of a canonical host, for messages a reader can act on ("binance-spot", not "api.binance.com"). */
const venueOf = (host: string): string => VENUE_BY_HOST.get(host) ?? host;

interface Skip {
  venue: string;
  /** Why the host is skipped, on its own. */
  reason: string;
  /** For a call not made: the whole issue. */
  notCalled: string;
  /** Appended to the last error of a call whose retry is not made. */
  notRetried: string;
}

export interface HostBreakerOptions {
  /** Unreachable attempts in a row that close a host: as many as one call may make. */
  unreachableToSkip: number;
  timeoutsToSkip: number;
  timeoutMs: number;
}

export class HostBreaker {
  private readonly unreachableInARow = new Map<string, number>();
  private readonly timeoutsInARow = new Map<string, number>();
  private readonly skipped = new Map<string, Skip>();

  constructor(private readonly options: HostBreakerOptions) {}

  isSkipped(host: string): boolean {
    return this.skipped.has(host);
  }

  /**
   * Throws when the host is skipped: called when a call's turn comes, so calls queued behind the host's budget fail
   * at once. `previous` is the call's last failed attempt, when this turn is a retry.
   */
  check(host: string, previous?: TransportResponse | Error): void {
    const skip = this.skipped.get(host);
    if (!skip) return;
    throw previous instanceof Error
      ? this.notRetried(host, previous)
      : new HostSkipped(skip.notCalled, skip.venue, skip.reason);
  }

  /** The error of a call whose last attempt failed and whose retry is not made since its host is skipped. */
  notRetried(host: string, last: Error): Error {
    const skip = this.skipped.get(host);
    if (!skip) return last;
    return new HostSkipped(`${last.message}; ${skip.notRetried}`, skip.venue, skip.reason, { cause: last });
  }

  /** Notes an attempt's outcome, and returns it. The first reason to skip a host is the one kept. */
  noted<T extends TransportResponse | Error>(host: string, outcome: T): T {
    if (!(outcome instanceof Error)) {
      this.unreachableInARow.delete(host);
      this.timeoutsInARow.delete(host);
    } else if (isUnreachable(outcome)) {
      if (this.counted(this.unreachableInARow, host) >= this.options.unreachableToSkip)
        this.skip(host, unreachableSkip(venueOf(host), outcome));
    } else if (outcome instanceof TimedOut) {
      const timeouts = this.counted(this.timeoutsInARow, host);
      if (timeouts >= this.options.timeoutsToSkip)
        this.skip(host, timeoutSkip(venueOf(host), timeouts, this.options.timeoutMs));
    }
    return outcome;
  }

  private counted(counts: Map<string, number>, host: string): number {
    const count = (counts.get(host) ?? 0) + 1;
    counts.set(host, count);
    return count;
  }

  private skip(host: string, skip: Skip): void {
    if (!this.skipped.has(host)) this.skipped.set(host, skip);
  }
}

/** Worded as before the breaker took timeouts too: the error, then "not called again this run". */
function unreachableSkip(venue: string, error: Error): Skip {
  const reason = `${venue} skipped for this run: ${error.message}`;
  return {
    venue,
    reason,
    notCalled: `${error.message}; not called again this run`,
    notRetried: 'not called again this run',
  };
}

function timeoutSkip(venue: string, timeouts: number, timeoutMs: number): Skip {
  const reason = `${venue} skipped for this run after ${timeouts} timeouts in a row (${timeoutMs} ms each)`;
  return { venue, reason, notCalled: `not called: ${reason}`, notRetried: `not retried: ${reason}` };
}
