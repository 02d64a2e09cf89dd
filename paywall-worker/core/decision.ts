// What the paywall's core takes and gives, in one place for every module of the decision (decide.ts and the steps it
// calls) and for its adapters: a paid request in, a tagged Decision out (rendered by the HTTP app and the MCP tools),
// the dependencies it is built on, the hooks a seller's sale adds, and one Attempt: a payment on its way to settle.
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { PaywallErrorBody } from '../../schemas/paid/payment-required.ts';
import type { Offer, OfferSettings, SalePoint } from '../offers.ts';
import type { PaymentBook } from '../payment-book.ts';
import type { ChainLookup } from './chain-lookup.ts';
import type { GroupPolicy } from './group-policy.ts';
import type { PayeeGate } from './payee-gate.ts';
import type { FreshnessPolicy, PaidFileReader } from './paid-file.ts';
import type { ExpectedSettlement } from './settlement.ts';

export interface PaidRequest {
  path: string;
  method: string;
  /** The PAYMENT-SIGNATURE header (x402 v2), or the MCP `_meta["x402/payment"]` re-encoded the same way. */
  paymentSignature?: string;
  /** An x402 v1 `X-PAYMENT` header was sent. */
  legacyPayment?: boolean;
}

export type ErrorStatus = 400 | 404 | 405 | 408 | 409 | 410 | 417 | 431 | 500 | 501 | 502 | 503 | 504;

export type Decision =
  | {
      kind: 'payment_required';
      paymentRequired: PaymentRequired;
      header: string;
      body: string;
      settlement?: SettleResponse;
    }
  /** `settlement`: the facilitator's failed SettleResponse for this payment, when it gave one (PAYMENT-RESPONSE). */
  | { kind: 'error'; status: ErrorStatus; body: PaywallErrorBody; settlement?: SettleResponse }
  | { kind: 'serve'; body: string; settlement: SettleResponse; redelivery: boolean };

/** Why a point sells nothing new: closed for good (410), or for now (503: no credit left, the payee not opted in). */
export interface SellerRefusal {
  status: 410 | 503;
  error: string;
  message: string;
}

/** What a sale needs beyond the payment (a publisher's credit): reserved before settling, kept only on delivery. */
export interface SaleHooks {
  /**
   * Why the point cannot sell now (asked before any payment is requested), else null. Asked for the sale points of
   * a seller (a publisher) only: the operator's own points sell whenever their file can be sold.
   */
  unavailable(point: SalePoint): Promise<SellerRefusal | null>;
  /** Reserves what one sale consumes; false when nothing is left. */
  reserve(point: SalePoint, txid: string): Promise<boolean>;
  /** The paid body was handed over: consume the reservation and record the sale. */
  delivered(point: SalePoint, txid: string, settlement: SettleResponse): Promise<void>;
  /** The sale did not complete: give the reservation back. */
  release(point: SalePoint, txid: string): Promise<void>;
}

/** One line of the paywall's log (paywall-worker/README.md "Log" lists the events). */
export interface PaywallLogEntry {
  level: 'info' | 'warn' | 'error';
  event: string;
  method?: string;
  path?: string;
  txid?: string;
  /** A sale's price in the asset's atomic units (USDC: millionths of a dollar), and its payee. */
  amount?: string;
  pay_to?: string;
  detail?: string;
  /** How many lines of this event and txid the log left out since the last one written (core/log.ts). */
  suppressed?: number;
}

export interface CoreDeps {
  server: x402ResourceServer;
  offerSettings: OfferSettings;
  points: ReadonlyMap<string, SalePoint>;
  reader: PaidFileReader;
  freshness: FreshnessPolicy;
  groupPolicy: GroupPolicy;
  book: PaymentBook;
  /** Where a lost settle answer is checked; null when none is configured. */
  lookup: ChainLookup | null;
  hooks?: SaleHooks;
  /** The operator's payee's USDC opt-in, asked before the operator's own sales (absent: not checked). */
  payee?: PayeeGate;
  log(entry: PaywallLogEntry): void;
  now(): number;
}

/** A payment that passed every check and was claimed in the book: what settling, reconciling and delivering it need. */
export interface Attempt {
  offer: Offer;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  expected: ExpectedSettlement;
  lastValid: bigint;
  /** The payment as presented (presentationOf): what the book keeps and a retry must present again. */
  presentation: string;
  body: string;
  /** When this attempt, or the earlier one it resumes, began (ms): it cannot have landed the payment before. */
  attemptedAt: number;
  /** It resumes an earlier attempt whose settle answer was lost. */
  resumed: boolean;
}
