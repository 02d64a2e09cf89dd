// What an agent paying over MCP is told, and whether it is true, against the real local stack (generator output, the
// paywall with the development facilitator over HTTP on 127.0.0.1, the official SDK client, which lists the tools
// first as agents do and so checks every structured result against the published output schema):
//   - a payment's answer lost on the way (a proxy that lets the paywall settle and deliver, then drops the answer):
//     the documented example (site/docs/examples/mcp-pay.mjs) sends a payment id and collects the file, charged
//     once; a payment without an id is told plainly that it may not be collectable, with its transaction, and it
//     indeed is not; a delivery of a payment without an id warns that it is the only one;
//   - a settled body that fails this server's schema (a paywall with a newer one) is delivered, never withheld;
//   - payment-required and refusal texts speak of _meta["x402/payment"], not of the HTTP PAYMENT-SIGNATURE header.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { PAYMENT_IDENTIFIER } from '../schemas/paid/payment-identifier.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { inMcpTerms, PAYMENT_META, PAYMENT_RESPONSE_META } from '../mcp/paid-tools.ts';
import type { FetchPaid } from '../mcp/paid-tools.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { createMcpServer, fetchPaidAt, fetchPaidThrough } from '../mcp/server.ts';
import { BASE_URL, startMcpStack, stopMcpStack } from './mcp-stack.ts';
import { newBuyer, resourceById } from './paywall-harness.ts';

let root: string;
let paywall: LocalPaywall;
let paywallServer: Listening;
const closing: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ({ root, paywall, paywallServer } = await startMcpStack('emi-mcp-recovery-', 13));
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await stopMcpStack({ root, paywall, paywallServer });
});

/** A streamable HTTP `/mcp` on 127.0.0.1 whose paid tools go to `fetchPaid` (default the paywall over HTTP). */
async function mcpServer(fetchPaid: FetchPaid = fetchPaidAt(paywallServer.url)): Promise<string> {
  const route = createMcpRoute(() =>
    createMcpServer({ readText: readTextFrom(join(root, 'site')), fetchPaid, baseUrl: BASE_URL }),
  );
  const server = await listen(route, 0, '127.0.0.1');
  closing.push(() => server.close());
  return `http://127.0.0.1:${server.port}/mcp`;
}

/** An SDK client; it lists the tools first, as an agent does, so structured results are checked. */
async function agent(fetchPaid?: FetchPaid): Promise<Client> {
  const client = new Client({ name: 'emi-recovery', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(await mcpServer(fetchPaid))));
  await client.listTools();
  closing.push(() => client.close());
  return client;
}

const call = async (client: Client, name: string, payment?: PaymentPayload) =>
  (await client.callTool({
    name,
    arguments: {},
    ...(payment ? { _meta: { [PAYMENT_META]: payment } } : {}),
  })) as CallToolResult;
const textsOf = (result: CallToolResult) =>
  result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
/** Everything the agent reads: the texts and the structured content. */
const allOf = (result: CallToolResult) => `${textsOf(result)}\n${JSON.stringify(result.structuredContent)}`;
const txidOf = (payment: PaymentPayload) => {
  const { paymentGroup, paymentIndex } = payment.payload as { paymentGroup: string[]; paymentIndex: number };
  return algosdk.decodeSignedTransaction(algosdk.base64ToBytes(paymentGroup[paymentIndex]!)).txn.txID();
};
const balance = () => paywall.devFacilitator!.ledger.assetBalance(paywall.payTo);
const settledTxid = (result: CallToolResult) =>
  (result._meta?.[PAYMENT_RESPONSE_META] as { transaction?: string } | undefined)?.transaction;

/** A payment signed for `tool` by a fresh buyer; the harness's buyer gives it an id, `withoutId` takes it out. */
async function signedPayment(client: Client, tool: string, { withoutId = false } = {}) {
  const buyer = await newBuyer(paywall.devFacilitator!);
  const challenge = await call(client, tool);
  const payment = await buyer.pay(challenge.structuredContent as unknown as PaymentRequired);
  expect(
    (payment.extensions?.[PAYMENT_IDENTIFIER] as { info: { id?: string } }).info.id,
    'the harness buyer sends an id',
  ).toMatch(/^pay_/);
  if (withoutId) delete (payment.extensions![PAYMENT_IDENTIFIER] as { info: { id?: string } }).info.id;
  return payment;
}

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server: HttpServer = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/**
 * A proxy to the real paywall that lets the first `drops` paid requests (those carrying a payment) go through to
 * the paywall, waits for its whole answer (so the payment is settled and its file delivered), and then drops the
 * connection: the answer is lost on the way. Later requests are passed on with their answer.
 */
