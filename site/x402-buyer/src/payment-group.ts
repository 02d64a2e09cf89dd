// Builds the transaction group the x402 `exact` scheme on Algorand calls for, with algosdk directly (the official
// @x402/avm client needs an algod client object and Node's Buffer; this keeps the browser bundle plain).
// With extra.feePayer: [pay 0 feePayer -> feePayer carrying the whole group fee, left unsigned for the facilitator;
// axfer buyer -> payTo of exactly `amount` of `asset`, fee 0, signed by the buyer], paymentIndex 1.
// Without a fee payer: one self-funded axfer, paymentIndex 0.
// The page imports this module (and algosdk with it) on demand, when a payment is prepared: see x402-flow.ts.
import algosdk from 'algosdk';
import type { PaymentRequirement } from '../../../generator/buyer/challenge.ts';
import { ALGORAND_MAINNET_GENESIS_HASH } from '../../../generator/buyer/human-report-terms.ts';
import type { LedgerParams } from './ledger-params.ts';
import { WrongNetworkError } from './ledger-params.ts';

// Kept importable from here, where they were: they live in ledger-params.ts so that the page's first load, which
// reads them, does not carry algosdk.
export type { LedgerParams } from './ledger-params.ts';
export { WrongNetworkError, parseAlgodParams } from './ledger-params.ts';

export interface PaymentGroup {
  txns: algosdk.Transaction[];
  paymentIndex: number;
  /** Id of the buyer's transfer: the transaction the proof of payment names. */
  paymentTxId: string;
}

/** Seconds per Algorand round, rounded down so the window is never shorter than the challenge allows. */
const SECONDS_PER_ROUND = 2.5;

/** Rounds the signed payment stays valid: the challenge's time limit, between 10 and the protocol's 1000. */
export const validityRounds = (maxTimeoutSeconds: number): bigint =>
  BigInt(Math.min(1000, Math.max(10, Math.ceil(maxTimeoutSeconds / SECONDS_PER_ROUND))));

const noteText = (label: string, nonce: string): Uint8Array => new TextEncoder().encode(`${label}-${nonce}`);

export function buildPaymentGroup(
  requirement: PaymentRequirement,
  buyer: string,
  params: LedgerParams,
  /** Makes every purchase's transaction ids unique, even with identical terms in the same rounds. */
  nonce: string,
): PaymentGroup {
  if (params.genesisHash !== ALGORAND_MAINNET_GENESIS_HASH) {
    throw new WrongNetworkError(
      'The Algorand node answered for another network, not mainnet. Nothing was signed.',
    );
  }
  // The page checks its payee's checksum before it gets here (config.ts, confirmPayee); this is the last guard.
  if (!algosdk.isValidAddress(requirement.payTo)) {
    throw new Error(`The payee's address ${requirement.payTo} fails its checksum. Nothing was signed.`);
  }
  const base = {
    fee: 0,
    minFee: params.minFee,
    flatFee: true,
    firstValid: params.lastRound,
    lastValid: params.lastRound + validityRounds(requirement.maxTimeoutSeconds),
    genesisID: params.genesisId,
    genesisHash: algosdk.base64ToBytes(params.genesisHash),
  };
  const feePayer = typeof requirement.extra.feePayer === 'string' ? requirement.extra.feePayer : undefined;
  const transfer = (fee: bigint) =>
    algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: buyer,
      receiver: requirement.payTo,
      assetIndex: BigInt(requirement.asset),
      amount: BigInt(requirement.amount),
      note: noteText('x402-payment-v2', nonce),
      suggestedParams: { ...base, fee },
    });

  if (!feePayer) {
    const fee = feeFor(transfer(params.minFee), params);
    const txn = transfer(fee);
    return { txns: [txn], paymentIndex: 0, paymentTxId: txn.txID() };
  }
  const feeTxn = (fee: bigint) =>
    algosdk.makePaymentTxnWithSuggestedParamsFromObject({
      sender: feePayer,
      receiver: feePayer,
      amount: 0,
      note: noteText('x402-fee-payer', nonce),
      suggestedParams: { ...base, fee },
    });
  // The fee payer covers the pooled fee of both transactions, sized like the official client does.
  const groupFee = feeFor(feeTxn(params.minFee), params) + feeFor(transfer(0n), params);
  const txns = algosdk.assignGroupID([feeTxn(groupFee), transfer(0n)]);
  return { txns, paymentIndex: 1, paymentTxId: (txns[1] as algosdk.Transaction).txID() };
}

/** max(fee per byte x encoded size, minimum fee): the protocol's fee rule for one transaction. */
function feeFor(txn: algosdk.Transaction, params: LedgerParams): bigint {
  const bySize = params.feePerByte * BigInt(txn.toByte().length);
  return bySize > params.minFee ? bySize : params.minFee;
}

/** The x402 payload: every transaction as base64 msgpack, the buyer's signed, the fee payer's unsigned. */
export function encodePaymentGroup(group: PaymentGroup, signedPayment: Uint8Array): string[] {
  return group.txns.map((txn, i) =>
    algosdk.bytesToBase64(i === group.paymentIndex ? signedPayment : algosdk.encodeUnsignedTransaction(txn)),
  );
}

/** Refuses a wallet's answer unless it is our exact transfer, signed (the facilitator checks the signature itself). */
export function checkSignedPayment(group: PaymentGroup, signed: Uint8Array): void {
  let stxn: algosdk.SignedTransaction;
  try {
    stxn = algosdk.decodeSignedTransaction(signed);
  } catch {
    throw new Error('The wallet returned something that is not a signed transaction.');
  }
  if (stxn.txn.txID() !== group.paymentTxId) throw new Error('The wallet signed a different transaction.');
  if (!stxn.sig) throw new Error('The wallet returned the transaction without a single-key signature.');
  // x402 facilitators check the signature against the sender's own key, so a rekeyed account cannot pay.
  if (stxn.sgnr)
    throw new Error("This account is rekeyed to another key; x402 payments need the account's own key.");
}
