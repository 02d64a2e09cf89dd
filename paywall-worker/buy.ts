// A development buyer: makes a throwaway wallet, funds it through the development facilitator's /dev/fund, and
// pays for a paid path with the official x402 client (x402Client + the @x402/avm exact client scheme, driven by
// @x402/fetch). The client reads its suggested params from the facilitator's algod-compatible endpoint.
// `emi buy` signs once (signDevPayment) and sends the kept header itself (sendSignedPayment): a resend after a lost
// or late answer must be the same bytes, which @x402/fetch's wrapper, signing anew on each call, cannot give.
import algosdk from 'algosdk';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { addPaymentId } from '../schemas/paid/payment-identifier.ts';

export interface BuyOptions {
  url: string;
  /** Development facilitator: funds the wallet and stands in for algod. */
  facilitatorUrl: string;
  /** USDC (atomic units) to fund the development wallet with; default 1 USDC. */
  fundAtomic?: string;
}

export interface BuyResult {
  status: number;
  body: unknown;
  payer: string;
  transaction: string | null;
  settlement: SettleResponse | null;
}

/**
 * How long a request made before any payment may wait for its answer (`emi buy`'s unpaid first request, the
 * development wallet's funding): a host that accepts the connection and never answers is reported after this,
 * not after undici's 300 s headers timeout. Both answer at once when they work.
 */
export const UNPAID_REQUEST_TIMEOUT_MS = 30_000;

/** How a buyer's requests go out: tests inject a fetch and a shorter timeout. */
export interface RequestSeam {
  fetch?: typeof fetch;
  /** UNPAID_REQUEST_TIMEOUT_MS without it. */
  timeoutMs?: number;
}

export async function fundDevWallet(
  facilitatorUrl: string,
  address: string,
  amountAtomic: string,
  seam: RequestSeam = {},
): Promise<void> {
  const doFetch = seam.fetch ?? fetch;
  const response = await doFetch(`${facilitatorUrl.replace(/\/+$/, '')}/dev/fund`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ address, amount: amountAtomic }),
    signal: AbortSignal.timeout(seam.timeoutMs ?? UNPAID_REQUEST_TIMEOUT_MS),
  });
  if (!response.ok) throw new FundingRefused(facilitatorUrl, response.status);
}

/** A facilitator that would not fund a development wallet: most often a production one (no /dev/fund). */
export class FundingRefused extends Error {
  override readonly name = 'FundingRefused';
  constructor(
    facilitatorUrl: string,
    readonly status: number,
  ) {
    super(
      `the facilitator at ${facilitatorUrl} did not fund a development wallet (HTTP ${status}): emi buy pays only ` +
        'with test money from a development facilitator (emi up, emi serve); is --facilitator-url or ' +
        'EMI_FACILITATOR_URL a production facilitator?',
    );
  }
}

/** What a development wallet is given by default: 1 test USDC. */
export const DEV_WALLET_FUND_ATOMIC = '1000000';

/** An x402 client paying from a fresh development wallet (its key lives only in this process), not funded yet. */
function unfundedDevBuyer(facilitatorUrl: string) {
  const account = algosdk.generateAccount();
  const signer = toClientAvmSigner(Buffer.from(account.sk).toString('base64'));
  const client = new x402Client()
    .register('algorand:*', new ExactAvmScheme(signer, { algodUrl: facilitatorUrl }))
    .onBeforePaymentCreation(async ({ paymentRequired }) => addPaymentId(paymentRequired));
  return { address: signer.address, client };
}

/** An x402 client paying from a fresh development wallet; the wallet is funded before it is returned. */
export async function createDevBuyer(facilitatorUrl: string, fundAtomic = DEV_WALLET_FUND_ATOMIC) {
  const buyer = unfundedDevBuyer(facilitatorUrl);
  await fundDevWallet(facilitatorUrl, buyer.address, fundAtomic);
  return buyer;
}

export async function buyWithDevWallet(options: BuyOptions): Promise<BuyResult> {
  const { address, client } = await createDevBuyer(options.facilitatorUrl, options.fundAtomic);
  const response = await wrapFetchWithPayment(fetch, client)(options.url);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  const header = response.headers.get('PAYMENT-RESPONSE');
  const settlement = header ? decodePaymentResponseHeader(header) : null;
  return {
    status: response.status,
    body,
    payer: address,
    transaction: settlement?.success ? settlement.transaction : null,
    settlement,
  };
}

