// Payments that must not be served: wrong terms, tampered echoes, expired or foreign transactions, replays and
// malformed headers. Every refusal is a 402 with a fresh challenge, and the ledger does not move.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { MAX_PAYMENT_HEADER_CHARS } from '../paywall-worker/payment-header.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import {
  base64,
  fetchChallenge,
  newBuyer,
  ledgerParams,
  paymentHeader,
  resourceById,
  startStack,
  writePaidFixtures,
} from './paywall-harness.ts';
import type { Buyer, Stack } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
const TESTNET_GENESIS_HASH = 'SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=';

let stack: Stack;
let buyer: Buyer;
beforeAll(async () => {
  stack = await startStack();
  buyer = await newBuyer(stack.facilitator);
});
afterAll(async () => {
  await stack?.close();
});

async function send(headers: Record<string, string>) {
  const response = await fetch(stack.url(resource), { headers });
  const body = await response.json();
  return { response, body };
}

/** Sends a payment that must be refused and checks that nothing moved. */
async function expectRefused(payload: PaymentPayload, error: string | RegExp) {
  const { ledger } = stack.facilitator;
  const before = {
    payer: ledger.assetBalance(buyer.address),
    payee: ledger.assetBalance(stack.payTo),
    txns: ledger.transactionCount,
  };
  const { response, body } = await send(paymentHeader(payload));
  expect(response.status).toBe(402);
  expect(PaymentRequiredBody.parse(body).error).toMatch(error);
  const challenge = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!);
  expect(challenge.error).toBe(body.error);
  expect(challenge.accepts).toEqual(body.accepts);
  expect(ledger.assetBalance(buyer.address)).toBe(before.payer);
  expect(ledger.assetBalance(stack.payTo)).toBe(before.payee);
  expect(ledger.transactionCount).toBe(before.txns);
  return { response, body };
}

/** A payment whose transaction is built from changed terms while `accepted` echoes the offer unchanged. */
async function payWithTransactionFor(change: (r: PaymentRequirements) => PaymentRequirements) {
  const { paymentRequired } = await fetchChallenge(stack.url(resource));
  const payload = await buyer.pay(paymentRequired, change);
  return { ...payload, accepted: paymentRequired.accepts[0] as PaymentRequirements };
}

