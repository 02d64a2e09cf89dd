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
