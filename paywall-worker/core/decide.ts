// The paywall's one decision, for every runtime: given a request for a paid path (its method and payment header),
// challenge it, refuse it, report an upstream failure, or serve the paid file after a settlement of this very
// payment. It returns a tagged result and renders nothing: the HTTP adapter (Node and workerd) and the MCP adapter
// each turn it into their own answer, as the x402 HTTP resource server and its framework adapters divide the work.
//
// The money rules it keeps, in order: what cannot be delivered (missing, invalid, stale or simulated files, no
// publisher credit, a payee that cannot receive USDC) is refused before any payment is asked for; a payment buys
// one path; the group must have the exact scheme's shape before the facilitator is asked; the file is served only
// when the settlement names this payment's transaction (or the chain shows it confirmed); and a lost settle answer
// is reconciled on chain, never released as if nothing happened, so no path ends with a charged buyer and no file.
import type { x402ResourceServer } from '@x402/core/server';
import { SettleError, VerifyError } from '@x402/core/types';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { DISCLAIMER, PROJECT } from '../../schemas/common.ts';
import type { PaywallErrorBody } from '../../schemas/paid/payment-required.ts';
import { endpointName } from '../copy.ts';
import { classifyFacilitatorError, describeError, mayHaveReachedFacilitator } from '../facilitator-errors.ts';
import { buildOffer, challenge } from '../offers.ts';
import type { Offer, OfferSettings, SalePoint } from '../offers.ts';
import { normalizeNetwork } from '../network.ts';
import { decodePaymentHeader } from '../payment-header.ts';
import { presentationOf } from '../payment-book.ts';
import type { PaymentBook, SettledPayment } from '../payment-book.ts';
import { paymentIdOf } from '../../schemas/paid/payment-identifier.ts';
import type { ChainLookup, ChainStatus } from './chain-lookup.ts';
import type { PayeeGate } from './payee-gate.ts';
import { checkPaymentGroup, signedPaymentOf } from './group-policy.ts';
import type { GroupPolicy } from './group-policy.ts';
import { freshnessRefusal, paidFileOfBody } from './paid-file.ts';
import type { FreshnessPolicy, PaidFile, PaidFileReader } from './paid-file.ts';
import { confirmedSettlement, notSettled, settlementMismatch } from './settlement.ts';
import type { ExpectedSettlement } from './settlement.ts';
import { guardedLog } from './log.ts';

export interface PaidRequest {
  path: string;
  method: string;
  /** The PAYMENT-SIGNATURE header (x402 v2), or the MCP `_meta["x402/payment"]` re-encoded the same way. */
  paymentSignature?: string;
  /** An x402 v1 `X-PAYMENT` header was sent. */
  legacyPayment?: boolean;
}

export type ErrorStatus = 400 | 404 | 405 | 408 | 410 | 417 | 431 | 500 | 501 | 502 | 503 | 504;

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

const RETRY_AFTER_SECONDS = 30;

export function errorBody(
  status: ErrorStatus,
  error: string,
  message: string,
  point: SalePoint | null,
  transaction: string | null = null,
): PaywallErrorBody {
  return {
    success: false,
    status,
    error,
    message,
    project: PROJECT,
    endpoint: point ? endpointName(point.resource) : null,
    retry_after_seconds: status === 503 ? RETRY_AFTER_SECONDS : null,
    transaction,
    disclaimer: DISCLAIMER,
  };
}

const fail = (
  status: ErrorStatus,
  error: string,
  message: string,
  point: SalePoint | null,
  transaction: string | null = null,
): Decision => ({ kind: 'error', status, body: errorBody(status, error, message, point, transaction) });

function refuse(offer: Offer, error: string, detail?: string, settlement?: SettleResponse): Decision {
  const { header, body } =
    error === 'payment_required' && !detail ? offer.unpaid : challenge(offer, error, detail);
  return { kind: 'payment_required', paymentRequired: offer.paymentRequired, header, body, settlement };
}

/**
 * A transaction the book knows from other signed bytes: a copy of a confirmed payment rebuilt from the chain (whose
 * fields are public) without the buyer's signature, or with another one. What is compared is the presentation
 * (presentationOf): the signed transaction and the payment identifier, not the rest of the group, whose members the
 * signed transaction's group id already fixes, nor the header's spelling.
 */
const notThisPayment = (offer: Offer): Decision =>
  refuse(
    offer,
    'payment_already_used',
    'This transaction was presented before with other signed bytes or another payment identifier; it is served again only to the same signed transaction with the same payment identifier.',
  );

