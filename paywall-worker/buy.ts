// A development buyer: makes a throwaway wallet, funds it through the development facilitator's /dev/fund, and
// pays for a paid path with the official x402 client (x402Client + the @x402/avm exact client scheme, driven by
// @x402/fetch). The client reads its suggested params from the facilitator's algod-compatible endpoint.
import algosdk from 'algosdk';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
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
  if (!response.ok) {
    throw new Error(`funding the development wallet failed (${response.status}): ${await response.text()}`);
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
