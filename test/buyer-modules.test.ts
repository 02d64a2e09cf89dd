// The buyer page's non-DOM modules in Node: the payment group (verified and settled by the official @x402/avm
// facilitator scheme through the development facilitator), config.json validation, the development wallet guard,
// the mapping of wallet SDK errors to plain categories, and what happens to a kept signed payment after each answer.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import algosdk from 'algosdk';
import type { PaymentRequirement } from '../generator/buyer/challenge.ts';
import { ALGORAND_MAINNET_GENESIS_HASH } from '../generator/buyer/human-report-terms.ts';
import {
  WrongNetworkError,
  buildPaymentGroup,
  checkSignedPayment,
  encodePaymentGroup,
  parseAlgodParams,
  validityRounds,
} from '../site/x402-buyer/src/payment-group.ts';
import type { LedgerParams } from '../site/x402-buyer/src/payment-group.ts';
import { DEFAULT_MAINNET_ALGOD, parseBuyerConfig } from '../site/x402-buyer/src/config.ts';
import { developmentWalletAllowed } from '../site/x402-buyer/src/wallets/development.ts';
import { classifyWalletError, walletFromSdk } from '../site/x402-buyer/src/wallets/connect-sdk.ts';
import type { ConnectSdk, SignerTransaction } from '../site/x402-buyer/src/wallets/connect-sdk.ts';
import {
  keptPaymentProblem,
  pendingPayments,
  preparationProblem,
  requestChallenge,
  retryAfterSeconds,
  sendPayment,
} from '../site/x402-buyer/src/x402-flow.ts';
import type { PendingPayment } from '../site/x402-buyer/src/x402-flow.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { stubSessionStorage } from './helpers/session-storage.ts';

const MAINNET = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';
const merchant = algosdk.generateAccount().addr.toString();

const requirementFor = (feePayer?: string): PaymentRequirement => ({
  scheme: 'exact',
  network: MAINNET,
  amount: '100000',
  asset: '31566704',
  payTo: merchant,
  maxTimeoutSeconds: 300,
  extra: feePayer ? { feePayer } : {},
});

const params: LedgerParams = {
  genesisHash: ALGORAND_MAINNET_GENESIS_HASH,
  genesisId: 'mainnet-v1.0',
  lastRound: 5000n,
  minFee: 1000n,
  feePerByte: 0n,
};

describe('payment group', () => {
  const buyer = algosdk.generateAccount();
  const feePayer = algosdk.generateAccount().addr.toString();

  it('is [unsigned zero pay by the fee payer carrying the group fee, the exact transfer with fee 0]', () => {
    const group = buildPaymentGroup(requirementFor(feePayer), buyer.addr.toString(), params, 'n1');
    const [fee, transfer] = group.txns as [algosdk.Transaction, algosdk.Transaction];
    expect(group.paymentIndex).toBe(1);
    expect(fee.type).toBe('pay');
    expect(fee.sender.toString()).toBe(feePayer);
    expect(fee.payment?.receiver.toString()).toBe(feePayer);
    expect(fee.payment?.amount).toBe(0n);
    expect(fee.fee).toBe(2000n);
    expect(transfer.type).toBe('axfer');
    expect(transfer.sender.toString()).toBe(buyer.addr.toString());
    expect(transfer.assetTransfer?.receiver.toString()).toBe(merchant);
    expect(transfer.assetTransfer?.assetIndex).toBe(31566704n);
    expect(transfer.assetTransfer?.amount).toBe(100000n);
    expect(transfer.fee).toBe(0n);
    expect(fee.group).toEqual(transfer.group);
    expect(transfer.firstValid).toBe(5000n);
    expect(transfer.lastValid).toBe(5000n + validityRounds(300));
    expect(group.paymentTxId).toBe(transfer.txID());
  });

  it('is one self-funded transfer without a fee payer, and unique per nonce', () => {
    const a = buildPaymentGroup(requirementFor(), buyer.addr.toString(), { ...params, feePerByte: 10n }, 'a');
    const b = buildPaymentGroup(requirementFor(), buyer.addr.toString(), params, 'b');
    expect(a.txns).toHaveLength(1);
    expect(a.paymentIndex).toBe(0);
    expect(a.txns[0]?.fee).toBeGreaterThan(1000n); // fee per byte x size
    expect(a.paymentTxId).not.toBe(b.paymentTxId);
  });

  it('refuses ledger parameters of another network', () => {
    const testnet = { ...params, genesisHash: 'SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=' };
    expect(() => buildPaymentGroup(requirementFor(feePayer), buyer.addr.toString(), testnet, 'x')).toThrow(
      WrongNetworkError,
    );
  });

  it('accepts only the signed transfer itself back from a wallet', () => {
    const group = buildPaymentGroup(requirementFor(feePayer), buyer.addr.toString(), params, 'n2');
    const other = buildPaymentGroup(requirementFor(feePayer), buyer.addr.toString(), params, 'n3');
    expect(() => checkSignedPayment(group, group.txns[1]!.signTxn(buyer.sk))).not.toThrow();
    expect(() => checkSignedPayment(group, other.txns[1]!.signTxn(buyer.sk))).toThrow(
      /different transaction/,
    );
    expect(() => checkSignedPayment(group, algosdk.encodeUnsignedTransaction(group.txns[1]!))).toThrow();
  });

  it('keeps the validity window between 10 and 1000 rounds', () => {
    expect(validityRounds(1)).toBe(10n);
    expect(validityRounds(300)).toBe(120n);
    expect(validityRounds(1_000_000)).toBe(1000n);
  });

  it('reads algod params and refuses an unreadable answer', () => {
    const raw = {
      fee: 0,
      'genesis-hash': ALGORAND_MAINNET_GENESIS_HASH,
      'genesis-id': 'mainnet-v1.0',
      'last-round': 7,
      'min-fee': 1000,
    };
    expect(parseAlgodParams(raw)).toEqual({ ...params, lastRound: 7n });
    expect(() => parseAlgodParams({ fee: 0 })).toThrow(/unreadable/);
  });
});