async function losingProxy(drops = 1): Promise<{ url: string; lost: number[] }> {
  const lost: number[] = [];
  const url = await serve((request, response) => {
    const signature = request.headers['payment-signature'];
    void fetch(`${paywallServer.url}${request.url}`, {
      headers: typeof signature === 'string' ? { 'PAYMENT-SIGNATURE': signature } : {},
    }).then(async (answer) => {
      const body = Buffer.from(await answer.arrayBuffer());
      if (typeof signature === 'string' && lost.length < drops) {
        lost.push(answer.status);
        request.socket.destroy();
        return;
      }
      const headers = Object.fromEntries(answer.headers);
      delete headers['content-length'];
      delete headers['content-encoding'];
      response.writeHead(answer.status, headers).end(body);
    });
  });
  return { url, lost };
}

const run = (args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });

describe('a paid answer lost on the way (the paywall settled and delivered it)', () => {
  it('the documented example sends a payment id, calls again with the same payment, and gets the file, charged once', async () => {
    const proxy = await losingProxy();
    const mcpUrl = await mcpServer(fetchPaidAt(proxy.url));
    const before = balance();
    const result = await run(['site/docs/examples/mcp-pay.mjs', mcpUrl], {
      EMI_DEV_FACILITATOR_URL: paywall.facilitatorUrl,
    });
    expect(proxy.lost).toEqual([200]); // the paywall settled and delivered; the answer never came back
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/settled: [A-Z2-7]{52} \(simulated data\)/);
    expect(JSON.parse(result.stdout)).toEqual(
      JSON.parse(await readFile(join(root, 'paid', resourceById('paidMainBrain').file), 'utf8')),
    );
    expect(balance() - before).toBe(10_000n);
  }, 60_000);

  it('with an id: says to call again with the same payment, and that call delivers it, charged once', async () => {
    const proxy = await losingProxy();
    const client = await agent(fetchPaidAt(proxy.url));
    const payment = await signedPayment(client, 'paid_main_brain');
    const before = balance();
    const lost = await call(client, 'paid_main_brain', payment);
    expect(lost.isError).toBe(true);
    expect(lost.structuredContent).toMatchObject({
      error: 'paywall_unreachable',
      transaction: txidOf(payment),
    });
    expect(textsOf(lost)).toContain(
      `Do not sign a new payment: call paid_main_brain again with the same _meta["${PAYMENT_META}"]`,
    );
    const again = await call(client, 'paid_main_brain', payment);
    expect(again.isError, textsOf(again)).toBeFalsy();
    expect(settledTxid(again)).toBe(txidOf(payment));
    expect(again.structuredContent?.warning).toBeUndefined();
    expect(balance() - before).toBe(10_000n);
  }, 60_000);

  it('without an id: says plainly it may not be collectable and names the transaction; calling again is indeed refused', async () => {
    const proxy = await losingProxy();
    const client = await agent(fetchPaidAt(proxy.url));
    const payment = await signedPayment(client, 'paid_main_brain', { withoutId: true });
    const txid = txidOf(payment);
    const before = balance();

    const lost = await call(client, 'paid_main_brain', payment);
    expect(proxy.lost).toEqual([200]);
    expect(lost.isError).toBe(true);
    expect(lost.structuredContent).toMatchObject({ error: 'paywall_unreachable', transaction: txid });
    // Before: "The paywall delivers a settled payment again without charging it twice", which is false here.
    expect(textsOf(lost)).not.toMatch(/delivers a settled payment again without charging it twice/);
    expect(textsOf(lost)).toContain('this payment carries no payment id');
    expect(textsOf(lost)).toContain('it is not delivered again (payment_already_used)');
    expect(textsOf(lost)).toContain(`quote transaction ${txid} to the seller`);

    // What the message said: the paywall took the money once and refuses the same id-less payment again.
    const again = await call(client, 'paid_main_brain', payment);
    expect(again.isError).toBe(true);
    expect(again.structuredContent).toMatchObject({ error: 'payment_already_used' });
    expect(again.structuredContent?.body).toBeUndefined();
    expect(balance() - before).toBe(10_000n);
  }, 60_000);

  it('a delivery of a payment without an id warns that it is the only one; with an id, no warning', async () => {
    const client = await agent();
    const bare = await signedPayment(client, 'paid_market_regime', { withoutId: true });
    const paid = await call(client, 'paid_market_regime', bare);
    expect(paid.isError, textsOf(paid)).toBeFalsy();
    expect(paid.structuredContent?.body).toBeDefined();
    const warning = paid.structuredContent?.warning as string;
    expect(warning).toContain(`This payment (transaction ${txidOf(bare)}) carries no payment id`);
    expect(warning).toContain('calling again with the same payment is refused (payment_already_used)');
    expect(textsOf(paid)).toContain(warning);
    // The first text stays the structured content as JSON.
    expect(JSON.parse(textsOf(paid).split('\n')[0]!)).toEqual(paid.structuredContent);

    const withId = await call(
      client,
      'paid_market_regime',
      await signedPayment(client, 'paid_market_regime'),
    );
    expect(withId.isError, textsOf(withId)).toBeFalsy();
    expect(withId.structuredContent?.warning).toBeUndefined();
  }, 60_000);

  it('a 200 withheld for want of a settlement does not promise an id-less payment a redelivery', async () => {
    const host = new Hono();
    const file = JSON.parse(
      await readFile(join(root, 'paid', resourceById('paidMainBrain').file), 'utf8'),
    ) as unknown;
    host.get('/api/x402-main-brain.php', () => Response.json(file));
    const server = await listen(host, 0, '127.0.0.1');
    closing.push(() => server.close());
    const client = await agent(fetchPaidAt(server.url));
    const payment = await signedPayment(await agent(), 'paid_main_brain', { withoutId: true });
    const withheld = await call(client, 'paid_main_brain', payment);
    expect(withheld.isError).toBe(true);
    expect(textsOf(withheld)).toContain('the body is withheld');
    expect(textsOf(withheld)).not.toMatch(/delivered again, never charged twice/);
    expect(textsOf(withheld)).toContain('This payment carries no payment id');
    expect(textsOf(withheld)).toContain(`quote transaction ${txidOf(payment)} to the seller`);
  }, 60_000);
});

