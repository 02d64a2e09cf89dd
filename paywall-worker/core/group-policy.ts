// The fee-payer policy: the exact group shape the x402 `exact` scheme on Algorand needs, checked before the
// facilitator is asked anything. The facilitator's fee payer signs whatever fee-payer transactions a group
// carries, so a group with extra or expensive ones would burn the operator's ALGO on somebody else's behalf.
import algosdk from 'algosdk';
import type { PaymentRequirements } from '@x402/core/types';
import { base64ToBytes } from '../payment-header.ts';

export interface GroupPolicy {
  /** Highest fee (microALGO) the fee payer's transaction may carry; it pays for the whole group. */
  maxFeePayerFeeMicroAlgos: bigint;
}

/** Two transactions at the minimum fee, with room for fee-per-byte surges (0.01 ALGO). */
export const DEFAULT_GROUP_POLICY: GroupPolicy = { maxFeePayerFeeMicroAlgos: 10_000n };

export type GroupCheck =
  | {
      ok: true;
      txid: string;
      payer: string;
      lastValid: bigint;
      /**
       * The signed payment transaction's bytes in canonical base64. The transaction id leaves the signature out, so
       * these bytes tell the signed payment from a copy rebuilt without (or with another) signature; once it has
       * landed, though, its signature is public too, and only the payment identifier it was sent with tells its
       * buyer from an onlooker (see presentationOf).
       */
      signedPayment: string;
    }
  | { ok: false; reason: string; message: string };

const refuse = (reason: string, message: string): GroupCheck => ({ ok: false, reason, message });

interface Member {
  txn: algosdk.Transaction;
  /** Carries a signature of any kind (single, multisig or logic); the facilitator checks that it is valid. */
  signed: boolean;
  bytes: Uint8Array;
}

/** A group member: signed (the buyer's payment) or unsigned (the fee payer's, which the facilitator signs). */
function decode(base64: string): Member | null {
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(base64);
  } catch {
    return null;
  }
  try {
    const signed = algosdk.decodeSignedTransaction(bytes);
    return { txn: signed.txn, signed: Boolean(signed.sig ?? signed.msig ?? signed.lsig), bytes };
  } catch {
    try {
      return { txn: algosdk.decodeUnsignedTransaction(bytes), signed: false, bytes };
    } catch {
      return null;
    }
  }
}

const noSideEffects = (txn: algosdk.Transaction): boolean =>
  !txn.rekeyTo && !txn.payment?.closeRemainderTo && !txn.assetTransfer?.closeRemainderTo;

/** The transaction id and canonical bytes of a signed payment transaction, or null when it is not one. */
export function signedPaymentOf(base64: string | undefined): { txid: string; signedPayment: string } | null {
  const member = base64 === undefined ? null : decode(base64);
  if (!member?.signed) return null;
  return { txid: member.txn.txID(), signedPayment: algosdk.bytesToBase64(member.bytes) };
}

export function checkPaymentGroup(
  group: readonly string[],
  paymentIndex: number,
  requirements: PaymentRequirements,
  policy: GroupPolicy = DEFAULT_GROUP_POLICY,
): GroupCheck {
  const feePayer = typeof requirements.extra?.feePayer === 'string' ? requirements.extra.feePayer : null;
  if (group.length > (feePayer ? 2 : 1)) {
    return refuse(
      'payment_group_shape',
      `The payment group has ${group.length} transactions; the exact scheme needs the payment and at most one fee-payer transaction`,
    );
  }
  const members = group.map(decode);
  const txns = members.map((member) => member?.txn ?? null);
  const paid = members[paymentIndex];
  const payment = paid?.txn;
  if (!paid || !payment || txns.some((t) => t === null)) {
    return refuse('invalid_payment_transaction', 'A transaction of the payment group does not decode');
  }
  if (!paid.signed) {
    return refuse('invalid_payment_transaction', 'The payment transaction is not signed');
  }
  const transfer = payment.assetTransfer;
  if (payment.type !== algosdk.TransactionType.axfer || !transfer) {
    return refuse('payment_group_shape', 'The payment transaction is not an asset transfer');
  }
  if (
    transfer.assetIndex.toString() !== requirements.asset ||
    transfer.receiver.toString() !== requirements.payTo ||
    transfer.amount.toString() !== requirements.amount ||
    transfer.assetSender
  ) {
    return refuse(
      'payment_group_shape',
      `The payment must transfer exactly ${requirements.amount} of asset ${requirements.asset} to ${requirements.payTo}`,
    );
  }
  if (!noSideEffects(payment)) {
    return refuse('payment_group_shape', 'The payment transaction may not close or rekey an account');
  }
  for (const [i, txn] of txns.entries()) {
    if (i === paymentIndex || !txn) continue;
    const sender = txn.sender.toString();
    const pay = txn.payment;
    if (
      txn.type !== algosdk.TransactionType.pay ||
      !pay ||
      sender !== feePayer ||
      pay.receiver.toString() !== sender ||
      pay.amount !== 0n
    ) {
      return refuse(
        'payment_group_shape',
        'The only other transaction allowed is a zero payment from the fee payer to itself',
      );
    }
    if (!noSideEffects(txn)) {
      return refuse('payment_group_shape', 'The fee-payer transaction may not close or rekey an account');
    }
    if (txn.fee > policy.maxFeePayerFeeMicroAlgos) {
      return refuse(
        'fee_above_cap',
        `The fee-payer transaction's fee ${txn.fee} microALGO is above the cap of ${policy.maxFeePayerFeeMicroAlgos}`,
      );
    }
  }
  return {
    ok: true,
    txid: payment.txID(),
    payer: payment.sender.toString(),
    lastValid: payment.lastValid,
    signedPayment: algosdk.bytesToBase64(paid.bytes),
  };
}