describe('payment group against the official facilitator scheme', () => {
  let facilitator: DevFacilitator;
  beforeAll(async () => {
    facilitator = await startDevFacilitator({ port: 0 });
    facilitator.ledger.optIn(merchant);
  });
  afterAll(() => facilitator.close());

  it('verifies and settles: the merchant receives exactly the price', async () => {
    const buyer = algosdk.generateAccount();
    facilitator.ledger.fund(buyer.addr.toString(), 1_000_000n);
    const ledgerParams = parseAlgodParams(
      await (await fetch(`${facilitator.url}/v2/transactions/params`)).json(),
    );
    const requirement = requirementFor(facilitator.feePayer);
    const group = buildPaymentGroup(requirement, buyer.addr.toString(), ledgerParams, 'settle');
    const signed = group.txns[group.paymentIndex]!.signTxn(buyer.sk);
    const body = {
      x402Version: 2,
      paymentPayload: {
        x402Version: 2,
        accepted: requirement,
        payload: { paymentGroup: encodePaymentGroup(group, signed), paymentIndex: group.paymentIndex },
      },
      paymentRequirements: requirement,
    };
    const post = async (path: string) =>
      (
        await fetch(`${facilitator.url}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
    expect(await post('/verify')).toMatchObject({ isValid: true, payer: buyer.addr.toString() });
    expect(await post('/settle')).toMatchObject({ success: true, transaction: group.paymentTxId });
    expect(facilitator.ledger.assetBalance(merchant)).toBe(100000n);
    expect(facilitator.ledger.assetBalance(buyer.addr.toString())).toBe(900000n);
    expect(await post('/settle')).toMatchObject({ success: false }); // the same signed group cannot land twice
    expect(facilitator.ledger.assetBalance(merchant)).toBe(100000n);
  });
});

describe('config.json', () => {
  const base = 'http://127.0.0.1:8080/x402-buyer/config.json';
  const report = 'http://127.0.0.1:8080/api/x402-atlas-human-report.php';
  const valid = {
    merchantAddress: merchant,
    network: MAINNET,
    facilitatorMode: 'development',
    devFundUrl: '/x402-dev-facilitator/dev/fund',
  };

  it('resolves relative URLs and finds the development params next to the faucet', () => {
    expect(parseBuyerConfig(valid, base, report)).toEqual({
      ok: true,
      config: {
        merchantAddress: merchant,
        network: MAINNET,
        facilitatorMode: 'development',
        devFundUrl: 'http://127.0.0.1:8080/x402-dev-facilitator/dev/fund',
        algodUrl: 'http://127.0.0.1:8080/x402-dev-facilitator',
        reportUrl: report,
      },
    });
  });

  it('uses a public mainnet algod in production and drops any faucet', () => {
    const result = parseBuyerConfig({ ...valid, facilitatorMode: 'production' }, base, report);
    expect(result).toMatchObject({ ok: true, config: { algodUrl: DEFAULT_MAINNET_ALGOD } });
    expect(result.ok && result.config.devFundUrl).toBeUndefined();
  });

  it.each([
    ['no merchant', { ...valid, merchantAddress: undefined }, /merchant address/],
    ['a bad merchant', { ...valid, merchantAddress: 'ABC' }, /merchant address/],
    [
      'testnet',
      { ...valid, network: 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe' },
      /only pays on Algorand mainnet/,
    ],
    ['no mode', { ...valid, facilitatorMode: 'test' }, /facilitatorMode/],
    ['development without params', { ...valid, devFundUrl: undefined }, /algodUrl/],
    ['not an object', [], /not a JSON object/],
  ])('refuses %s', (_name, raw, reason) => {
    const result = parseBuyerConfig(raw, base, report);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });
});

describe('development wallet guard', () => {
  const dev = { facilitatorMode: 'development', devFundUrl: 'http://127.0.0.1:4021/dev/fund' };
  it('is offered only in development mode with page and faucet on loopback', () => {
    expect(developmentWalletAllowed(dev, 'http://127.0.0.1:8080/x402-buyer/')).toBe(true);
    expect(developmentWalletAllowed(dev, 'http://localhost:8080/x402-buyer/')).toBe(true);
    expect(developmentWalletAllowed(dev, 'https://example.org/x402-buyer/')).toBe(false);
    expect(
      developmentWalletAllowed({ ...dev, devFundUrl: 'https://example.org/dev/fund' }, 'http://127.0.0.1/'),
    ).toBe(false);
    expect(developmentWalletAllowed({ ...dev, facilitatorMode: 'production' }, 'http://127.0.0.1/')).toBe(
      false,
    );
    expect(developmentWalletAllowed({ facilitatorMode: 'development' }, 'http://127.0.0.1/')).toBe(false);
  });
});

describe('wallet errors', () => {
  const sdkError = (type: string, message: string) => Object.assign(new Error(message), { data: { type } });
  it.each([
    [sdkError('SIGN_TXN_CANCELLED', 'Transaction signing is cancelled by user.'), 'rejected'],
    [sdkError('SIGN_TRANSACTIONS', 'User Rejected Request'), 'rejected'],
    [sdkError('CONNECT_MODAL_CLOSED', 'Connect modal is closed by user'), 'closed'],
    [sdkError('CONNECT_CANCELLED', 'Connect is cancelled by user'), 'closed'],
    [sdkError('SIGN_TXN_NETWORK_MISMATCH', 'Network mismatch'), 'wrong-network'],
    [sdkError('SESSION_CONNECT', 'bridge unreachable'), 'unavailable'],
    [new Error('Failed to fetch: network error'), 'unavailable'],
  ])('%s -> %s', (error, failure) => {
    expect(classifyWalletError(error, 'Pera Wallet').failure).toBe(failure);
  });

  it('says a closed connect dialog was closed, not declined, and that connecting again works', () => {
    const closed = classifyWalletError(
      sdkError('CONNECT_MODAL_CLOSED', 'Connect modal is closed by user'),
      'Pera Wallet',
    );
    expect(closed.message).toContain('dialog was closed');
    expect(closed.message).toContain('connect again');
    expect(closed.message).not.toMatch(/declined/);
    expect(preparationProblem(closed)).toMatchObject({ kind: 'wallet-closed', retrySafe: false });
  });
});

describe('connect SDK wallet', () => {
  const buyer = algosdk.generateAccount();
  const address = buyer.addr.toString();
  const fakeSdk = (sign: (groups: SignerTransaction[][]) => Promise<Uint8Array[]>): ConnectSdk => ({
    connect: async () => [address],
    reconnectSession: async () => [],
    disconnect: async () => undefined,
    signTransaction: (groups) => sign(groups),
  });

  it("asks for the buyer's signature on the transfer only and returns it", async () => {
    const group = buildPaymentGroup(
      requirementFor(algosdk.generateAccount().addr.toString()),
      address,
      params,
      'sdk',
    );
    let asked: SignerTransaction[][] = [];
    const wallet = await walletFromSdk(
      'pera',
      fakeSdk(async (groups) => {
        asked = groups;
        return [group.txns[1]!.signTxn(buyer.sk)]; // like the SDKs: only what was signed
      }),
    );
    const signed = await wallet.signPayment(group.txns, group.paymentIndex);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.map((t) => t.signers)).toEqual([[], [address]]);
    expect(() => checkSignedPayment(group, signed)).not.toThrow();
  });

  it('reports a declined request as rejected', async () => {
    const group = buildPaymentGroup(requirementFor(), address, params, 'sdk2');
    const declined = Object.assign(new Error('cancelled'), { data: { type: 'SIGN_TXN_CANCELLED' } });
    const wallet = await walletFromSdk(
      'defly',
      fakeSdk(() => Promise.reject(declined)),
    );
    await expect(wallet.signPayment(group.txns, 0)).rejects.toMatchObject({ failure: 'rejected' });
  });
});

describe('a price check answered without a payment request', () => {
  let answer: Response;
  beforeEach(() => {
    vi.stubGlobal('fetch', async () => answer);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });
  const check = async () => {
    const result = await requestChallenge('http://127.0.0.1:8080/api/x402-atlas-human-report.php', merchant);
    return result.kind === 'problem' ? result.problem : null;
  };

  it("opens with a plain sentence, then the server's own words, with the HTTP status last", async () => {
    answer = Response.json(
      { error: 'not_available_from_seller', message: 'Example has no shared-intelligence credit left.' },
      { status: 503 },
    );
    const problem = await check();
    expect(problem).toMatchObject({ kind: 'facilitator-unavailable', retrySafe: true });
    expect(problem?.message).toBe(
      'This report cannot be bought here right now. Example has no shared-intelligence credit left. (HTTP 503)',
    );
    expect(problem?.message).not.toMatch(/Expected a payment request|HTTP 402/);
  });

  it('ends a message without a full stop, and keeps a bare code or an empty body in the parenthesis', async () => {
    answer = Response.json({ error: 'stale', message: 'The report file is stale' }, { status: 503 });
    expect((await check())?.message).toBe(
      'This report cannot be bought here right now. The report file is stale. (HTTP 503)',
    );
    answer = Response.json({ error: 'service_unavailable' }, { status: 503 });
    expect((await check())?.message).toBe(
      'This report cannot be bought here right now (code: service_unavailable, HTTP 503).',
    );
    answer = new Response('', { status: 404 });
    expect(await check()).toMatchObject({
      kind: 'server',
      message: 'This report cannot be bought here right now (HTTP 404).',
    });
  });
});

describe('sending a kept signed payment', () => {
  const url = 'http://127.0.0.1:8080/api/x402-atlas-human-report.php';
  const payment: PendingPayment = { url, header: 'c2lnbmVk', txId: 'TXID', requirement: requirementFor() };
  let answer: Response;
  beforeEach(() => {
    stubSessionStorage();
    vi.stubGlobal('fetch', async () => answer);
    pendingPayments.save(payment);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });
  const refusal = (error: string, status = 402) =>
    Response.json({ error, message: `server says ${error}` }, { status });

  it('keeps it when the server is still processing the same payment, and offers to resend it', async () => {
    // 503 from this paywall; 402 from one of an earlier version.
    for (const status of [503, 402]) {
      answer = refusal('payment_in_progress', status);
      const result = await sendPayment(payment);
      expect(result, String(status)).toMatchObject({
        kind: 'problem',
        problem: { kind: 'payment-in-progress', retrySafe: true },
      });
      if (result.kind === 'problem') expect(result.problem.message).toMatch(/still processing/);
      expect(pendingPayments.load(url)).toEqual(payment);
    }
  });

  it('says how long to wait when the server still processes it (503 with Retry-After), and keeps it', async () => {
    answer = Response.json(
      { error: 'payment_in_progress', message: 'server says payment_in_progress' },
      { status: 503, headers: { 'Retry-After': '30' } },
    );
    const result = await sendPayment(payment);
    expect(result).toMatchObject({
      kind: 'problem',
      problem: { kind: 'payment-in-progress', retrySafe: true, txId: 'TXID', retryAfterSeconds: 30 },
    });
    const message = result.kind === 'problem' ? result.problem.message : '';
    expect(message).toContain('Try again in about 30 seconds');
    expect(message).not.toMatch(/in a moment/);
    expect(pendingPayments.load(url)).toEqual(payment);
  });

  it('reads Retry-After as seconds or as an HTTP date, within bounds', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterSeconds('30', now)).toBe(30);
    expect(retryAfterSeconds(' 0 ', now)).toBe(1);
    expect(retryAfterSeconds('86400', now)).toBe(600);
    expect(retryAfterSeconds('Wed, 01 Jan 2025 00:00:45 GMT', now)).toBe(45);
    expect(retryAfterSeconds(null, now)).toBeNull();
    expect(retryAfterSeconds('soon', now)).toBeNull();
  });

  it('words a payment kept across a reload for what is known, not as "no answer"', () => {
    const problem = keptPaymentProblem(payment);
    expect(problem).toMatchObject({ retrySafe: true, txId: 'TXID' });
    expect(problem.message).not.toMatch(/got no answer/);
    expect(problem.message).toMatch(/no final answer/);
    expect(problem.message).toMatch(/cannot be charged twice/);
  });

  it('keeps it when the payment service is unavailable', async () => {
    answer = refusal('facilitator_unreachable', 503);
    const result = await sendPayment(payment);
    expect(result).toMatchObject({ problem: { kind: 'facilitator-unavailable', retrySafe: true } });
    expect(pendingPayments.load(url)).toEqual(payment);
  });

  it('a payment the paywall found expired on chain: dropped, and said to be never charged', async () => {
    const settlement = {
      success: false,
      errorReason: 'payment_not_settled',
      errorMessage: 'not confirmed within its validity window',
      transaction: 'TXID',
      network: MAINNET,
    };
    answer = Response.json(
      { error: 'payment_not_settled', message: 'you were not charged' },
      {
        status: 402,
        headers: { 'PAYMENT-RESPONSE': Buffer.from(JSON.stringify(settlement)).toString('base64') },
      },
    );
    const result = await sendPayment(payment);
    expect(result).toMatchObject({ problem: { kind: 'settlement-refused', retrySafe: false } });
    const message = result.kind === 'problem' ? result.problem.message : '';
    expect(message).toMatch(/never will: you were not charged/);
    expect(message).not.toMatch(/may still land/);
    expect(pendingPayments.load(url)).toBeNull();
  });

  it('drops it on a definite refusal, and says an earlier attempt may have been charged', async () => {
    answer = refusal('payment_already_used');
    const used = await sendPayment(payment);
    expect(used).toMatchObject({ problem: { kind: 'payment-refused', retrySafe: false, txId: 'TXID' } });
    expect(used.kind === 'problem' && used.problem.message).toMatch(/may have been charged/);
    expect(pendingPayments.load(url)).toBeNull();

    pendingPayments.save(payment);
    answer = refusal('invalid_exact_avm_payment_amount');
    const invalid = await sendPayment(payment);
    expect(invalid.kind === 'problem' && invalid.problem.message).toContain(
      'server says invalid_exact_avm_payment_amount',
    );
    expect(pendingPayments.load(url)).toBeNull();
  });

  it('words a refusal that names only a machine code as a refused payment, with what to check', async () => {
    // The facilitator's reason alone, as an error body with no readable message and as the message itself.
    for (const body of [
      { error: 'invalid_exact_avm_payload_signature' },
      { error: 'payment_invalid', message: 'invalid_exact_avm_payload_signature' },
    ]) {
      pendingPayments.save(payment);
      answer = Response.json(body, { status: 402 });
      const result = await sendPayment(payment);
      expect(result).toMatchObject({ problem: { kind: 'payment-refused', retrySafe: false, txId: 'TXID' } });
      const message = result.kind === 'problem' ? result.problem.message : '';
      expect(message).toMatch(/^The payment was refused \(code: invalid_exact_avm_payload_signature\)\. /);
      expect(message).not.toMatch(/did not accept the signed payment/);
      expect(message).toContain('Check in your wallet');
      expect(message).toContain('look the transaction up before paying again');
      expect(message).not.toMatch(/not charged|never charged/);
      expect(pendingPayments.load(url)).toBeNull();
    }
  });

  it("keeps a readable refusal in the server's words, without a doubled full stop", async () => {
    answer = Response.json(
      {
        error: 'invalid_exact_avm_payload_signature',
        message: 'The facilitator refused the payment: invalid_exact_avm_payload_signature.',
      },
      { status: 402 },
    );
    const result = await sendPayment(payment);
    const message = result.kind === 'problem' ? result.problem.message : '';
    expect(message).toContain(
      'The server did not accept the signed payment: The facilitator refused the payment: ' +
        'invalid_exact_avm_payload_signature. If an earlier attempt timed out',
    );
    expect(message).not.toContain('..');
  });
});
