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
//
// This file is the order of the steps; each step's rules are in their own module: payment-check.ts (a payment
// against the offer), redelivery.ts (a payment the book holds as settled), payment-id.ts (one payment id, one
// payment), settle.ts (settle, reconcile on chain, deliver), verdict.ts (what a settle answer is worth), memories.ts
// (recent verdicts, why a path stopped selling), offer-cache.ts (offers and bodies once per data generation),
// answers.ts (the answers' wording), decision.ts (types).
import type { SettleResponse } from '@x402/core/types';
import { classifyFacilitatorError, describeError } from '../facilitator-errors.ts';
import type { Offer, SalePoint } from '../offers.ts';
import { paymentIdOfPresentation } from '../payment-book.ts';
import type { ClaimResult } from '../payment-book.ts';
import { challengeWith, fail, inProgress, notThisPayment } from './answers.ts';
import type { CoreDeps, Decision, PaidRequest, SellerRefusal } from './decision.ts';
import { guardedLog } from './log.ts';
import { createRefusalMemory, createSaleStates } from './memories.ts';
import { createOfferCache, sameData } from './offer-cache.ts';
import { freshnessRefusal } from './paid-file.ts';
import type { PaidFile } from './paid-file.ts';
import { checkPayment } from './payment-check.ts';
import type { PaymentCheck } from './payment-check.ts';
import { createPaymentIds } from './payment-id.ts';
import { createRedelivery } from './redelivery.ts';
import { createSettler } from './settle.ts';
import type { ExpectedSettlement } from './settlement.ts';

// What the adapters, the publishers' sales and the tests import from here: the types (decision.ts), the error body
// (answers.ts) and the refusal memory's duration (verdict.ts).
export type {
  CoreDeps,
  Decision,
  ErrorStatus,
  PaidRequest,
  PaywallLogEntry,
  SaleHooks,
  SellerRefusal,
} from './decision.ts';
export { errorBody } from './answers.ts';
export { REFUSAL_MEMORY_MS } from './verdict.ts';

/** The path's file, and why it may not be sold now (a payment already made is still delivered on it), or null. */
interface ForSale {
  file: PaidFile;
  notForSale: Decision | null;
}

type CheckedPayment = Extract<PaymentCheck, { ok: true }>;