describe('a settled body that fails this server’s schema (a paywall with a newer one)', () => {
  /** A paywall "with a newer schema": the real paywall's answers, a paid body given one more field. */
  async function newerPaywall(): Promise<string> {
    return serve((request, response) => {
      const signature = request.headers['payment-signature'];
      void fetch(`${paywallServer.url}${request.url}`, {
        headers: typeof signature === 'string' ? { 'PAYMENT-SIGNATURE': signature } : {},
      }).then(async (answer) => {
        let body = await answer.text();
        if (answer.status === 200) body = JSON.stringify({ ...JSON.parse(body), added_in_v2: true });
        const headers = Object.fromEntries(answer.headers);
        delete headers['content-length'];
        delete headers['content-encoding'];
        response.writeHead(answer.status, headers).end(body);
      });
    });
  }

  it('is delivered as text with a warning, on the first call and on a second with the same payment', async () => {
    const client = await agent(fetchPaidAt(await newerPaywall()));
    const payment = await signedPayment(client, 'paid_main_brain');
    const txid = txidOf(payment);
    const before = balance();
    const expected = {
      ...(JSON.parse(
        await readFile(join(root, 'paid', resourceById('paidMainBrain').file), 'utf8'),
      ) as object),
      added_in_v2: true,
    };
    for (const attempt of ['first', 'again']) {
      const paid = await call(client, 'paid_main_brain', payment);
      // Before: an error, "so it is withheld", on every call: charged, and never the body.
      expect(paid.isError, `${attempt}: ${textsOf(paid)}`).toBeFalsy();
      expect(settledTxid(paid)).toBe(txid);
      const content = paid.structuredContent as { body?: unknown; body_text: string; warning: string };
      expect(content.body).toBeUndefined(); // the declared body schema is not claimed for it
      expect(JSON.parse(content.body_text)).toEqual(expected);
      expect(content.warning).toContain(`settled payment ${txid} and delivered a body that does not match`);
      expect(content.warning).toContain('added_in_v2');
      expect(textsOf(paid)).toContain(content.warning);
      expect(paid.structuredContent?.data_mode).toBe('simulated');
    }
    expect(balance() - before).toBe(10_000n);
  }, 60_000);
});

