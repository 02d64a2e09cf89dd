// Pins for the fee-payer policy (core/group-policy.ts) that a mutation audit found unguarded. The published rule
// "the only other transaction allowed is a zero payment from the fee payer to itself" is held to all of its parts,
// not only to rekey and close-to: a payment from anyone else, or of 1 microALGO, is refused before the facilitator is
// asked to settle, as is a clawback-style transfer (asset sender set) that would move someone else's USDC. A fee
// exactly at the cap is accepted: the cap is the highest fee allowed, not the first one refused.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { DEFAULT_GROUP_POLICY } from '../paywall-worker/core/group-policy.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import {
  fetchChallenge,
  ledgerParams,
  paymentHeader,
  resourceById,
  writePaidFixtures,
} from './paywall-harness.ts';
import { startSettleProxy } from './publishers-harness.ts';

const resource = resourceById('paidMarketRegime');
const payer = algosdk.generateAccount();
let paidDir: string;
let chain: DevFacilitator;
let proxy: Awaited<ReturnType<typeof startSettleProxy>>;
let worker: PaywallServer;
let paymentRequired: PaymentRequired;
let offer: PaymentRequirements;

beforeAll(async () => {
  paidDir = await mkdtemp(join(tmpdir(), 'emi-group-shape-'));
  await writePaidFixtures(paidDir);
  chain = await startDevFacilitator();
  proxy = await startSettleProxy(chain.url); // counts the settle calls the paywall makes
  const payTo = algosdk.generateAccount().addr.toString();
  chain.ledger.optIn(payTo);
  chain.ledger.fund(payer.addr.toString(), 1_000_000n);
  worker = await startPaywallServer({
    port: 0,
    payTo,
    facilitatorUrl: proxy.url,
    baseUrl: 'http://127.0.0.1:8080',
    storage: createFsStorage(paidDir),
    allowSimulated: true,
    indexerUrl: chain.url,
  });
  paymentRequired = (await fetchChallenge(url())).paymentRequired;
  offer = paymentRequired.accepts[0] as PaymentRequirements;
});
afterAll(async () => {
  await worker?.close();
  await proxy?.close();
  await chain?.close();
  await rm(paidDir, { recursive: true, force: true });
});

const url = () => `${worker.url}${resource.path}`;
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

interface Change {
  /** Who sends the other transaction (default the fee payer). */
  otherSender?: string;
  /** What the other transaction pays (default 0). */
  otherAmount?: bigint;
  /** The other transaction's fee (default 2,000 microALGO: both transactions' minimum). */
  fee?: bigint;
  /** The USDC transfer moves this account's USDC (a clawback) instead of the signer's. */
  assetSender?: string;
}

/** The exact scheme's group (the other transaction, then the signed USDC transfer) with one change. */
function group(change: Change = {}): PaymentPayload {
  const params = ledgerParams(chain);
  const feePayer = offer.extra.feePayer as string;
  const otherSender = change.otherSender ?? feePayer;
  const other = algosdk.makePaymentTxnWithSuggestedParamsFromObject({
    sender: otherSender,
    receiver: otherSender,
    amount: change.otherAmount ?? 0n,
    suggestedParams: { ...params, fee: change.fee ?? 2000n },
  });
  const transfer = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: payer.addr,
    receiver: offer.payTo,
    assetSender: change.assetSender,
    assetIndex: Number(offer.asset),
    amount: BigInt(offer.amount),
    suggestedParams: params,
  });
  algosdk.assignGroupID([other, transfer]);
  return {
    x402Version: 2,
    accepted: offer,
    resource: paymentRequired.resource,
    extensions: paymentRequired.extensions,
    payload: {
      paymentGroup: [b64(algosdk.encodeUnsignedTransaction(other)), b64(transfer.signTxn(payer.sk))],
      paymentIndex: 1,
    },
  };
}

describe('the only other transaction allowed is a zero payment from the fee payer to itself', () => {
  const someoneElse = algosdk.generateAccount().addr.toString();
  it.each([
    ['a payment from an account other than the fee payer', { otherSender: someoneElse }],
    ['a 1 microALGO payment by the fee payer to itself', { otherAmount: 1n }],
    ['a USDC transfer that names an asset sender (a clawback)', { assetSender: someoneElse }],
  ] as [string, Change][])('refuses %s with 402 payment_group_shape, never settled', async (_, change) => {
    const feePayer = offer.extra.feePayer as string;
    const before = {
      settleCalls: proxy.state.settleCalls,
      usdc: chain.ledger.assetBalance(payer.addr.toString()),
      algo: chain.ledger.algoBalance(feePayer),
    };
    const response = await fetch(url(), { headers: paymentHeader(group(change)) });
    expect(response.status).toBe(402);
    expect(PaymentRequiredBody.parse(await response.json()).error).toBe('payment_group_shape');
    expect(proxy.state.settleCalls).toBe(before.settleCalls);
    expect(chain.ledger.assetBalance(payer.addr.toString())).toBe(before.usdc);
    expect(chain.ledger.algoBalance(feePayer)).toBe(before.algo);
  });
});

describe('the fee cap', () => {
  it('accepts a fee-payer fee exactly at the cap', async () => {
    expect(DEFAULT_GROUP_POLICY.maxFeePayerFeeMicroAlgos).toBe(10_000n);
    const settleCalls = proxy.state.settleCalls;
    const response = await fetch(url(), { headers: paymentHeader(group({ fee: 10_000n })) });
    expect(response.status).toBe(200);
    expect(proxy.state.settleCalls).toBe(settleCalls + 1);
  });
});
