// What a facilitator's settle answer is worth: a verdict on the payment (trusted, as a success is, and remembered for
// a few seconds), or a lost answer after which the payment may have landed (found out on chain, never released as if
// nothing happened); and how a confirmation found on chain is dated against the attempt that may have landed it.
import { SettleError } from '@x402/core/types';
import type { SettleResponse } from '@x402/core/types';

/**
 * How a confirmation's age is read after a lost settle answer: rounds since its block (the indexer's own count, so
 * no two clocks are compared) times a lower bound of Algorand's round time (about 2.8 s), which can only make it look
 * younger, in the buyer's favour; it counts as this attempt's when it is younger than the attempt plus a minute (the
 * attempt may be an earlier request, its book entry older than its settle call).
 */
export const MIN_ROUND_MS = 2_500;
export const LANDING_MARGIN_MS = 60_000;

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
export const isVerdict = (reason: string | undefined): boolean =>
  reason === 'insufficient_funds' ||
  (reason !== undefined && reason.startsWith('invalid_') && !reason.endsWith('_confirmation_failed'));

/**
 * How long the facilitator's verdict on a payment is repeated without asking it again (ms). A refused payment sent
 * again in a loop would otherwise be one settle call (and one log line) per try. A verdict on the same signed bytes
 * does not change within seconds; the one that can (insufficient_funds, an asset not opted in: the buyer funds or
 * opts in, which takes a few seconds on Algorand) can be tried again after this short wait, which the 402 states.
 */
export const REFUSAL_MEMORY_MS = 10_000;

export const refusalRule = (): string =>
  `This refusal is repeated for ${REFUSAL_MEMORY_MS / 1000} s without asking the facilitator again; if you ` +
  'removed its cause (funded the account, opted in to the asset), send the same payment again after that.';

/** A settle error that is no verdict (see isVerdict): the answer is lost, the payment may have landed. */
export const lostAnswer = (error: unknown): boolean =>
  !(error instanceof SettleError) || (error.statusCode >= 500 && !isVerdict(error.errorReason));

/**
 * A settle error (thrown for a non-2xx answer) as the failed SettleResponse it carries, on the network the payment
 * was offered on when the error names none: passed on to the buyer as PAYMENT-RESPONSE, as x402 returns one.
 */
export const settleResponseOfError = (
  error: SettleError,
  network: SettleResponse['network'],
): SettleResponse => ({
  success: false,
  errorReason: error.errorReason,
  errorMessage: error.errorMessage,
  payer: error.payer,
  transaction: error.transaction ?? '',
  network: error.network ?? network,
});
