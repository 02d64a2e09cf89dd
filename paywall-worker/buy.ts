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
import type { SettleResponse } from '@x402/core/types';
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

export async function fundDevWallet(
  facilitatorUrl: string,
  address: string,
  amountAtomic: string,
): Promise<void> {
  const response = await fetch(`${facilitatorUrl.replace(/\/+$/, '')}/dev/fund`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ address, amount: amountAtomic }),
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

/** An x402 client paying from a fresh development wallet; the wallet is funded before it is returned. */
export async function createDevBuyer(facilitatorUrl: string, fundAtomic = '1000000') {
  const account = algosdk.generateAccount(); // lives only in this process
  const signer = toClientAvmSigner(Buffer.from(account.sk).toString('base64'));
  await fundDevWallet(facilitatorUrl, signer.address, fundAtomic);
  const client = new x402Client()
    .register('algorand:*', new ExactAvmScheme(signer, { algodUrl: facilitatorUrl }))
    .onBeforePaymentCreation(async ({ paymentRequired }) => addPaymentId(paymentRequired));
  return { address: signer.address, client };
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
}

/** The 402 answer that asked for payment: its headers and its body as text. */
export interface PaymentChallenge {
  header(name: string): string | null;
  bodyText: string;
}

/** Funds a fresh development wallet and signs one payment for `challenge`, with a payment identifier. */
export async function signDevPayment(
  challenge: PaymentChallenge,
  facilitatorUrl: string,
  fundAtomic?: string,
): Promise<SignedPayment> {
  const { address, client } = await createDevBuyer(facilitatorUrl, fundAtomic);
  const paymentRequired = new x402HTTPClient(client).getPaymentRequiredResponse(
    (name) => challenge.header(name),
    parseJson(challenge.bodyText),
  );
  const payload = await client.createPaymentPayload(paymentRequired);
  return { payer: address, header: encodePaymentSignatureHeader(payload) };
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
