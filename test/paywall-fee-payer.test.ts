// The fee-payer policy: groups built by hand, as an attacker would, that carry extra or expensive fee-payer
// transactions, close-to or rekey fields. Each is refused with a clear 402 before the facilitator is asked, and
// neither the buyer's USDC nor the fee payer's ALGO moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { checkPaymentGroup } from '../paywall-worker/core/group-policy.ts';
import { fetchChallenge, ledgerParams, paymentHeader, resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
let stack: Stack;
let offer: PaymentRequirements;
let paymentRequired: PaymentRequired;
const payer = algosdk.generateAccount();

beforeAll(async () => {
  stack = await startStack();
  stack.facilitator.ledger.fund(payer.addr.toString(), 1_000_000n);
  paymentRequired = (await fetchChallenge(stack.url(resource))).paymentRequired;
  offer = paymentRequired.accepts[0] as PaymentRequirements;
});
afterAll(async () => {
  await stack?.close();
});

interface Shape {
  feeTxns?: number;
  fee?: bigint;
  closeTo?: 'fee' | 'payment';
  rekey?: 'fee' | 'payment';
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** A group like the exact scheme's, with `feeTxns` fee-payer transactions and the changes asked for. */
function group(shape: Shape = {}): PaymentPayload {
  const params = ledgerParams(stack.facilitator);
  const feePayer = offer.extra.feePayer as string;
  const other = algosdk.generateAccount().addr.toString();
  const count = shape.feeTxns ?? 1;
  const feeTxns = Array.from({ length: count }, (_, i) =>
    algosdk.makePaymentTxnWithSuggestedParamsFromObject({
      sender: feePayer,
      receiver: feePayer,
      amount: 0,
      note: new Uint8Array([i]),
      closeRemainderTo: shape.closeTo === 'fee' ? other : undefined,
      rekeyTo: shape.rekey === 'fee' ? other : undefined,
      suggestedParams: { ...params, fee: shape.fee ?? 1000n * BigInt(count + 1) },
    }),
  );
  const payTxn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: payer.addr,
    receiver: offer.payTo,
    assetIndex: Number(offer.asset),
    amount: BigInt(offer.amount),
    closeRemainderTo: shape.closeTo === 'payment' ? other : undefined,
    rekeyTo: shape.rekey === 'payment' ? other : undefined,
    suggestedParams: params,
  });
  const txns = [...feeTxns, payTxn];
  algosdk.assignGroupID(txns);
  return {
    x402Version: 2,
    accepted: offer,
    resource: paymentRequired.resource,
    extensions: paymentRequired.extensions,
    payload: {
      paymentGroup: [
        ...feeTxns.map((t) => b64(algosdk.encodeUnsignedTransaction(t))),
        b64(payTxn.signTxn(payer.sk)),
      ],
      paymentIndex: count,
    },
  };
}

async function expectRefused(payload: PaymentPayload, error: string, message: RegExp) {
  const { ledger } = stack.facilitator;
  const feePayer = offer.extra.feePayer as string;
  const before = { usdc: ledger.assetBalance(payer.addr.toString()), algo: ledger.algoBalance(feePayer) };
  const response = await fetch(stack.url(resource), { headers: paymentHeader(payload) });
  expect(response.status).toBe(402);
  const body = PaymentRequiredBody.parse(await response.json());
  expect(body.error).toBe(error);
  expect(body.message).toMatch(message);
  expect(ledger.assetBalance(payer.addr.toString())).toBe(before.usdc);
  expect(ledger.algoBalance(feePayer)).toBe(before.algo);
}

describe('fee-payer policy before verify', () => {
  it('accepts the exact shape: one zero fee-payer payment and the transfer', async () => {
    const response = await fetch(stack.url(resource), { headers: paymentHeader(group()) });
    expect(response.status).toBe(200);
  });

  it.each([2, 5, 15])('refuses a group with %i fee-payer transactions', async (feeTxns) => {
    await expectRefused(group({ feeTxns }), 'payment_group_shape', /at most one fee-payer transaction/);
  });

  it('refuses a fee-payer transaction whose fee is above the cap', async () => {
    await expectRefused(group({ fee: 1_000_000n }), 'fee_above_cap', /above the cap of 10000/);
  });

  it.each(['fee', 'payment'] as const)('refuses a close-to on the %s transaction', async (where) => {
    await expectRefused(group({ closeTo: where }), 'payment_group_shape', /close or rekey/);
  });

  it.each(['fee', 'payment'] as const)('refuses a rekey on the %s transaction', async (where) => {
    await expectRefused(group({ rekey: where }), 'payment_group_shape', /close or rekey/);
  });

  it('the policy alone names the payment transaction and its payer', () => {
    const payload = group();
    const { paymentGroup, paymentIndex } = payload.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const result = checkPaymentGroup(paymentGroup, paymentIndex, offer);
    expect(result).toMatchObject({ ok: true, payer: payer.addr.toString() });
    const cap = checkPaymentGroup(paymentGroup, paymentIndex, offer, { maxFeePayerFeeMicroAlgos: 1000n });
    expect(cap).toMatchObject({ ok: false, reason: 'fee_above_cap' });
  });
});
