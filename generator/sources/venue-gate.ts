// Venues that refused this run: a 451 (legal restriction, Binance), a 418 (Binance IP ban) or a 403 without a
// rate-limit code (Bybit's country block, CloudFront; Bybit's IP ban "access too frequent") means the venue will not
// serve this host today, so it is skipped for the rest of the run and named once. A rate limit is never a refusal,
// whatever its status (a 403 with Bybit's 10006/10018 in its envelope is waited out). A host the transport's breaker
// skipped (unreachable, or timing out) is named once too: when the fallback served every section, nothing else says it.
import type { SourceIssue } from '../market/types.ts';
import { SourceError } from './adapters/request.ts';
import { HostSkipped } from './http/host-breaker.ts';

export class VenueGate {
  private readonly refused = new Map<string, number>();
  private readonly skipped = new Map<string, string>();

  isUnavailable(venue: string): boolean {
    return this.refused.has(venue);
  }

  /** The message for a call that was not made because the venue refused earlier. */
  skipMessage(venue: string): string {
    return `not called: the venue refused this run earlier (HTTP ${this.refused.get(venue) ?? '?'})`;
  }

  /** Records a refusal (true when `error` is one) or a host skipped by the transport. */
  observe(venue: string, error: unknown): boolean {
    if (error instanceof HostSkipped) {
      if (!this.skipped.has(error.venue)) this.skipped.set(error.venue, error.reason);
      return false;
    }
    if (!(error instanceof SourceError) || error.kind !== 'unavailable' || error.status === null)
      return false;
    if (!this.refused.has(venue)) this.refused.set(venue, error.status);
    return true;
  }

  /**
   * One run-wide issue per refusing venue and per skipped host. It never says that a later venue answered: the gate
   * does not see the sections' outcomes (a venue may be the only one of its kind, or the later ones may fail too).
   */
  issues(): SourceIssue[] {
    const fallback =
      'its sections were left to the later venues of their fallback order, if any (a section none delivered has ' +
      'its own issues per asset)';
    return [
      ...[...this.refused].map(([venue, status]) => ({
        venue,
        symbol: null,
        section: 'all' as const,
        message:
          `venue unavailable for this run (HTTP ${status}${status === 451 ? ', restricted location' : ''}); ` +
          `it was not called again, and ${fallback}`,
      })),
      ...[...this.skipped].map(([venue, reason]) => ({
        venue,
        symbol: null,
        section: 'all' as const,
        message: `${reason}; its later calls were not made, and ${fallback}`,
      })),
    ];
  }
}