// The worker's own group policy refuses these before the facilitator is asked (see paywall-fee-payer.test.ts).
describe('payments for the wrong terms', () => {
  it('refuses a wrong amount', async () => {
    const { body } = await expectRefused(
      await payWithTransactionFor((r) => ({ ...r, amount: '5000' })),
      'payment_group_shape',
    );
    expect(body.message).toMatch(/exactly 10000 of asset 31566704/);
  });

  it('refuses a wrong asset', async () => {
    await expectRefused(
      await payWithTransactionFor((r) => ({ ...r, asset: '12345' })),
      'payment_group_shape',
    );
  });

  it('refuses a wrong payee', async () => {
    const elsewhere = algosdk.generateAccount().addr.toString();
    stack.facilitator.ledger.optIn(elsewhere);
    await expectRefused(
      await payWithTransactionFor((r) => ({ ...r, payTo: elsewhere })),
      'payment_group_shape',
    );
  });

  it('refuses a payment whose accepted names another network or scheme, with the x402 code', async () => {
    const testnet = 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe';
    const payload = await payWithTransactionFor((r) => r);
    await expectRefused(
      { ...payload, accepted: { ...payload.accepted, network: testnet } },
      'invalid_network',
    );
    await expectRefused({ ...payload, accepted: { ...payload.accepted, scheme: 'upto' } }, 'invalid_scheme');
  });

  it('refuses a transaction signed for another network (genesis hash)', async () => {
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    const offer = paymentRequired.accepts[0] as PaymentRequirements;
    const payer = algosdk.generateAccount();
    stack.facilitator.ledger.fund(payer.addr.toString(), 1_000_000n);
    const params = ledgerParams(stack.facilitator, { hash: TESTNET_GENESIS_HASH, id: 'testnet-v1.0' });
    const feeTxn = algosdk.makePaymentTxnWithSuggestedParamsFromObject({
      sender: offer.extra.feePayer as string,
      receiver: offer.extra.feePayer as string,
      amount: 0,
      suggestedParams: { ...params, fee: 2000n },
    });
    const payTxn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: payer.addr,
      receiver: offer.payTo,
      assetIndex: Number(offer.asset),
      amount: BigInt(offer.amount),
      suggestedParams: params,
    });
    algosdk.assignGroupID([feeTxn, payTxn]);
    const toB64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
    const payload: PaymentPayload = {
      x402Version: 2,
      accepted: offer,
      resource: paymentRequired.resource,
      payload: {
        paymentGroup: [toB64(algosdk.encodeUnsignedTransaction(feeTxn)), toB64(payTxn.signTxn(payer.sk))],
        paymentIndex: 1,
      },
    };
    const { body } = await expectRefused(payload, 'invalid_exact_avm_simulation_failed');
    expect(body.message).toMatch(/genesis hash/);
  });

  it('refuses an expired payment (validity rounds passed)', async () => {
    const payload = await payWithTransactionFor((r) => r);
    stack.facilitator.ledger.advance(50); // the client signs a 10-round window
    const { body } = await expectRefused(payload, 'invalid_exact_avm_simulation_failed');
    expect(body.message).toMatch(/validity window/);
  });

  it('refuses a signature that does not match the transaction', async () => {
    const payload = await payWithTransactionFor((r) => r);
    const group = (payload.payload as { paymentGroup: string[] }).paymentGroup;
    const signed = algosdk.decodeSignedTransaction(Buffer.from(group[1]!, 'base64'));
    const forged = algosdk.encodeMsgpack(
      new algosdk.SignedTransaction({ txn: signed.txn, sig: new Uint8Array(64).fill(7) }),
    );
    const tampered = {
      ...payload,
      payload: { ...payload.payload, paymentGroup: [group[0], Buffer.from(forged).toString('base64')] },
    };
    await expectRefused(tampered, 'invalid_exact_avm_invalid_signature');
  });
});

describe('tampered accepted', () => {
  it('refuses an accepted whose amount was lowered to match a cheaper transaction', async () => {
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    const payload = await buyer.pay(paymentRequired, (r) => ({ ...r, amount: '1' }));
    expect(payload.accepted.amount).toBe('1');
    await expectRefused(payload, 'payment_does_not_match');
  });

  it('refuses an accepted that dropped the fee payer', async () => {
    const payload = await payWithTransactionFor((r) => r);
    await expectRefused(
      { ...payload, accepted: { ...payload.accepted, extra: {} } },
      'payment_does_not_match',
    );
  });
});

describe('tampered extensions', () => {
  it('refuses a payment whose echoed discovery extension was changed', async () => {
    const payload = await payWithTransactionFor((r) => r);
    const bazaar = structuredClone(payload.extensions?.bazaar) as { info: { input: { method: string } } };
    bazaar.info.input.method = 'DELETE';
    await expectRefused({ ...payload, extensions: { bazaar } }, 'extension_echo_mismatch');
  });

  // The x402 packages look extension and `extra` names up in plain objects: `toString` found an inherited function
  // and threw, a 500 (and an error log line) that anyone could cause, instead of a refusal.
  it.each(['toString', 'constructor', 'hasOwnProperty', 'valueOf'])(
    'refuses an extension or an extra named %s as a malformed payload, not with a 500',
    async (name) => {
      const payload = await payWithTransactionFor((r) => r);
      const extensions = JSON.parse(`{${JSON.stringify(name)}:{}}`) as Record<string, unknown>;
      const { body } = await expectRefused(
        { ...payload, extensions: { ...payload.extensions, ...extensions } },
        'invalid_payload',
      );
      expect(body.message).toContain(`extensions.${name}`);
      const accepted = { ...payload.accepted, extra: { ...payload.accepted.extra, ...extensions } };
      await expectRefused({ ...payload, accepted }, 'invalid_payload');
    },
  );
});