/** A settled payment sent without a payment identifier: its bytes are on chain for anyone, so it is not served again. */
const deliveredAlready = (offer: Offer, txid: string): Decision =>
  refuse(
    offer,
    'payment_already_used',
    `Payment ${txid} was settled and its file delivered. It was sent without a payment identifier, so it is not ` +
      'delivered again: once a payment lands, its signed bytes are public on chain and anyone could present them. ' +
      'Send a payment with an id (the x402 payment-identifier extension) to be able to collect its file again.',
  );

/**
 * A payment another request is processing (or one cut short, until its claim's lease lapses): not a 402, which
 * would carry a challenge and invite a second payment, but a 503 to retry the same payment after Retry-After.
 */
const inProgress = (point: SalePoint, txid: string): Decision =>
  fail(
    503,
    'payment_in_progress',
    `Payment ${txid} is being processed by another request (or by one that was cut short, whose claim lapses ` +
      'within two minutes). Do not sign a new payment: send this same PAYMENT-SIGNATURE again after the ' +
      'Retry-After delay to receive the file or the outcome of its settlement; a payment is never charged twice.',
    point,
    txid,
  );

/**
 * How a confirmation's age is read after a lost settle answer: rounds since its block (the indexer's own count, so
 * no two clocks are compared) times a lower bound of Algorand's round time (about 2.8 s), which can only make it look
 * younger, in the buyer's favour; it counts as this attempt's when it is younger than the attempt plus a minute (the
 * attempt may be an earlier request, its book entry older than its settle call).
 */
const MIN_ROUND_MS = 2_500;
const LANDING_MARGIN_MS = 60_000;

/**
 * Whether a failed settle answer is a verdict on the payment: x402's `invalid_*` reasons and `insufficient_funds`,
 * which a facilitator gives when the payment failed its checks or its submit was rejected, except a failed wait for
 * the confirmation of a submit that went through (the AVM scheme's `invalid_exact_avm_confirmation_failed`). x402's
 * `unexpected_settle_error` is no verdict: it may come after the submit. A verdict is trusted, as a
 * success is, and the chain is not asked: a copy of someone's payment, sent while the original is in the transaction
 * pool or just landed, is refused by an honest facilitator (its simulation or its submit finds the transaction
 * already there, naming it or not), and the chain would then show the payment landed, in the very round the copy came
 * in. Anything else that fails (a timeout, garbage, a 5xx or a failure naming the transaction for another reason)
 * may have come after the payment was submitted: it is found out on chain.
 */
const isVerdict = (reason: string | undefined): boolean =>
  reason === 'insufficient_funds' ||
  (reason !== undefined && reason.startsWith('invalid_') && !reason.endsWith('_confirmation_failed'));

/**
 * How long the facilitator's verdict on a payment is repeated without asking it again (ms). A refused payment sent
 * again in a loop would otherwise be one settle call (and one log line) per try. A verdict on the same signed bytes
 * does not change within seconds; the one that can (insufficient_funds, an asset not opted in: the buyer funds or
 * opts in, which takes a few seconds on Algorand) can be tried again after this short wait, which the 402 states.
 */
export const REFUSAL_MEMORY_MS = 10_000;

/** The level and event that say a path stopped selling, by the refusal's code. */
const STOPPED_SELLING: Readonly<Record<string, readonly ['warn' | 'error', string]>> = {
  data_stale: ['warn', 'sales_stopped_stale'],
  data_not_live: ['warn', 'sales_stopped_not_live'],
  paid_resource_unavailable: ['error', 'paid_file_unavailable'],
  payee_not_opted_in: ['error', 'payee_not_opted_in'],
};
/** Bound on the refusals remembered (oldest forgotten first): a forgotten one is only asked about again. */
const MAX_REFUSALS = 10_000;

const refusalRule = (): string =>
  `This refusal is repeated for ${REFUSAL_MEMORY_MS / 1000} s without asking the facilitator again; if you ` +
  'removed its cause (funded the account, opted in to the asset), send the same payment again after that.';

/** A settle error that is no verdict (see isVerdict): the answer is lost, the payment may have landed. */
const lostAnswer = (error: unknown): boolean =>
  !(error instanceof SettleError) || (error.statusCode >= 500 && !isVerdict(error.errorReason));

const sameData = (a: Offer['data'], b: Offer['data']): boolean =>
  a.generatedAt === b.generatedAt && a.mode === b.mode;

/**
 * Why `accepted` matches no offer, in x402's codes where it has one: a scheme or a network this path does not
 * offer; otherwise the offer was not copied unchanged (another amount, payee, fee payer or path).
 */