/** A payment signed once: the PAYMENT-SIGNATURE header, sent again as it is on every retry. */
export interface SignedPayment {
  payer: string;
  header: string;
  /** What it pays, in atomic units of the asset (USDC): the amount the 402 asked for. */
  amountAtomic: string;
}

/** The 402 answer that asked for payment: its headers and its body as text. */
export interface PaymentChallenge {
  header(name: string): string | null;
  bodyText: string;
}

/** The offer a development wallet pays: the first exact-scheme offer on Algorand (what the client would pick). */
export function payableOffer(paymentRequired: PaymentRequired): PaymentRequirements | undefined {
  return paymentRequired.accepts.find(
    (offer) =>
      offer.scheme === 'exact' && offer.network.startsWith('algorand:') && /^\d+$/.test(offer.amount),
  );
}

/**
 * Funds a fresh development wallet with enough for the price `challenge` asks (1 test USDC, or the price when it is
 * more) and signs one payment for it, with a payment identifier. The price is the cap: the client's spend control
 * (the library's default is $1, which refused a dearer storefront) is set to exactly it, so the payment signed can
 * never be more than the price asked, which `emi buy` states. Only test money moves: a facilitator that will not fund
 * a development wallet (a production one) stops it before anything is signed.
 */
export async function signDevPayment(
  challenge: PaymentChallenge,
  facilitatorUrl: string,
  seam: RequestSeam = {},
): Promise<SignedPayment> {
  const { address, client } = unfundedDevBuyer(facilitatorUrl);
  const paymentRequired = new x402HTTPClient(client).getPaymentRequiredResponse(
    (name) => challenge.header(name),
    parseJson(challenge.bodyText),
  );
  const offer = payableOffer(paymentRequired);
  if (offer) {
    client.setSpendControls({
      allowedAssets: [{ network: offer.network, asset: offer.asset, maxAmountPerPayment: offer.amount }],
    });
    const fund =
      BigInt(offer.amount) > BigInt(DEV_WALLET_FUND_ATOMIC) ? offer.amount : DEV_WALLET_FUND_ATOMIC;
    await fundDevWallet(facilitatorUrl, address, fund, seam);
  }
  // Without a payable offer the client refuses, naming why (no scheme for the network...): nothing is funded.
  // Signing asks the facilitator (as algod) for the ledger's parameters, a request the official client makes
  // without a deadline: it gets ours, and nothing has been sent to the site yet.
  const payload = await withinDeadline(
    client.createPaymentPayload(paymentRequired),
    seam.timeoutMs ?? UNPAID_REQUEST_TIMEOUT_MS,
  );
  return {
    payer: address,
    header: encodePaymentSignatureHeader(payload),
    amountAtomic: payload.accepted.amount,
  };
}

/** `work`, or a TimeoutError (as `AbortSignal.timeout` rejects with) once `ms` have passed without it. */
function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  const deadline = AbortSignal.timeout(ms);
  const late = new Promise<never>((_resolve, reject) =>
    deadline.addEventListener('abort', () => reject(deadline.reason as Error), { once: true }),
  );
  return Promise.race([work, late]);
}

/** What one send of a signed payment got: an answer, or none (the connection failed or dropped). */
export type PaidAttempt =
  | {
      kind: 'answer';
      status: number;
      body: unknown;
      settlement: SettleResponse | null;
      retryAfter: string | null;
    }
  | { kind: 'no-answer'; error: unknown };

/** How long one paid request may take: settlement waits for the chain and the paywall may ask it several times. */
export const PAID_REQUEST_TIMEOUT_MS = 60_000;

/** Sends `header` as PAYMENT-SIGNATURE to `url` once. Never throws for a network failure: that is `no-answer`. */
export async function sendSignedPayment(
  url: string,
  header: string,
  doFetch: typeof fetch = fetch,
  timeoutMs = PAID_REQUEST_TIMEOUT_MS,
): Promise<PaidAttempt> {
  try {
    const response = await doFetch(url, {
      headers: { 'PAYMENT-SIGNATURE': header, Accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    return {
      kind: 'answer',
      status: response.status,
      body: parseJson(text) ?? text,
      settlement: readSettlement(response.headers.get('PAYMENT-RESPONSE')),
      retryAfter: response.headers.get('Retry-After'),
    };
  } catch (error) {
    return { kind: 'no-answer', error };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The decoded PAYMENT-RESPONSE header; null without one or when it cannot be read. */
function readSettlement(header: string | null): SettleResponse | null {
  if (!header) return null;
  try {
    return decodePaymentResponseHeader(header);
  } catch {
    return null;
  }
}
