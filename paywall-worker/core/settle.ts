// Settling a checked, claimed payment and delivering it, or finding out on chain what became of it: the facilitator
// verifies and settles; a success is served only when it names this payment; a verdict is trusted (and remembered,
// core/memories.ts); any other failure or a lost answer is reconciled on chain (confirmed: delivered; expired
// unconfirmed: refused; otherwise reported unknown, and the payment stays pending in the book for its next try).
// A charged buyer always ends with the file or an answer naming the transaction to send again.
import { SettleError, VerifyError } from '@x402/core/types';
import type { SettleResponse } from '@x402/core/types';
import { classifyFacilitatorError, describeError, mayHaveReachedFacilitator } from '../facilitator-errors.ts';
import type { Offer } from '../offers.ts';
import type { ChainStatus } from './chain-lookup.ts';
import { challengeWith, fail } from './answers.ts';
import type { Attempt, CoreDeps, Decision, ErrorStatus, PaywallLogEntry } from './decision.ts';
import type { RefusalMemory } from './memories.ts';
import {
  confirmedSettlement,
  failureToPassOn,
  inOfferSpelling,
  notSettled,
  settlementMismatch,
} from './settlement.ts';
import {
  LANDING_MARGIN_MS,
  MIN_ROUND_MS,
  isVerdict,
  lostAnswer,
  refusalRule,
  settleResponseOfError,
} from './verdict.ts';

export interface Settler {
  /** Verifies and settles a new attempt, then delivers it, refuses it or reconciles it on chain. */
  settleAndDeliver(attempt: Attempt): Promise<Decision>;
  /**
   * An earlier attempt's settle answer was lost: find out first. `notForSale` (the file may no longer be sold, or
   * the seller has no credit): then it is never settled again, only delivered if the chain shows it landed.
   */
  resume(attempt: Attempt, notForSale: Decision | null): Promise<Decision>;
  /** The 402 of a verdict the facilitator gave (now, or within REFUSAL_MEMORY_MS on the same presentation). */
  refusalOf(offer: Offer, txid: string, settlement: SettleResponse): Decision;
}

export function createSettler(
  deps: CoreDeps,
  log: (entry: PaywallLogEntry) => void,
  refusals: RefusalMemory,
): Settler {
  const { server, book } = deps;

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
        return challengeWith(
          offer,
          reason,
          `The facilitator refused the payment: ${verification.invalidMessage ?? reason}.`,
        );
      }
    } catch (error) {
      if (error instanceof VerifyError) {
        return challengeWith(
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
        return reconcile(attempt, () =>
          outcomeUnknown(attempt, failure.status, failure.error, failure.message),
        );
      }
      if (!(error instanceof SettleError)) throw error; // lostAnswer took every other error
      settlement = settleResponseOfError(error, requirements.network);
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
      return reconcile(attempt, () =>
        outcomeUnknown(attempt, 502, 'settlement_not_for_this_payment', message),
      );
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
      return reconcile(attempt, () => outcomeUnknown(attempt, 502, reason, message, settlement));
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
    if (!attempt.resumed) refusals.remember(attempt.presentation, settlement);
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
    const passedOn = failureToPassOn(settlement, txid);
    return challengeWith(offer, reason, `Settlement was refused: ${why}. ${refusalRule()}`, passedOn);
  }

  /**
   * Records and serves a settled payment, logging the sale (`sold`, the only trace of it once the book forgets the
   * payment) and, for a payment whose earlier try ended unknown and which this retry settled, the line that closes
   * that alert (`settled_after_unknown`; one found confirmed on chain is closed by `reconciled_confirmed`).
   */
  async function deliver(
    attempt: Attempt,
    answer: SettleResponse,
    confirmedOnChain = false,
  ): Promise<Decision> {
    const { offer, expected, presentation: payment, body, resumed } = attempt;
    const { path, payTo, amountAtomic } = offer.point;
    const settlement = inOfferSpelling(answer);
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
      return challengeWith(
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
      outcomeUnknown(
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
        challengeWith(
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
  function outcomeUnknown(
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
    const passedOn = settlement && failureToPassOn(settlement, txid);
    return Promise.resolve(passedOn ? { ...decision, settlement: passedOn } : decision);
  }

  return { settleAndDeliver, resume, refusalOf };
}
