// Pay for one premium resource from Node with the official x402 client (@x402/fetch + @x402/avm).
//   npm install @x402/fetch@2.26 @x402/avm@2.26 @x402/extensions@2.26 algosdk@3
//   AVM_PRIVATE_KEY=<base64 64-byte secret key> node pay-from-code.mjs https://YOUR.SITE/api/x402-market-regime.php
// Against a local `emi up` (test money on the local ledger, nothing real is spent):
//   EMI_DEV_FACILITATOR_URL=http://127.0.0.1:4021 node pay-from-code.mjs http://127.0.0.1:8080/api/x402-market-regime.php
// The body goes to stdout, the settlement to stderr. Educational data only, not advice.
import algosdk from 'algosdk';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';

const url = process.argv[2];
if (!url) {
  console.error('usage: node pay-from-code.mjs URL');
  process.exit(2);
}

const devFacilitator = process.env.EMI_DEV_FACILITATOR_URL;
let secretKey = process.env.AVM_PRIVATE_KEY;
let algodUrl = process.env.ALGOD_URL ?? 'https://mainnet-api.algonode.cloud';

if (!secretKey && devFacilitator) {
  // Local development only: a throwaway wallet, funded with test USDC by the development facilitator.
  const account = algosdk.generateAccount();
  secretKey = Buffer.from(account.sk).toString('base64');
  const funded = await fetch(`${devFacilitator}/dev/fund`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ address: account.addr.toString(), amount: '1000000' }),
  });
  if (!funded.ok) throw new Error(`funding the test wallet failed: ${funded.status}`);
  algodUrl = devFacilitator; // it also answers the algod calls the client makes
}
if (!secretKey) {
  console.error(
    'set AVM_PRIVATE_KEY (your wallet, never commit it) or EMI_DEV_FACILITATOR_URL (local test money)',
  );
  process.exit(2);
}

const signer = toClientAvmSigner(secretKey);
const client = new x402Client()
  .register('algorand:*', new ExactAvmScheme(signer, { algodUrl }))
  // An id in the payment: the same payment sent again collects the file it bought (it is never charged twice).
  .onBeforePaymentCreation(async ({ paymentRequired }) => {
    if (paymentRequired.extensions) appendPaymentIdentifierToExtensions(paymentRequired.extensions);
  });

// Keep the signed payment. When its answer is lost (the connection drops, or a 502/503/504 that names a
// transaction or says the payment is in progress), the outcome is unknown: send the SAME payment again, never a new
// one, and the file comes once it has settled.
let kept = null;
const keepingFetch = (request) => {
  kept = request.headers.get('PAYMENT-SIGNATURE') ?? kept;
  return fetch(request);
};
const unknownOutcome = async (response) => {
  if (![502, 503, 504].includes(response.status)) return false;
  const body = await response
    .clone()
    .json()
    .catch(() => null);
  return Boolean(body?.transaction) || body?.error === 'payment_in_progress';
};

let response = await wrapFetchWithPayment(
  keepingFetch,
  client,
)(url).catch((error) => {
  if (!kept) throw error; // nothing was signed: nothing to collect
  console.error(`the answer to the payment was lost (${error.message}): sending the same payment again`);
  return null;
});
for (let tries = 0; kept && (response === null || (await unknownOutcome(response))) && tries < 6; tries++) {
  const seconds = Math.min(Number(response?.headers.get('Retry-After')) || 5, 30);
  if (response) console.error(`status ${response.status}: sending the same payment again in ${seconds} s`);
  await new Promise((resolve) => setTimeout(resolve, response ? seconds * 1000 : 1000));
  response = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': kept } }).catch(() => null);
}
const keepIt = () =>
  console.error(
    `send this PAYMENT-SIGNATURE again later to collect the file (never sign a new one):\n${kept}`,
  );
if (!response) {
  keepIt();
  process.exit(1);
}
const header = response.headers.get('PAYMENT-RESPONSE');
const settlement = header ? decodePaymentResponseHeader(header) : null;
console.error(
  `status ${response.status}; settled: ${settlement?.success ?? false}; transaction: ${settlement?.transaction ?? 'none'}`,
);
if (response.status !== 200) {
  const unknown = await unknownOutcome(response);
  console.error(await response.text());
  if (unknown) keepIt();
  process.exit(1);
}
process.stdout.write(`${JSON.stringify(await response.json(), null, 2)}\n`);
