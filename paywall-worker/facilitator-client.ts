// The facilitator as the paywall's resource server sees it: `/supported` in the short network spelling whichever
// one the facilitator uses, and one settle call per payment and request even when the official resource server asks
// twice (x402's `settlement_pending`, see normalizingClient). The HTTP app wraps every facilitator client in it.
import type { FacilitatorClient } from '@x402/core/server';
import { SettleError } from '@x402/core/types';
import type { PaymentPayload, SettleResponse } from '@x402/core/types';
import { settleResponseOfError } from './core/verdict.ts';
import { normalizeNetwork } from './network.ts';

/** x402's reason for a payment submitted but not final yet. */
const SETTLEMENT_PENDING = 'settlement_pending';

/** A failed settle answer naming the transaction it submitted, thrown (non-2xx) or returned, as a SettleResponse. */
function pendingAnswer(
  answer: SettleResponse | SettleError,
  requirements: { network: SettleResponse['network'] },
): SettleResponse | null {
  if (answer instanceof SettleError) {
    if (answer.errorReason !== SETTLEMENT_PENDING || !answer.transaction) return null;
    return settleResponseOfError(answer, requirements.network);
  }
  return !answer.success && answer.errorReason === SETTLEMENT_PENDING && answer.transaction ? answer : null;
}

/**
 * Reads `/supported` in the short network spelling, whichever one the facilitator uses; and settles each payment
 * once per request. On x402's `settlement_pending` (submitted, not final) the official resource server calls settle
 * a second time with the same payload, for a facilitator that keeps pending transactions; the AVM one keeps none,
 * finds the transaction in the ledger and refuses it, naming no transaction, which would read as "nothing was
 * submitted". That second call gets the first answer again instead, and the core reconciles it on chain as any
 * settlement submitted but not confirmed (the payment stays pending until the chain tells).
 */
export function normalizingClient(client: FacilitatorClient): FacilitatorClient {
  const pending = new WeakMap<PaymentPayload, SettleResponse>();
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    async settle(payload, requirements) {
      const earlier = pending.get(payload);
      if (earlier) {
        pending.delete(payload);
        return earlier;
      }
      let answer: SettleResponse;
      try {
        answer = await client.settle(payload, requirements);
      } catch (error) {
        const submitted = error instanceof SettleError ? pendingAnswer(error, requirements) : null;
        if (!submitted) throw error;
        answer = submitted;
      }
      if (pendingAnswer(answer, requirements)) pending.set(payload, answer);
      return answer;
    },
    async getSupported() {
      const supported = await client.getSupported();
      const kinds = supported.kinds.map((k) => ({
        ...k,
        network: normalizeNetwork(k.network) as typeof k.network,
      }));
      return { ...supported, kinds };
    },
  };
}
