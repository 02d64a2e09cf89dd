// Serves each payment at most once per worker: a payment is claimed (synchronously, so two concurrent requests
// cannot both claim it) before verification, released if the facilitator refused it, and remembered once settled.
// The ledger's own duplicate-transaction check is the second line: a settled transaction id never lands twice.
export type ClaimResult = 'claimed' | 'in_flight' | 'already_used';

export class ReplayGuard {
  private readonly inFlight = new Set<string>();
  private readonly used = new Map<string, number>(); // key -> forget after (ms), oldest first

  constructor(
    /** Longer than an Algorand validity window (1000 rounds, about 47 minutes). */
    private readonly ttlMs = 60 * 60 * 1000,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  claim(key: string): ClaimResult {
    this.forgetExpired();
    if (this.inFlight.has(key)) return 'in_flight';
    if (this.used.has(key)) return 'already_used';
    this.inFlight.add(key);
    return 'claimed';
  }

  /** The payment did not go through: the same payment may be presented again. */
  release(key: string): void {
    this.inFlight.delete(key);
  }

  /** The payment settled (or may have): never serve it again. */
  markUsed(key: string): void {
    this.inFlight.delete(key);
    this.used.set(key, this.now() + this.ttlMs);
    if (this.used.size > this.maxEntries) {
      const oldest = this.used.keys().next().value;
      if (oldest !== undefined) this.used.delete(oldest);
    }
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.used) {
      if (expiresAt > now) break; // insertion order is expiry order
      this.used.delete(key);
    }
  }
}