describe('payment texts in MCP terms', () => {
  const HTTP_WORDS = /PAYMENT-SIGNATURE|repeat this request/;

  it('the payment-required result says to call the tool again with the payment in _meta', async () => {
    const client = await agent();
    const challenge = await call(client, 'paid_main_brain');
    expect(challenge.isError).toBe(true);
    // Before: "then repeat this request with the base64 payment in the PAYMENT-SIGNATURE header".
    expect(allOf(challenge)).not.toMatch(HTTP_WORDS);
    expect((challenge.structuredContent as { message: string }).message).toContain(
      `then call paid_main_brain again with the PaymentPayload in _meta["${PAYMENT_META}"]`,
    );
    expect(JSON.parse(textsOf(challenge).split('\n')[0]!)).toEqual(challenge.structuredContent);
  });

  it('a refused payment and an already-used one: MCP wording too', async () => {
    const client = await agent();
    const payment = await signedPayment(client, 'paid_main_brain', { withoutId: true });
    const elsewhere = await call(client, 'paid_market_regime', payment);
    expect(elsewhere.structuredContent).toMatchObject({ error: 'payment_does_not_match' });
    expect(allOf(elsewhere)).not.toMatch(HTTP_WORDS);

    expect((await call(client, 'paid_main_brain', payment)).isError).toBeFalsy();
    const used = await call(client, 'paid_main_brain', payment);
    expect(used.structuredContent).toMatchObject({ error: 'payment_already_used' });
    expect(allOf(used)).not.toMatch(HTTP_WORDS);
    expect(textsOf(used)).toContain(
      `call paid_main_brain again with the PaymentPayload in _meta["${PAYMENT_META}"]`,
    );
  }, 60_000);

  it('the same payment twice at once: the call that waits is told in MCP terms too', async () => {
    const client = await agent();
    const payment = await signedPayment(client, 'atlas_human_report');
    const before = balance();
    const results = await Promise.all([1, 2].map(() => call(client, 'atlas_human_report', payment)));
    expect(results.filter((r) => !r.isError)).not.toHaveLength(0);
    for (const result of results) expect(allOf(result)).not.toMatch(HTTP_WORDS);
    expect(balance() - before).toBe(BigInt(resourceById('atlasHumanReport').amountAtomic));
  }, 60_000);

  it("every HTTP phrasing of the paywall's advice has its MCP wording", () => {
    const resource = resourceById('paidMainBrain');
    const meta = `_meta["${PAYMENT_META}"]`;
    const cases: Array<[string, string]> = [
      [
        'sign the payment described in accepts, then repeat this request with the base64 payment in the PAYMENT-SIGNATURE header.',
        `sign the payment described in accepts, then call paid_main_brain again with the PaymentPayload in ${meta}.`,
      ],
      [
        'Whether payment X landed is not known yet: send the same request with the same PAYMENT-SIGNATURE again to receive the file if it did.',
        `Whether payment X landed is not known yet: call paid_main_brain again with the same ${meta}, not a new payment, to receive the file if it did.`,
      ],
      [
        'Do not sign a new payment: send this same PAYMENT-SIGNATURE again after the Retry-After delay to receive the file.',
        `Do not sign a new payment: call paid_main_brain again with the same ${meta} after the retry delay ("Retry after" in this result) to receive the file.`,
      ],
      [
        'PAYMENT-SIGNATURE is not padded standard base64.',
        `the payment in ${meta} is not padded standard base64.`,
      ],
    ];
    for (const [http, mcp] of cases) expect(inMcpTerms(http, resource)).toBe(mcp);
  });

  it('a settlement whose outcome is unknown: call again with the same _meta, said once, no HTTP header', async () => {
    const facilitator = paywall.devFacilitator!;
    const upstream = new HTTPFacilitatorClient({ url: facilitator.url });
    const app = createPaywallApp(
      {
        payTo: paywall.payTo,
        facilitatorUrl: facilitator.url,
        baseUrl: BASE_URL,
        storage: createFsStorage(join(root, 'paid')),
        allowSimulated: true,
        indexerUrl: facilitator.url,
      },
      {
        log: () => {},
        facilitatorClient: {
          verify: (payload, requirements) => upstream.verify(payload, requirements),
          getSupported: () => upstream.getSupported(),
          settle: () => Promise.reject(new TypeError('fetch failed')),
        },
      },
    );
    const client = await agent(fetchPaidThrough((path, init) => app.request(path, init)));
    const payment = await signedPayment(client, 'paid_main_brain');
    const lost = await call(client, 'paid_main_brain', payment);
    expect(lost.isError).toBe(true);
    expect(lost.structuredContent?.transaction).toBe(txidOf(payment));
    // Before: "send the same request with the same PAYMENT-SIGNATURE again".
    expect(allOf(lost)).not.toMatch(HTTP_WORDS);
    const advice = `call paid_main_brain again with the same _meta["${PAYMENT_META}"]`;
    expect(textsOf(lost)).toContain(advice);
    expect(textsOf(lost).split(advice)).toHaveLength(2); // said once
  }, 60_000);
});
