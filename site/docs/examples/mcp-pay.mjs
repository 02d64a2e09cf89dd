// An agent paying for a paid MCP tool with x402 (official @modelcontextprotocol/sdk client, @x402/core + @x402/avm,
// and @x402/extensions for the payment id).
//   npm install @modelcontextprotocol/sdk@1.32 @x402/core@2.26 @x402/avm@2.26 @x402/extensions@2.26 algosdk@3
// Against a local `emi up` (test money on the local ledger, nothing real is spent):
//   EMI_DEV_FACILITATOR_URL=http://127.0.0.1:4021 node mcp-pay.mjs http://127.0.0.1:8080/mcp
// The paid tool's body goes to stdout, the settlement to stderr. Educational data only, not advice.
import algosdk from 'algosdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { x402Client } from '@x402/core/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';

const [mcpUrl, tool = 'paid_main_brain'] = process.argv.slice(2);
const facilitator = process.env.EMI_DEV_FACILITATOR_URL;
if (!mcpUrl || !facilitator) {
  console.error('usage: EMI_DEV_FACILITATOR_URL=http://127.0.0.1:4021 node mcp-pay.mjs MCP_URL [TOOL]');
  process.exit(2);
}

// A throwaway wallet, funded with test USDC by the development facilitator (local development only).
const account = algosdk.generateAccount();
const signer = toClientAvmSigner(Buffer.from(account.sk).toString('base64'));
const funded = await fetch(`${facilitator}/dev/fund`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ address: signer.address, amount: '1000000' }),
});
if (!funded.ok) throw new Error(`funding the test wallet failed: ${funded.status}`);
// The development facilitator also answers the one algod call the client makes.
const x402 = new x402Client().register('algorand:*', new ExactAvmScheme(signer, { algodUrl: facilitator }));

const mcp = new Client({ name: 'my-agent', version: '1.0.0' });
await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
try {
  // Unpaid: a tool error whose structured content is the x402 PaymentRequired, as in the HTTP 402.
  const challenge = await mcp.callTool({ name: tool, arguments: {} });
  if (!challenge.isError) throw new Error(`${tool} answered without payment: is it a paid tool?`);
  const required = challenge.structuredContent;
  // Give the payment an id (x402's payment-identifier extension, which the PaymentRequired declares): the paywall
  // delivers a settled payment again only to the same payment with the same id. Without one, a payment is
  // delivered once, and an answer lost on the way cannot be collected again.
  required.extensions = appendPaymentIdentifierToExtensions(required.extensions ?? {});
  const payment = await x402.createPaymentPayload(required);
  // Paid: the payment travels in _meta["x402/payment"]; the settlement comes back in _meta["x402/payment-response"].
  const call = () => mcp.callTool({ name: tool, arguments: {}, _meta: { 'x402/payment': payment } });
  let paid = await call();
  // An error naming a transaction: the payment may have been taken. Never sign a new one then: the same payment
  // (same bytes, same id) is settled at most once and collects the file if it was.
  if (paid.isError && paid.structuredContent?.transaction) paid = await call();
  if (paid.isError) throw new Error(`payment refused: ${paid.content[0]?.text}`);
  console.error(
    `settled: ${paid._meta['x402/payment-response'].transaction} (${paid.structuredContent.data_mode} data)`,
  );
  console.log(JSON.stringify(paid.structuredContent.body, null, 2));
} finally {
  await mcp.close();
}