describe('replays', () => {
  it('charges a payment once: the same payment again gets the same file and settlement, not a second charge', async () => {
    const payload = await payWithTransactionFor((r) => r);
    const first = await fetch(stack.url(resource), { headers: paymentHeader(payload) });
    expect(first.status).toBe(200);
    const paid = stack.facilitator.ledger.assetBalance(buyer.address);
    const txns = stack.facilitator.ledger.transactionCount;
    const again = await fetch(stack.url(resource), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(again.headers.get('PAYMENT-RESPONSE')).toBe(first.headers.get('PAYMENT-RESPONSE'));
    expect(await again.text()).toBe(await first.text());
    expect(stack.facilitator.ledger.assetBalance(buyer.address)).toBe(paid);
    expect(stack.facilitator.ledger.transactionCount).toBe(txns);
  });

  it('gives a retry the body it bought, not the data published since', async () => {
    const payload = await payWithTransactionFor((r) => r);
    const first = await fetch(stack.url(resource), { headers: paymentHeader(payload) });
    expect(first.status).toBe(200);
    const sold = await first.text();
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later `updated`
    await writePaidFixtures(stack.paidDir); // the next generation of the paid files
    const fresh = await readFile(join(stack.paidDir, resource.file), 'utf8');
    expect(fresh).not.toBe(sold);
    const again = await fetch(stack.url(resource), { headers: paymentHeader(payload) });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(sold);
  });

  it('serves a settled payment again only to its own signed bytes, not to a copy rebuilt from the chain', async () => {
    const payload = await payWithTransactionFor((r) => r);
    expect((await send(paymentHeader(payload))).response.status).toBe(200);
    // Every field of a confirmed transaction is public: a copy keeps the transaction id with another signature,
    // or none.
    const { paymentGroup, paymentIndex } = payload.payload as {
      paymentGroup: string[];
      paymentIndex: number;
    };
    const signed = algosdk.decodeSignedTransaction(Buffer.from(paymentGroup[paymentIndex]!, 'base64'));
    // A copy from the chain has no payment identifier: the buyer's id never left its own request.
    const withMember = (bytes: Uint8Array): PaymentPayload => ({
      ...payload,
      extensions: {},
      payload: {
        ...payload.payload,
        paymentGroup: paymentGroup.map((member, i) =>
          i === paymentIndex ? Buffer.from(bytes).toString('base64') : member,
        ),
      },
    });
    const unsigned = await expectRefused(
      withMember(algosdk.encodeUnsignedTransaction(signed.txn)),
      'invalid_payment_transaction',
    );
    expect(unsigned.body.message).toMatch(/not signed/);
    const otherKey = withMember(signed.txn.signTxn(algosdk.generateAccount().sk));
    const copied = await expectRefused(otherKey, 'payment_already_used');
    expect(copied.body.message).toMatch(/other signed bytes/);
    expect(copied.response.headers.get('PAYMENT-RESPONSE')).toBeNull();
  });

  it('serves exactly one of two identical payments sent at once', async () => {
    const payload = await payWithTransactionFor((r) => r);
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    const responses = await Promise.all(
      [1, 2, 3].map(() => fetch(stack.url(resource), { headers: paymentHeader(payload) })),
    );
    const statuses = responses.map((r) => r.status).sort();
    // The others are told the payment is in progress: a 503 to send it again, never a 402 inviting a new payment.
    expect(statuses).toEqual([200, 503, 503]);
    for (const busy of responses.filter((r) => r.status === 503)) {
      expect(busy.headers.get('PAYMENT-REQUIRED')).toBeNull();
      expect(busy.headers.get('Retry-After')).toBe('30');
      expect((await busy.json()).error).toBe('payment_in_progress');
    }
    expect(before - stack.facilitator.ledger.assetBalance(buyer.address)).toBe(BigInt(resource.amountAtomic));
  });

  it('a second worker without the first one’s memory is stopped by the ledger’s seen-transaction check', async () => {
    const payload = await payWithTransactionFor((r) => r);
    expect((await send(paymentHeader(payload))).response.status).toBe(200);
    // The settle of the copy is refused ("already in ledger"); the refusal stands (the chain, which would show the
    // payment landed, is asked only about lost answers).
    const before = stack.facilitator.ledger.assetBalance(buyer.address);
    const twin = await startPaywallServer({
      port: 0,
      payTo: stack.payTo,
      facilitatorUrl: stack.facilitator.url,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(stack.paidDir),
      allowSimulated: true,
      indexerUrl: stack.facilitator.url,
    });
    try {
      const response = await fetch(`${twin.url}${resource.path}`, { headers: paymentHeader(payload) });
      expect(response.status).toBe(402);
      const body = await response.json();
      expect(body.message).toMatch(/already in ledger/);
      expect(stack.facilitator.ledger.assetBalance(buyer.address)).toBe(before);
    } finally {
      await twin.close();
    }
  });
});

describe('malformed payment headers', () => {
  it.each([
    // x402's own codes (its specification's list); what exactly is wrong is in the message.
    ['not base64', '%%% not base64 %%%', 'invalid_payload', /not padded standard base64/],
    [
      'unpadded base64',
      base64('{"a":1}').replace(/=+$/, ''),
      'invalid_payload',
      /not padded standard base64/,
    ],
    ['base64 of non-JSON', base64('hello, world'), 'invalid_payload', /UTF-8 JSON/],
    [
      'base64 of invalid UTF-8',
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]).toString('base64'),
      'invalid_payload',
      /UTF-8 JSON/,
    ],
    [
      'JSON of the wrong shape',
      base64('{"x402Version":2,"payload":{}}'),
      'invalid_payload',
      /not an x402 v2/,
    ],
    [
      'an x402 v1 payload',
      base64('{"x402Version":1,"scheme":"exact","network":"algorand","payload":{}}'),
      'invalid_x402_version',
      /version 1 payment/,
    ],
    [
      'a version this paywall does not know',
      base64('{"x402Version":3,"payload":{}}'),
      'invalid_x402_version',
      /version 3 payment/,
    ],
    ['an oversized header', 'A'.repeat(MAX_PAYMENT_HEADER_CHARS + 4), 'invalid_payload', /exceeds/],
  ])('refuses %s with a 402', async (_, header, error, detail) => {
    const before = stack.facilitator.ledger.transactionCount;
    const { response, body } = await send({ 'PAYMENT-SIGNATURE': header });
    expect(response.status).toBe(402);
    expect(PaymentRequiredBody.parse(body).error).toBe(error);
    expect(PaymentRequiredBody.parse(body).message).toMatch(detail);
    expect(decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!).error).toBe(error);
    expect(response.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(stack.facilitator.ledger.transactionCount).toBe(before);
  });

  it('points x402 v1 clients (X-PAYMENT) to v2', async () => {
    const { response, body } = await send({ 'X-PAYMENT': base64('{}') });
    expect(response.status).toBe(402);
    expect(body.error).toBe('x402_v1_not_supported');
  });
});