function mismatchCode(payload: PaymentPayload, offered: readonly PaymentRequirements[]): string {
  const { scheme, network } = payload.accepted;
  if (!offered.some((offer) => offer.scheme === scheme)) return 'invalid_scheme';
  const same = normalizeNetwork(network);
  if (!offered.some((offer) => normalizeNetwork(offer.network) === same)) return 'invalid_network';
  return 'payment_does_not_match';
}

/** The path a payment names in `resource.url`, if it names one. */
function namedPath(payload: PaymentPayload): string | null {
  const url = payload.resource?.url;
  if (!url) return null;
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

export function createPaywallCore(deps: CoreDeps): {
  decide(request: PaidRequest): Decision | Promise<Decision>;
} {
  const { server, book } = deps;
  // Every payee's address stays readable in the log; a payer's is redacted (see core/log.ts).
  const payees = new Set([...deps.points.values()].map((point) => point.payTo));
  const log = guardedLog(deps.log, payees, deps.now);

  // The facilitator's recent verdicts, by presentation (the signed bytes and the id): answered again from here.
  const refusals = new Map<string, { at: number; settlement: SettleResponse }>();
  function rememberRefusal(presentation: string, settlement: SettleResponse): void {
    refusals.delete(presentation);
    refusals.set(presentation, { at: deps.now(), settlement });
    if (refusals.size > MAX_REFUSALS) refusals.delete(refusals.keys().next().value as string);
  }
  function knownRefusal(presentation: string): SettleResponse | null {
    const known = refusals.get(presentation);
    if (!known) return null;
    if (deps.now() - known.at < REFUSAL_MEMORY_MS) return known.settlement;
    refusals.delete(presentation);
    return null;
  }

  // Why each path last could not sell (its refusal's code), or null when it last could.
  const saleStates = new Map<string, string | null>();
  /**
   * A path that stops selling (its file missing, its data stale or not live, the payee not opted in) or sells again
   * is logged once at each change, not once per request: anyone can send the requests.
   */
  function noteSaleState(point: SalePoint, refusal: { error: string; message: string } | null): void {
    const state = refusal?.error ?? null;
    const before = saleStates.get(point.path);
    if (before === state) return;
    saleStates.set(point.path, state);
    if (refusal) {
      const [level, event] = STOPPED_SELLING[refusal.error] ?? ['warn', 'sales_stopped'];
      log({ level, event, path: point.path, detail: refusal.message });
    } else if (before) {
      log({ level: 'info', event: 'sales_resumed', path: point.path });
    }
  }

  let initialized: Promise<void> | null = null;
  const initialize = (): Promise<void> => {
    initialized ??= server.initialize().catch((error: unknown) => {
      initialized = null; // retried on the next request
      throw error;
    });
    return initialized;
  };

  // One offer per path and data generation, encoded once.
  const offers = new Map<string, Offer>();
  async function offerFor(point: SalePoint, data: Offer['data']): Promise<Offer> {
    const known = offers.get(point.path);
    if (known && sameData(known.data, data)) return known;
    await initialize();
    const offer = await buildOffer(server, point, deps.offerSettings, data);
    offers.set(point.path, offer);
    return offer;
  }

  // A sale point's own fields (a publisher block) merged into the paid body, once per data generation.
  const bodies = new Map<string, { source: string; body: string }>();
  function servedBody(point: SalePoint, text: string): string {
    if (!point.bodyFields) return text;
    const known = bodies.get(point.path);
    if (known?.source === text) return known.body;
    const body = JSON.stringify({ ...(JSON.parse(text) as Record<string, unknown>), ...point.bodyFields });
    bodies.set(point.path, { source: text, body });
    return body;
  }

  /**
   * The 402 of an unpaid request, answered at once (no I/O wait, no promise) when it can only be the one a full
   * decision would give: the paid file is unchanged (the store confirms it synchronously), still for sale at this
   * instant, its offer for this data already encoded, no seller's credit is involved (see SaleHooks.unavailable)
   * and the payee is known to be payable. Every other request, and every payment, is decided in full.
   */
  function knownChallenge(request: PaidRequest): Decision | undefined {
    if (request.paymentSignature !== undefined || request.legacyPayment) return undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const point = deps.points.get(request.path);
    const offer = offers.get(request.path);
    if (!point || !offer || point.seller || (deps.payee && !deps.payee.ready)) return undefined;
    if (saleStates.get(request.path)) return undefined; // last seen unsellable: the full path logs its resumption
    const state = deps.reader.known(point.resource);
    if (!state?.ok || !sameData(offer.data, state.file)) return undefined;
    if (freshnessRefusal(state.file, deps.freshness, deps.now())) return undefined;
    return refuse(offer, 'payment_required');
  }

  function decide(request: PaidRequest): Decision | Promise<Decision> {
    return knownChallenge(request) ?? decideInFull(request);
  }

  /** Why the point's payee cannot take a new payment: a publisher's closed or empty account, or the operator's opt-in. */
  async function sellerRefusal(point: SalePoint): Promise<SellerRefusal | null> {
    if (point.seller) return (await deps.hooks?.unavailable(point)) ?? null;
    const problem = deps.payee ? await deps.payee.problem() : null;
    return problem === null ? null : { status: 503, error: 'payee_not_opted_in', message: problem };
  }

  /**
   * While the paid file cannot be read, a payment already settled here still collects the body it bought, which the
   * book keeps (the same presentation, by the same rules as any redelivery); a payment whose settle answer was lost
   * is resumed on the body its attempt offered (`resume`: the chain is asked, nothing new is settled); anything else
   * leaves the book as it was.
   */
  async function storedPurchase(
    point: SalePoint,
    signature: string,
  ): Promise<Decision | { resume: PaidFile } | null> {
    const decoded = decodePaymentHeader(signature);
    if (!decoded.ok) return null;
    const { paymentGroup, paymentIndex } = decoded.payload.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const paid = signedPaymentOf(paymentGroup[paymentIndex]);
    const paymentId = paymentIdOf(decoded.payload.extensions);
    if (!paid || 'error' in paymentId) return null;
    const presentation = presentationOf(paid.signedPayment, paymentId.id);
    const claim = await book.claim(paid.txid, presentation);
    if (claim.state === 'claimed') {
      await book.release(paid.txid);
      return null;
    }
    if (claim.state === 'in_flight') return inProgress(point, paid.txid);
    if (claim.state === 'pending') {
      await book.pending(paid.txid, claim.payment, claim.attemptedAt, claim.body);
      const offered = claim.body === undefined ? null : paidFileOfBody(claim.body);
      return claim.payment === presentation && offered ? { resume: offered } : null;
    }
    const refusal = redeliveryRefusal(claim.record, point, presentation, paymentId.id !== null);
    return refusal === null ? redelivered(claim.record, point, paid.txid) : null;
  }

  /**
   * Why a settled payment is not delivered again to this presentation, or null when it is: the same path, the same
   * bytes and id, and an id (or a first delivery that went to a retry after a lost answer).
   */
  function redeliveryRefusal(
    record: SettledPayment,
    point: SalePoint,
    presentation: string,
    hasId: boolean,
  ): 'another_resource' | 'not_this_payment' | 'delivered_already' | null {
    if (record.path !== point.path) return 'another_resource';
    if (record.payment !== presentation) return 'not_this_payment';
    if (!hasId && !record.afterLostAnswer) return 'delivered_already';
    return null;
  }

  /** Idempotent delivery: the body the payment bought, never a second charge, never newer data than it paid for. */
  function redelivered(record: SettledPayment, point: SalePoint, txid: string): Decision {
    log({ level: 'info', event: 'redelivered', path: point.path, txid });
    return { kind: 'serve', body: record.body, settlement: record.settlement, redelivery: true };
  }

  async function decideInFull(request: PaidRequest): Promise<Decision> {
    const point = deps.points.get(request.path);
    if (!point) return fail(404, 'not_found', 'No such paid resource.', null);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return fail(405, 'method_not_allowed', 'Paid resources answer GET, HEAD and OPTIONS only.', point);
    }

    // Before any payment is asked for: never charge for a body that cannot be served.
    const loaded = await deps.reader.load(point.resource);
    let file: PaidFile;
    let missing: Decision | null = null;
    if (loaded.ok) {
      file = loaded.file;
    } else {
      noteSaleState(point, { error: 'paid_resource_unavailable', message: loaded.detail });
      missing = fail(
        503,
        'paid_resource_unavailable',
        'The paid file is not available right now; nothing was requested, verified or settled by this request ' +
          '(a payment sent before is kept: send it again later). Try again later.',
        point,
      );
      const signature = request.method === 'GET' ? request.paymentSignature : undefined;
      const stored = signature === undefined ? null : await storedPurchase(point, signature);
      if (stored === null) return missing;
      if (!('resume' in stored)) return stored;
      file = stored.resume; // decided below on the body it was offered, as not for sale (nothing new is settled)
    }
    // Why a new sale cannot be made now (stale or simulated data, no seller credit, no payee opt-in). It never stops
    // the delivery of a payment already made: a buyer charged a minute ago still gets the report.
    const stale = missing ? null : freshnessRefusal(file, deps.freshness, deps.now());
    const unavailable = missing || stale ? null : await sellerRefusal(point);
    if (!missing) noteSaleState(point, stale ?? unavailable);
    const notForSale =
      missing ??
      (stale
        ? fail(503, stale.error, stale.message, point)
        : unavailable
          ? fail(unavailable.status, unavailable.error, unavailable.message, point)
          : null);
    // HEAD never pays: it would settle and then return no body.
    const signature = request.method === 'GET' ? request.paymentSignature : undefined;
    if (notForSale && signature === undefined) return notForSale;

    let offer: Offer;
    try {
      offer = await offerFor(point, file);
    } catch (error) {
      log({ level: 'error', event: 'offer_failed', path: point.path, detail: describeError(error) });
      const failure = classifyFacilitatorError(error);
      return fail(failure.status, failure.error, failure.message, point);
    }

    if (signature === undefined) {
      return request.legacyPayment
        ? refuse(offer, 'x402_v1_not_supported', 'X-PAYMENT (x402 v1) is not accepted here; use x402 v2.')
        : refuse(offer, 'payment_required');
    }

    // A payment that can buy nothing here is refused; while the path is not for sale, with that reason, never a 402.
    const refusePayment = (error: string, message: string): Decision =>
      notForSale ?? refuse(offer, error, message);
    const decoded = decodePaymentHeader(signature);
    if (!decoded.ok) return refusePayment(decoded.error, `${decoded.message}.`);
    const payload = decoded.payload;
    const requirements = server.findMatchingRequirements(offer.accepts, payload);
    if (!requirements) {
      return refusePayment(
        mismatchCode(payload, offer.accepts),
        'The payment does not accept any of the requirements offered at this path (accepted must be an unchanged copy, naming this path).',
      );
    }
    const named = namedPath(payload);
    if (named !== null && named !== point.path) {
      return refusePayment(
        'payment_for_another_resource',
        `The payment was made for ${named}, not ${point.path}.`,
      );
    }
    if (!server.validateExtensions(offer.paymentRequired, payload).valid) {
      return refusePayment('extension_echo_mismatch', 'The echoed extensions differ from the offered ones.');
    }
    const paymentId = paymentIdOf(payload.extensions);
    if ('error' in paymentId) return refusePayment('invalid_payload', `${paymentId.error}.`);
    const { paymentGroup, paymentIndex } = payload.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const group = checkPaymentGroup(paymentGroup, paymentIndex, requirements, deps.groupPolicy);
    if (!group.ok) return refusePayment(group.reason, `${group.message}.`);
    const presentation = presentationOf(group.signedPayment, paymentId.id);

    const expected: ExpectedSettlement = {
      txid: group.txid,
      network: requirements.network,
      payer: group.payer,
    };
    // The body offered for this payment, kept with its claim: if the settle answer is lost, a later retry delivers
    // it (what was paid for), never whatever the file became since (newer, stale, future-dated or missing).
    const offered = servedBody(point, file.text);
    const claimedAt = deps.now();
    const claim = await book.claim(group.txid, presentation, offered);
    if (claim.state === 'in_flight') return inProgress(point, group.txid);
    if (claim.state === 'settled') {
      switch (redeliveryRefusal(claim.record, point, presentation, paymentId.id !== null)) {
        case 'another_resource':
          return refuse(offer, 'payment_already_used', 'This payment has already bought another resource.');
        case 'not_this_payment':
          return notThisPayment(offer);
        case 'delivered_already':
          return deliveredAlready(offer, group.txid);
        case null:
          return redelivered(claim.record, point, group.txid);
      }
    }
    if (claim.state === 'pending' && claim.payment !== presentation) {
      // left for the payment that was sent
      await book.pending(group.txid, claim.payment, claim.attemptedAt, claim.body);
      return notThisPayment(offer);
    }
    if (claim.state === 'claimed' && notForSale) {
      await book.release(group.txid);
      return notForSale;
    }
    const refusedBefore = claim.state === 'claimed' ? knownRefusal(presentation) : null;
    if (refusedBefore) {
      await book.release(group.txid);
      return refusalOf(offer, group.txid, refusedBefore);
    }

    // When the attempt that may land this payment began: this request, or the earlier one it resumes.
    const attemptedAt = claim.state === 'pending' ? claim.attemptedAt : claimedAt;
    const body = claim.state === 'pending' ? (claim.body ?? offered) : offered;
    let reserved = false;
    let outcome: Decision | null = null;
    try {
      reserved = deps.hooks ? await deps.hooks.reserve(point, group.txid) : true;
      const soldOut = reserved
        ? null
        : fail(
            503,
            'not_available_from_seller',
            'No credit is left for this sale; no payment was settled.',
            point,
          );
      // An earlier try of this payment may have landed: without a credit it is never settled again, but a payment
      // the chain shows confirmed is still delivered (the buyer's money comes before the seller's credit).
      if (soldOut && claim.state !== 'pending') {
        outcome = soldOut;
        return outcome;
      }
      const { lastValid } = group;
      const resumed = claim.state === 'pending';
      const attempt = {
        offer,
        payload,
        requirements,
        expected,
        lastValid,
        presentation,
        body,
        attemptedAt,
        resumed,
      };
      outcome =
        claim.state === 'pending'
          ? await resume(attempt, notForSale ?? soldOut)
          : await settleAndDeliver(attempt);
      return outcome;
    } catch (error) {
      log({
        level: 'error',
        event: 'internal_error',
        path: point.path,
        txid: group.txid,
        detail: describeError(error),
      });
      outcome = fail(
        500,
        'internal_error',
        'The paywall could not handle this payment; it was not served.',
        point,
        group.txid,
      );
      return outcome;
    } finally {
      if (outcome?.kind !== 'serve') {
        // An error naming the transaction means the payment may have landed: the next try must find out first.
        const unknown = outcome?.kind === 'error' && outcome.body.transaction !== null;
        await (
          unknown ? book.pending(group.txid, presentation, attemptedAt, body) : book.release(group.txid)
        ).catch((error: unknown) => {
          // The answer stands; a claim the book could not update lapses after its lease (IN_FLIGHT_LEASE_MS),
          // when the payment's next try finds out on chain whether it landed.
          log({
            level: 'error',
            event: 'payment_book_failed',
            path: point.path,
            txid: group.txid,
            detail: `${unknown ? 'pending' : 'release'}: ${describeError(error)}`,
          });
        });
        if (reserved) await deps.hooks?.release(point, group.txid);
      }
    }
  }

  async function settleAndDeliver(attempt: Attempt): Promise<Decision> {
    const { offer, payload, requirements, expected } = attempt;
    const point = offer.point;
    try {
      // The offers declare x402's "upfront" flow, for which the official resource server answers valid without
      // asking the facilitator: the facilitator verifies inside settle. Under the "authorization" flow this asks
      // the facilitator's /verify, so the core does not depend on which flow the offer declares.
      const verification = await server.verifyPayment(payload, requirements);
      if (!verification.isValid) {
        const reason = verification.invalidReason ?? 'payment_invalid';
        return refuse(
          offer,
          reason,
          `The facilitator refused the payment: ${verification.invalidMessage ?? reason}.`,
        );
      }
    } catch (error) {
      if (error instanceof VerifyError) {
        return refuse(
          offer,
          error.invalidReason ?? 'payment_invalid',
          `The facilitator refused the payment: ${error.message}.`,
        );
      }
      log({
        level: 'error',
        event: 'verify_failed',
        path: point.path,
        txid: expected.txid,
        detail: describeError(error),
      });
      const failure = classifyFacilitatorError(error);
      return fail(failure.status, failure.error, failure.message, point);
    }

    let settlement: SettleResponse;
    try {
      settlement = await server.settlePayment(payload, requirements);
    } catch (error) {
      if (lostAnswer(error)) {
        const failure =
          error instanceof SettleError
            ? {
                ...classifyFacilitatorError(error),
                message: `The payment facilitator failed (HTTP ${error.statusCode}: ${error.errorReason ?? 'no reason'}).`,
              }
            : classifyFacilitatorError(error);
        if (!mayHaveReachedFacilitator(error)) {
          log({
            level: 'warn',
            event: 'settle_not_sent',
            path: point.path,
            txid: expected.txid,
            detail: describeError(error),
          });
          return fail(failure.status, failure.error, `${failure.message} Nothing was settled.`, point);
        }
        // The request may have reached the facilitator: the payment may have landed. Find out.
        log({
          level: 'warn',
          event: 'settle_answer_lost',
          path: point.path,
          txid: expected.txid,
          detail: describeError(error),
        });
        return reconcile(attempt, () => unknown(attempt, failure.status, failure.error, failure.message));
      }
      if (!(error instanceof SettleError)) throw error; // lostAnswer took every other error
      settlement = {
        success: false,
        errorReason: error.errorReason,
        errorMessage: error.errorMessage,
        payer: error.payer,
        transaction: error.transaction ?? '',
        network: error.network ?? requirements.network,
      };
    }

    if (settlement.success) {
      const mismatch = settlementMismatch(settlement, expected);
      if (!mismatch) return deliver(attempt, settlement);
      log({
        level: 'error',
        event: 'settlement_mismatch',
        path: point.path,
        txid: expected.txid,
        detail: mismatch,
      });
      const message = `The facilitator reported a settlement that ${mismatch}; the file is not served on it.`;
      return reconcile(attempt, () => unknown(attempt, 502, 'settlement_not_for_this_payment', message));
    }
    if (!isVerdict(settlement.errorReason)) {
      // No verdict, named transaction or not ("submitted but not confirmed", an unexpected error after the
      // submit): the payment may have landed or still land.
      const reason = settlement.errorReason ?? 'settlement_failed';
      log({
        level: 'warn',
        event: 'settle_unconfirmed',
        path: point.path,
        txid: expected.txid,
        detail: reason,
      });
      const message = `Settlement was not confirmed: ${settlement.errorMessage ?? reason}.`;
      return reconcile(attempt, () => unknown(attempt, 502, reason, message, settlement));
    }
    return refused(attempt, settlement);
  }

  /**
   * The facilitator refused to settle with a verdict (isVerdict): its refusal is trusted, as its success is (the
   * chain is asked only when an answer is lost or no verdict, see lostAnswer), and the payment may be presented again:
   * within REFUSAL_MEMORY_MS it gets the same refusal without a settle call. Logged with the transaction, so that an
   * operator can look up a refusal a buyer disputes.
   */
  function refused(attempt: Attempt, settlement: SettleResponse): Decision {
    // A resumed payment's refusal proves nothing (the earlier try may have landed it): never remembered.
    if (!attempt.resumed) rememberRefusal(attempt.presentation, settlement);
    return refusalOf(attempt.offer, attempt.expected.txid, settlement);
  }

  /** The refusal's 402 (a fresh challenge) and its log line, whether the facilitator just gave it or gave it before. */
  function refusalOf(offer: Offer, txid: string, settlement: SettleResponse): Decision {
    const reason = settlement.errorReason ?? 'settlement_failed';
    const why = settlement.errorMessage ?? reason;
    log({
      level: 'warn',
      event: 'settle_refused',
      path: offer.point.path,
      txid,
      detail: `${reason}: ${why}`,
    });
    return refuse(offer, reason, `Settlement was refused: ${why}. ${refusalRule()}`, settlement);
  }

  /**
   * Records and serves a settled payment, logging the sale (`sold`, the only trace of it once the book forgets the
   * payment) and, for a payment whose earlier try ended unknown and which this retry settled, the line that closes
   * that alert (`settled_after_unknown`; one found confirmed on chain is closed by `reconciled_confirmed`).
   */
  async function deliver(
    attempt: Attempt,
    settlement: SettleResponse,
    confirmedOnChain = false,
  ): Promise<Decision> {
    const { offer, expected, presentation: payment, body, resumed } = attempt;
    const { path, payTo, amountAtomic } = offer.point;
    const record = { path, settlement, payment, body };
    try {
      // Delivered on a retry after a lost answer, the first request never got the body: the same bytes may collect
      // it again even without an id, or a copy from the chain that came first would leave the buyer with nothing.
      await book.settled(expected.txid, resumed ? { ...record, afterLostAnswer: true } : record);
    } catch (error) {
      return notRecorded(attempt, error);
    }
    await deps.hooks?.delivered(offer.point, expected.txid, settlement);
    if (resumed && !confirmedOnChain) {
      log({
        level: 'warn',
        event: 'settled_after_unknown',
        path,
        txid: expected.txid,
        detail:
          'an earlier try of this payment ended with its outcome unknown; this retry settled and delivered it',
      });
    }
    log({ level: 'info', event: 'sold', path, txid: expected.txid, amount: amountAtomic, pay_to: payTo });
    return { kind: 'serve', body: attempt.body, settlement, redelivery: false };
  }

  /**
   * The payment settled but the book could not record it (a full disk): not served on this request, whose answer
   * names the transaction, so that the book keeps it pending (or its claim lapses) and the buyer's next try with the
   * same payment finds it confirmed on chain and collects the file, never paying twice.
   */
  function notRecorded({ offer, expected }: Attempt, error: unknown): Decision {
    const { txid } = expected;
    log({
      level: 'error',
      event: 'settled_not_recorded',
      path: offer.point.path,
      txid,
      detail:
        `the payment settled but the payment book could not record it (${describeError(error)}); the buyer ` +
        'collects the file by sending the same payment again',
    });
    return fail(
      503,
      'settlement_not_recorded',
      `Payment ${txid} was settled, but this service could not record it, so the file was not served on this ` +
        'request. Send the same request with the same PAYMENT-SIGNATURE again after the Retry-After delay to receive ' +
        'it (within a few minutes at most); a payment is never charged twice.',
      offer.point,
      txid,
    );
  }

  /**
   * Asks the chain about this payment: confirmed, it is delivered; expired unconfirmed, it can never land and is
   * refused; otherwise `unconfirmed` decides (settle again, or report the outcome as unknown).
   */
  async function reconcile(attempt: Attempt, unconfirmed: () => Promise<Decision>): Promise<Decision> {
    const { offer, expected } = attempt;
    const chain = deps.lookup ? await deps.lookup.status(expected.txid) : null;
    if (chain?.confirmed === true) return landed(attempt, chain);
    if (chain?.confirmed === false && BigInt(chain.currentRound) > attempt.lastValid) {
      log({ level: 'warn', event: 'reconciled_expired', path: offer.point.path, txid: expected.txid });
      return refuse(
        offer,
        'payment_not_settled',
        'The payment was not confirmed and its validity window has passed, so it never can be: you were not charged. Sign a new payment.',
        notSettled(expected),
      );
    }
    if (chain?.confirmed === null) lookupFailed(attempt, chain.cause);
    return unconfirmed();
  }

  const lookupFailed = ({ offer, expected }: Attempt, cause: string): void =>
    log({
      level: 'error',
      event: 'chain_lookup_failed',
      path: offer.point.path,
      txid: expected.txid,
      detail: cause,
    });

  /**
   * An earlier attempt's settle answer was lost: find out first. Still unconfirmed and valid, it is settled again
   * (a transaction lands at most once), unless the file may no longer be sold: then it is left to expire.
   */
  function resume(attempt: Attempt, notForSale: Decision | null): Promise<Decision> {
    const stillUnknown = () =>
      unknown(
        attempt,
        504,
        'settlement_unknown',
        'The outcome of an earlier try of this payment is unknown.',
      );
    return reconcile(attempt, async () => {
      if (!deps.lookup || notForSale) return stillUnknown();
      const outcome = await settleAndDeliver(attempt);
      // The earlier try may have landed it, so a refusal now ("already in the ledger") proves nothing: the payment
      // stays pending until the chain tells (confirmed, or its validity window passed).
      const decided =
        outcome.kind === 'serve' || (outcome.kind === 'error' && outcome.body.transaction !== null);
      return decided ? outcome : stillUnknown();
    });
  }

  /**
   * The chain shows the payment confirmed after a lost answer: delivered, unless the confirmation predates the
   * attempt that could have landed it (see LANDING_MARGIN_MS): then it is not this payment's doing here (an old
   * payment presented again, its bytes being public) and is never delivered.
   */
  function landed(attempt: Attempt, chain: Extract<ChainStatus, { confirmed: true }>): Promise<Decision> {
    const { offer, expected } = attempt;
    const landedAgo = (chain.currentRound - chain.round) * MIN_ROUND_MS;
    if (landedAgo > deps.now() - attempt.attemptedAt + LANDING_MARGIN_MS) {
      log({ level: 'error', event: 'confirmed_before_attempt', path: offer.point.path, txid: expected.txid });
      return Promise.resolve(
        refuse(
          offer,
          'payment_already_used',
          `Payment ${expected.txid} landed on chain (round ${chain.round}) before it was presented here, so this ` +
            'request did not settle it and it buys nothing now.',
        ),
      );
    }
    log({ level: 'warn', event: 'reconciled_confirmed', path: offer.point.path, txid: expected.txid });
    return deliver(attempt, confirmedSettlement(expected, offer.point.amountAtomic), true);
  }

  /**
   * The payment's outcome is not known yet. `settlement` is the facilitator's own failed answer when it gave one
   * (submitted, not confirmed): passed on as PAYMENT-RESPONSE, as x402 returns a failed settlement, while the body
   * says the payment may still land and how to collect the file.
   */
  function unknown(
    attempt: Attempt,
    status: ErrorStatus,
    error: string,
    message: string,
    settlement?: SettleResponse,
  ): Promise<Decision> {
    const { txid } = attempt.expected;
    log({ level: 'error', event: 'settlement_unknown', path: attempt.offer.point.path, txid, detail: error });
    const decision = fail(
      status,
      error,
      `${message} Whether payment ${txid} landed is not known yet: send the same request with the same ` +
        'PAYMENT-SIGNATURE again to receive the file if it did (a payment is never charged twice).',
      attempt.offer.point,
      txid,
    );
    return Promise.resolve(settlement ? { ...decision, settlement } : decision);
  }

  return { decide };
}

interface Attempt {
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
