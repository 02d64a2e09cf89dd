// A browser agent built from the official x402 client packages, as a third-party web app would use them:
// `@x402/fetch` around the browser's own fetch, with the `@x402/avm` exact client scheme. Bundled by the test
// for chromium; the private key is a throwaway one the test makes and funds on the development ledger.
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';

export interface AgentResult {
  status: number;
  body: string;
  transaction: string | null;
}

async function buyWithX402(url: string, algodUrl: string, secretKeyBase64: string): Promise<AgentResult> {
  const signer = toClientAvmSigner(secretKeyBase64);
  const client = new x402Client().register('algorand:*', new ExactAvmScheme(signer, { algodUrl }));
  const response = await wrapFetchWithPayment(fetch, client)(url);
  const header = response.headers.get('PAYMENT-RESPONSE');
  return {
    status: response.status,
    body: await response.text(),
    transaction: header ? decodePaymentResponseHeader(header).transaction : null,
  };
}

(globalThis as { buyWithX402?: typeof buyWithX402 }).buyWithX402 = buyWithX402;