export function createPaywallCore(deps: CoreDeps): {
  decide(request: PaidRequest): Decision | Promise<Decision>;
} {
  const { server, book } = deps;
  // Every payee's address stays readable in the log; a payer's is redacted (see core/log.ts).
  const payees = new Set([...deps.points.values()].map((point) => point.payTo));
  const log = guardedLog(deps.log, payees, deps.now);
  const refusals = createRefusalMemory(deps);
  const saleStates = createSaleStates(log);
  const offers = createOfferCache(deps);
  const redelivery = createRedelivery(book, log);
  const settler = createSettler(deps, log, refusals);
  const paymentIds = createPaymentIds(book, log);

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
    const offer = offers.encoded(request.path);
    if (!point || !offer || point.seller || (deps.payee && !deps.payee.ready)) return undefined;
    if (saleStates.stopped(request.path)) return undefined; // last seen unsellable: the full path logs its resumption
    const state = deps.reader.known(point.resource);
    if (!state?.ok || !sameData(offer.data, state.file)) return undefined;
    if (freshnessRefusal(state.file, deps.freshness, deps.now())) return undefined;
    return challengeWith(offer, 'payment_required');
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
   * The steps, in order: the path and method; whether the file can be sold (sale availability); the offer; with no
   * payment, the 402; the payment's checks; then its claim in the book and its settlement.
   */
  async function decideInFull(request: PaidRequest): Promise<Decision> {
    const point = deps.points.get(request.path);
    if (!point) return fail(404, 'not_found', 'No such paid resource.', null);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return fail(405, 'method_not_allowed', 'Paid resources answer GET, HEAD and OPTIONS only.', point);
    }
    // HEAD never pays: it would settle and then return no body.
    const signature = request.method === 'GET' ? request.paymentSignature : undefined;

    const sale = await saleAvailability(point, signature);
    if ('kind' in sale) return sale;
    const { file, notForSale } = sale;
    if (notForSale && signature === undefined) return notForSale;

    let offer: Offer;
    try {
      offer = await offers.offerFor(point, file);
    } catch (error) {
      log({ level: 'error', event: 'offer_failed', path: point.path, detail: describeError(error) });
      const failure = classifyFacilitatorError(error);
      return fail(failure.status, failure.error, failure.message, point);
    }

    if (signature === undefined) {
      return request.legacyPayment
        ? challengeWith(
            offer,
            'x402_v1_not_supported',
            'X-PAYMENT (x402 v1) is not accepted here; use x402 v2.',
          )
        : challengeWith(offer, 'payment_required');
    }

    // A payment that can buy nothing here is refused; while the path is not for sale, with that reason, never a 402.
    const payment = checkPayment(signature, offer, server, deps.groupPolicy);
    if (!payment.ok) return notForSale ?? challengeWith(offer, payment.error, payment.message);
    return claimAndSettle(offer, file, payment, notForSale);
  }

  /**
   * Before any payment is asked for: never charge for a body that cannot be served. The path's file, and why a new
   * sale cannot be made now (stale or simulated data, no seller credit, no payee opt-in), which never stops the
   * delivery of a payment already made: a buyer charged a minute ago still gets the report. While the file cannot
   * be read, only a payment the book knows is answered (redelivery.ts), else the 503.
   */
  async function saleAvailability(
    point: SalePoint,
    signature: string | undefined,
  ): Promise<Decision | ForSale> {
    const loaded = await deps.reader.load(point.resource);
    if (!loaded.ok) {
      saleStates.note(point, { error: 'paid_resource_unavailable', message: loaded.detail });
      const missing = fail(
        503,
        'paid_resource_unavailable',
        'The paid file is not available right now; nothing was requested, verified or settled by this request ' +
          '(a payment sent before is kept: send it again later). Try again later.',
        point,
      );
      const stored = signature === undefined ? null : await redelivery.storedPurchase(point, signature);
      if (stored === null) return missing;
      if (!('resume' in stored)) return stored;
      // decided on the body it was offered, as not for sale (nothing new is settled)
      return { file: stored.resume, notForSale: missing };
    }
    const file = loaded.file;
    const stale = freshnessRefusal(file, deps.freshness, deps.now());
    // A storefront's seller is asked even while the file is stale: its close is for good (410), staleness is for a
    // moment (503), and a buyer's page shows the one that will not change.
    const unavailable = stale && !point.seller ? null : await sellerRefusal(point);
    const refusal: SellerRefusal | null =
      unavailable?.status === 410 ? unavailable : stale ? { status: 503, ...stale } : unavailable;
    saleStates.note(point, refusal);
    const notForSale = refusal ? fail(refusal.status, refusal.error, refusal.message, point) : null;
    return { file, notForSale };
  }

  /**
   * What the book already knows of this payment, answered without the facilitator: another request has it, it was
   * settled (redelivered or refused), another presentation's attempt is pending, the path is not for sale, or the
   * facilitator refused it within REFUSAL_MEMORY_MS. Null when it is to be settled (or resumed) now.
   */
  async function answerFromBook(
    claim: ClaimResult,
    offer: Offer,
    payment: CheckedPayment,
    notForSale: Decision | null,
  ): Promise<Decision | null> {
    const { txid } = payment.group;
    const { presentation } = payment;
    if (claim.state === 'in_flight') return inProgress(offer.point, txid);
    if (claim.state === 'settled') {
      return redelivery.settledClaim(claim.record, offer, presentation, payment.paymentId !== null, txid);
    }
    if (claim.state === 'pending' && claim.payment !== presentation) {
      // left for the payment that was sent, its record written anew: its id with it (payment-id.ts, keep)
      await book.pending(txid, claim.payment, claim.attemptedAt, claim.body);
      const pendingId = paymentIdOfPresentation(claim.payment);
      if (pendingId !== null) await paymentIds.keep(offer.point, txid, pendingId);
      return notThisPayment(offer);
    }
    if (claim.state === 'claimed' && notForSale) {
      await book.release(txid);
      return notForSale;
    }
    const refusedBefore: SettleResponse | null =
      claim.state === 'claimed' ? refusals.known(presentation) : null;
    if (refusedBefore) {
      await book.release(txid);
      return settler.refusalOf(offer, txid, refusedBefore);
    }
    return null;
  }

  /**
   * Claims the payment in the book (one request at a time per payment), then settles it, or resumes the earlier
   * attempt whose answer was lost. A payment new to the book first binds its payment id (payment-id.ts): an id that
   * belongs to another payment is refused (409) before anything is verified. Whatever happens, a claim that did not
   * end in a delivery is left pending (an answer naming the transaction: it may have landed) or released with its
   * id unbound, and a reserved credit is given back.
   */
  async function claimAndSettle(
    offer: Offer,
    file: PaidFile,
    payment: CheckedPayment,
    notForSale: Decision | null,
  ): Promise<Decision> {
    const { point } = offer;
    const { payload, requirements, group, presentation } = payment;
    const expected: ExpectedSettlement = {
      txid: group.txid,
      network: requirements.network,
      payer: group.payer,
    };
    // The body offered for this payment, kept with its claim: if the settle answer is lost, a later retry delivers
    // it (what was paid for), never whatever the file became since (newer, stale, future-dated or missing).
    const offered = offers.servedBody(point, file.text);
    const claimedAt = deps.now();
    const claim = await book.claim(group.txid, presentation, offered);
    const known = await answerFromBook(claim, offer, payment, notForSale);
    if (known) return known;
    const { paymentId } = payment;
    if (paymentId !== null) {
      // A new payment takes its id or is refused; a resumed one (it may have landed) keeps it, never refused.
      if (claim.state === 'claimed') {
        const refused = await paymentIds.bind(point, group.txid, paymentId);
        if (refused) return refused;
      } else await paymentIds.keep(point, group.txid, paymentId);
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
          ? await settler.resume(attempt, notForSale ?? soldOut)
          : await settler.settleAndDeliver(attempt);
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
      const served = outcome?.kind === 'serve';
      // An error naming the transaction means the payment may have landed: the next try must find out first.
      const mayHaveLanded = outcome?.kind === 'error' && outcome.body.transaction !== null;
      if (!served) {
        await (
          mayHaveLanded ? book.pending(group.txid, presentation, attemptedAt, body) : book.release(group.txid)
        ).catch((error: unknown) => {
          // The answer stands; a claim the book could not update lapses after its lease (IN_FLIGHT_LEASE_MS),
          // when the payment's next try finds out on chain whether it landed.
          log({
            level: 'error',
            event: 'payment_book_failed',
            path: point.path,
            txid: group.txid,
            detail: `${mayHaveLanded ? 'pending' : 'release'}: ${describeError(error)}`,
          });
        });
        if (reserved) await deps.hooks?.release(point, group.txid);
      }
      // Its id goes with the payment's record: kept (its time refreshed with the record's) or freed.
      if (paymentId !== null) {
        const { txid } = group;
        await (served || mayHaveLanded ? paymentIds.keep : paymentIds.unbind)(point, txid, paymentId);
      }
    }
  }

  return { decide };
}
