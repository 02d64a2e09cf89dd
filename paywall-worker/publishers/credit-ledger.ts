// The publishers' shared-intelligence credits and their sales: the contract every home of the books keeps (SQLite
// on Node; a Durable Object at the edge). A credit is reserved before the facilitator is asked to settle, consumed
// only when the paid body was handed over (in the same step that records the sale), and released on any other
// outcome. A reservation that was never resolved (the process died mid-sale) stops counting after a while.

/** One sale through a publisher, as its statement shows it. */
export interface SaleRecord {
  /** ISO time the body was delivered. */
  at: string;
  publisherId: string;
  /** Product slug, e.g. `atlas-human-report`. */
  product: string;
  path: string;
  priceUsd: string;
  amountAtomic: string;
  /** The publisher's address the payment went to. */
  payTo: string;
  payer: string;
  /** The payment transaction id: look it up on chain to reconcile. */
  transaction: string;
  network: string;
  /** Credits consumed by this sale (always 1). */
  credits: number;
}

/** One grant or withdrawal of credits by the operator (`emi publisher credit`), as the ledger keeps it. */
export interface GrantRecord {
  /** ISO time the ledger took it. */
  at: string;
  publisherId: string;
  /** Signed: a withdrawal is negative. */
  credits: number;
  /** The operator's `--note` (e.g. an invoice number), verbatim: any text. */
  note: string | null;
}

export interface CreditBalance {
  publisherId: string;
  /** Credits not yet consumed. */
  balance: number;
  /** Held by sales in progress. */
  reserved: number;
  /** Credits a new sale can reserve now. */
  available: number;
  sales: number;
}

export interface CreditLedger {
  balance(publisherId: string): Promise<CreditBalance>;
  /** Holds one credit for the sale paid by `txid`; false when none is available. */
  reserve(publisherId: string, txid: string): Promise<boolean>;
  /** Consumes the held credit and records the sale, once per transaction (a second call changes nothing). */
  consume(sale: SaleRecord): Promise<void>;
  /** Gives the held credit back. */
  release(publisherId: string, txid: string): Promise<void>;
  /** Adds (or, negative, withdraws) credits; never below what is held or zero. Returns the new balance. */
  credit(publisherId: string, amount: number, note?: string): Promise<CreditBalance>;
  statement(publisherId: string, since?: string): Promise<SaleRecord[]>;
  /** Every grant and withdrawal, oldest first; `since` as the statement's (at or after that ISO time). */
  grants(publisherId: string, since?: string): Promise<GrantRecord[]>;
  list(): Promise<CreditBalance[]>;
}

/** An ISO date or time as the lower bound of a statement (`since`) (an ISO time), or null when it is not one. */
export function sinceTime(value: string): string | null {
  const day = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  const time = Date.parse(value);
  if (!day || Number.isNaN(time)) return null;
  // Date.parse moves 2026-02-30 to 2 March: a day that does not exist is refused, not silently moved.
  const [year, month, date] = day.slice(1).map(Number) as [number, number, number];
  const check = new Date(Date.UTC(year, month - 1, date));
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== date) return null;
  return new Date(time).toISOString();
}

export class CreditError extends Error {
  override name = 'CreditError';
}

/** Longer than any settle attempt (facilitator timeouts are seconds); shorter than an operator would notice. */
export const RESERVATION_TTL_MS = 10 * 60 * 1000;