describe('unfunded payer', () => {
  it('refuses a payer who cannot cover the price (the facilitator simulates the group)', async () => {
    const poor = await newBuyer(stack.facilitator, '1'); // 1 atomic unit, the price is 10000
    const { paymentRequired } = await fetchChallenge(stack.url(resource));
    const payload = await poor.pay(paymentRequired);
    const { body } = await expectRefused(payload, 'invalid_exact_avm_simulation_failed');
    expect(body.message).toMatch(/needs 10000/);
  });
});

describe('method and route table', () => {
  it('answers 405 to POST and 404 outside the four paths, with CORS', async () => {
    const post = await fetch(stack.url(resource), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
    const missing = await fetch(`${stack.worker.url}/api/x402-../../etc/passwd`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers the CORS preflight', async () => {
    const response = await fetch(stack.url(resource), {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://example.org',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'payment-signature',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toMatch(/PAYMENT-SIGNATURE/i);
    expect(response.headers.get('access-control-expose-headers')).toMatch(/PAYMENT-RESPONSE/);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('HEAD never pays', async () => {
    const payload = await payWithTransactionFor((r) => r);
    const before = stack.facilitator.ledger.transactionCount;
    const response = await fetch(stack.url(resource), { method: 'HEAD', headers: paymentHeader(payload) });
    expect(response.status).toBe(402);
    expect(stack.facilitator.ledger.transactionCount).toBe(before);
  });
});
