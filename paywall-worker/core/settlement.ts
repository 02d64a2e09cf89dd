// Whether a facilitator's "success" is the settlement of this payment: the transaction it names must be the one
// the buyer signed, on the offered network, from the buyer (when the facilitator names a payer). A success that
// names nothing, or another transaction, proves nothing about this payment.
import type { SettleResponse } from '@x402/core/types';
import { normalizeNetwork } from '../network.ts';

export interface ExpectedSettlement {
  txid: string;
  network: string;
  payer: string;
}

export function settlementMismatch(settlement: SettleResponse, expected: ExpectedSettlement): string | null {
  if (!settlement.transaction) return 'names no transaction';
  if (settlement.transaction !== expected.txid) {
    return `names transaction ${settlement.transaction}, not the payment ${expected.txid}`;
  }
  if (!settlement.network || normalizeNetwork(settlement.network) !== normalizeNetwork(expected.network)) {
    return `is on network ${settlement.network || '(none)'}, not ${expected.network}`;
  }
  if (settlement.payer && settlement.payer !== expected.payer) {
    return `names payer ${settlement.payer}, not ${expected.payer}`;
  }
  return null;
}

/** A facilitator's answer with its network in the offers' spelling (CAIP-2 genesis hash, short form). */
export const inOfferSpelling = (settlement: SettleResponse): SettleResponse =>
  settlement.network
    ? { ...settlement, network: normalizeNetwork(settlement.network) as SettleResponse['network'] }
    : settlement;

/**
 * A facilitator's failed answer as the worker passes it on (PAYMENT-RESPONSE, MCP's `_meta`): in the offers'
 * spelling, or none at all when it names another transaction than this payment's, which a buyer must not be told is
 * theirs.
 */
export const failureToPassOn = (settlement: SettleResponse, txid: string): SettleResponse | undefined =>
  settlement.transaction && settlement.transaction !== txid ? undefined : inOfferSpelling(settlement);

/** The settlement response the worker hands out when it confirmed the payment on chain itself. */
export const confirmedSettlement = (expected: ExpectedSettlement, amount: string): SettleResponse => ({
  success: true,
  transaction: expected.txid,
  network: normalizeNetwork(expected.network) as SettleResponse['network'],
  payer: expected.payer,
  amount,
});

/** The failed settlement of a payment that can never land: its validity window passed unconfirmed. */
export const notSettled = (expected: ExpectedSettlement): SettleResponse => ({
  success: false,
  errorReason: 'payment_not_settled',
  errorMessage: 'not confirmed within its validity window',
  transaction: expected.txid,
  network: normalizeNetwork(expected.network) as SettleResponse['network'],
  payer: expected.payer,
});
