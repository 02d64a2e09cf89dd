// What an agent is told when a tool cannot answer, against the real local stack (generator output, the paywall
// with the development facilitator, the official SDK client, which lists the tools first as agents do and so
// checks every structured result against the published output schema): the paywall's readable reason for a
// refused purchase, a published file that is corrupt (not "not published yet"), a paywall that never answers
// (bounded, and a payment that may have been taken is said, with how to collect the file), and output schemas
// that are plain JSON Schema.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { Socket } from 'node:net';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { PAYMENT_META, PAYMENT_RESPONSE_META } from '../mcp/paid-tools.ts';
import { fetchPaidAt, fetchPaidThrough } from '../mcp/server.ts';
import { assetsReader } from '../paywall-worker/cloudflare/site-worker.ts';
import { BASE_URL, connectAgent, startMcpStack, stopMcpStack } from './mcp-stack.ts';
import type { AgentOptions } from './mcp-stack.ts';
import { newBuyer, paymentHeader } from './paywall-harness.ts';

let root: string;
let paywall: LocalPaywall;
let paywallServer: Listening;
const closing: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ({ root, paywall, paywallServer } = await startMcpStack('emi-mcp-errors-', 11));
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await stopMcpStack({ root, paywall, paywallServer });
});

/** An official SDK client on a streamable HTTP `/mcp` on 127.0.0.1 over this stack (test/mcp-stack.ts). */
const agent = (options: AgentOptions = {}): Promise<Client> =>
  connectAgent({ root, paywall, paywallServer }, closing, 'emi-errors', { ...options });

const call = async (client: Client, name: string, meta?: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: {}, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
const textsOf = (result: CallToolResult) =>
  result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
const txidOf = (payment: PaymentPayload) => {
  const { paymentGroup, paymentIndex } = payment.payload as { paymentGroup: string[]; paymentIndex: number };
  return algosdk.decodeSignedTransaction(algosdk.base64ToBytes(paymentGroup[paymentIndex]!)).txn.txID();
};
const balance = () => paywall.devFacilitator!.ledger.assetBalance(paywall.payTo);

async function signedPayment(client: Client, tool: string): Promise<PaymentPayload> {
  const buyer = await newBuyer(paywall.devFacilitator!);
  const challenge = await call(client, tool);
  return buyer.pay(challenge.structuredContent as unknown as PaymentRequired);
}

describe("a refused purchase carries the paywall's readable reason", () => {
  it('a 402 refusal: the x402 code and the paywall message, in structured content and text', async () => {
    const client = await agent();
    const payment = await signedPayment(client, 'paid_main_brain');
    // Paid for the main brain, offered to the market regime: the paywall refuses it before anything is settled.
    const http = await fetch(`${paywallServer.url}/api/x402-market-regime.php`, {
      headers: paymentHeader(payment),
    });
    expect(http.status).toBe(402);
    const { error, message } = (await http.json()) as { error: string; message: string };
    expect(error).toBe('payment_does_not_match');

    const result = await call(client, 'paid_market_regime', { [PAYMENT_META]: payment });
    expect(result.isError).toBe(true);
    const content = result.structuredContent as { error: string; message?: string; x402Version: number };
    expect(content.x402Version).toBe(2);
    expect(content.error).toBe('payment_does_not_match');
    // The paywall's reason, its HTTP instruction (the PAYMENT-SIGNATURE header) said in MCP terms.
    const overMcp = message.replace(
      'repeat this request with the base64 payment in the PAYMENT-SIGNATURE header',
      `call paid_market_regime again with the PaymentPayload in _meta["${PAYMENT_META}"]`,
    );
    expect(overMcp).not.toBe(message);
    expect(content.message).toBe(overMcp);
    // The first text stays the PaymentRequired as JSON (the x402 MCP transport); a person-readable line follows.
    expect(JSON.parse(textsOf(result).split('\n')[0]!)).toEqual(result.structuredContent);
    expect(textsOf(result)).toContain(`refused the payment (payment_does_not_match): ${overMcp}`);
  }, 60_000);

  it("a refused settlement: the paywall's failed SettleResponse in _meta, as the transport has it", async () => {
    const client = await agent();
    const broke = await newBuyer(paywall.devFacilitator!, '0'); // opted in, no USDC
    const challenge = await call(client, 'paid_market_regime');
    const payment = await broke.pay(challenge.structuredContent as unknown as PaymentRequired);
    const before = balance();
    const result = await call(client, 'paid_market_regime', { [PAYMENT_META]: payment });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { x402Version: number }).x402Version).toBe(2);
    const settlement = result._meta?.[PAYMENT_RESPONSE_META] as { success: boolean; errorReason?: string };
    // Before: no _meta at all, the reason only in the code.
    expect(settlement?.success).toBe(false);
    expect(settlement.errorReason).toBeTruthy();
    expect(balance()).toBe(before); // nothing was taken
  }, 60_000);

  it("a 502 naming the transaction passes on the facilitator's failed settlement in _meta", async () => {
    const failed = {
      success: false,
      errorReason: 'invalid_exact_avm_confirmation_failed',
      transaction: 'TXID',
      network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k' as const,
    };
    // The answer the paywall gives then (test/paywall-settlement.test.ts checks that it does).
    const client = await agent({
      fetchPaid: () =>
        Promise.resolve(
          Response.json(
            {
              success: false,
              status: 502,
              error: failed.errorReason,
              message: 'not confirmed',
              transaction: 'TXID',
            },
            { status: 502, headers: { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(failed) } },
          ),
        ),
    });
    const result = await call(client, 'paid_market_regime');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 502, transaction: 'TXID' });
    expect(result._meta?.[PAYMENT_RESPONSE_META]).toMatchObject({ success: false, transaction: 'TXID' });
  });

  it('a JSON refusal (503 before any 402): an error result with code and message, not a protocol error', async () => {
    // The paywall's own app, selling only live data: the simulated files are refused with 503 data_not_live.
    const app = createPaywallApp(
      {
        payTo: paywall.payTo,
        facilitatorUrl: paywall.devFacilitator!.url,
        baseUrl: BASE_URL,
        storage: createFsStorage(join(root, 'paid')),
        allowSimulated: false,
      },
      { log: () => {} },
    );
    const http = await app.request('/api/x402-atlas.php');
    expect(http.status).toBe(503);
    const body = (await http.json()) as { error: string; message: string };
    expect(body.error).toBe('data_not_live');

    const client = await agent({ fetchPaid: fetchPaidThrough((path, init) => app.request(path, init)) });
    const result = await call(client, 'atlas');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: 503,
      error: 'data_not_live',
      message: body.message,
    });
    expect(textsOf(result)).toContain(`(503 data_not_live): ${body.message}`);
  });
});

describe('a published file that cannot be read is not "not published yet"', () => {
  it('names the file and why (not JSON, not its schema, not a file), apart from a file that is absent', async () => {
    const site = await mkdtemp(join(root, 'site-corrupt-'));
    await cp(join(root, 'site'), site, { recursive: true });
    await writeFile(join(site, 'api/market-regime.php'), '{"truncated": ');
    await writeFile(join(site, 'api/main-brain.php'), JSON.stringify({ hello: 'world' }));
    await rm(join(site, 'api/derivatives.php'));
    await mkdir(join(site, 'api/derivatives.php'));
    await rm(join(site, 'api/liquidity-lite.php'));
    const client = await agent({ site });

    const notJson = await call(client, 'market_regime');
    expect(notJson.isError).toBe(true);
    expect(textsOf(notJson)).toMatch(
      /^\/api\/market-regime\.php is published but could not be read: the file api\/market-regime\.php is not valid JSON \(/,
    );

    const wrongShape = await call(client, 'main_brain');
    expect(wrongShape.isError).toBe(true);
    expect(textsOf(wrongShape)).toMatch(
      /^\/api\/main-brain\.php is published but could not be read: the file api\/main-brain\.php does not match its schema \(.+\)/,
    );

    const folder = await call(client, 'derivatives');
    expect(folder.isError).toBe(true);
    expect(textsOf(folder)).toMatch(/the file api\/derivatives\.php cannot be read \(EISDIR/);

    for (const result of [notJson, wrongShape, folder]) {
      expect(textsOf(result)).not.toMatch(/not been published/);
    }
    const absent = await call(client, 'liquidity_lite');
    expect(absent.isError).toBe(true);
    expect(textsOf(absent)).toMatch(/^\/api\/liquidity-lite\.php has not been published yet/);
  });

  it('on the Worker: only a 404 from the static assets is "absent"; another failure is an error', async () => {
    const answering = (status: number) =>
      assetsReader(
        { ASSETS: { fetch: () => Promise.resolve(new Response('{"a":1}', { status })) } },
        'https://example.test',
      );
    expect(await answering(200)('api/market-regime.php')).toBe('{"a":1}');
    expect(await answering(404)('api/market-regime.php')).toBeNull();
    // Before: null, so an agent was told "not published yet" when the assets failed.
    await expect(answering(503)('api/market-regime.php')).rejects.toThrow(
      'the static assets answered HTTP 503 for api/market-regime.php',
    );
  });
});

describe('a paywall that never answers', () => {
  /** A TCP server on 127.0.0.1 that accepts every connection and never writes a byte. */
  async function silentServer(): Promise<string> {
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    const { port } = server.address() as { port: number };
    return `http://127.0.0.1:${port}`;
  }

  /**
   * An HTTP server that passes each request on to the real paywall and never answers the caller: the payment is
   * settled and the answer lost. `settled` resolves with the paywall's status once it has answered.
   */
  async function swallowingProxy(): Promise<{ url: string; settled: Promise<number> }> {
    let answered!: (status: number) => void;
    const settled = new Promise<number>((resolve) => (answered = resolve));
    const server: HttpServer = createServer((request) => {
      const signature = request.headers['payment-signature'];
      void fetch(`${paywallServer.url}${request.url}`, {
        headers: typeof signature === 'string' ? { 'PAYMENT-SIGNATURE': signature } : {},
      }).then(async (response) => {
        await response.arrayBuffer();
        answered(response.status);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}`, settled };
  }

  it('ends an unpaid call with a clear error: nothing was paid', async () => {
    const client = await agent({ fetchPaid: fetchPaidAt(await silentServer(), { timeoutMs: 300 }) });
    const result = await call(client, 'atlas');
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'paywall_timeout' });
    expect(textsOf(result)).toMatch(
      /^\/api\/x402-atlas\.php: the paywall did not answer in time \(no complete answer from http:\/\/127\.0\.0\.1:\d+ within 0\.3 s\)\. No payment was sent: nothing was taken/,
    );
  });

  it('emi mcp --paywall-timeout sets that bound for the stdio server (and refuses one that is not a whole number)', async () => {
    const client = new Client({ name: 'emi-errors-stdio', version: '1.0.0' });
    const silent = await silentServer();
    const args = ['bin/emi.js', 'mcp', '--dir', join(root, 'site'), '--paywall-url', silent];
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...args, '--paywall-timeout', '1'],
        cwd: process.cwd(),
        stderr: 'pipe',
      }),
    );
    closing.push(() => client.close());
    await client.listTools();
    const result = await call(client, 'atlas');
    expect(result.structuredContent).toMatchObject({ error: 'paywall_timeout' });
    expect(textsOf(result)).toContain(`no complete answer from ${silent} within 1 s`);

    const refused = spawnSync(process.execPath, [...args, '--paywall-timeout', '0.5'], { encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('"0.5" is not a positive whole number.');
  }, 30_000);

  it('after a payment was sent: says it may have been taken, and the same payment collects the file, charged once', async () => {
    const direct = await agent();
    const payment = await signedPayment(direct, 'paid_main_brain');
    const txid = txidOf(payment);
    const before = balance();
    const proxy = await swallowingProxy();
    const client = await agent({ fetchPaid: fetchPaidAt(proxy.url, { timeoutMs: 300 }) });

    const lost = await call(client, 'paid_main_brain', { [PAYMENT_META]: payment });
    expect(lost.isError).toBe(true);
    expect(lost.structuredContent).toMatchObject({ error: 'paywall_timeout', transaction: txid });
    expect(lost.structuredContent?.body).toBeUndefined();
    expect(textsOf(lost)).toContain(
      `after the payment (transaction ${txid}) was sent, so it may have been taken`,
    );
    expect(textsOf(lost)).toContain(
      `Do not sign a new payment: call paid_main_brain again with the same _meta["${PAYMENT_META}"]`,
    );

    // The paywall did settle it behind the silent proxy; the advice, followed, delivers without a second charge.
    expect(await proxy.settled).toBe(200);
    expect(balance() - before).toBe(10_000n);
    const again = await call(direct, 'paid_main_brain', { [PAYMENT_META]: payment });
    expect(again.isError, textsOf(again)).toBeFalsy();
    expect((again._meta?.[PAYMENT_RESPONSE_META] as { transaction: string }).transaction).toBe(txid);
    expect(balance() - before).toBe(10_000n);
  }, 60_000);
});

describe('published output schemas are JSON Schema', () => {
  /** JSON Schema's own format values (draft-07 and 2020-12). */
  const JSON_SCHEMA_FORMATS = new Set([
    'date-time',
    'date',
    'time',
    'duration',
    'email',
    'idn-email',
    'hostname',
    'idn-hostname',
    'ipv4',
    'ipv6',
    'uri',
    'uri-reference',
    'iri',
    'iri-reference',
    'uuid',
    'uri-template',
    'json-pointer',
    'relative-json-pointer',
    'regex',
  ]);

  /** Every `format` in a schema, with where it is. */
  function formatsIn(node: unknown, at: string, found: Array<{ at: string; format: string }> = []) {
    if (node === null || typeof node !== 'object') return found;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'format' && typeof value === 'string') found.push({ at, format: value });
      else formatsIn(value, `${at}/${key}`, found);
    }
    return found;
  }

  it('tools/list: every format of every tool is a JSON Schema format; zod prefix rules become patterns', async () => {
    const client = await agent();
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(10);
    const unknown = tools.flatMap((tool) =>
      [
        ...formatsIn(tool.outputSchema, `${tool.name} outputSchema`),
        ...formatsIn(tool.inputSchema, `${tool.name} inputSchema`),
      ].filter(({ format }) => !JSON_SCHEMA_FORMATS.has(format)),
    );
    expect(unknown).toEqual([]);
    // The rule zod wrote as format "starts_with" (z.string().startsWith('/')) is still stated, as a pattern.
    const marketRegime = tools.find((t) => t.name === 'market_regime')!.outputSchema;
    const keys = 'properties body properties expanded_access properties endpoints items properties path';
    const path = keys
      .split(' ')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], marketRegime);
    expect(path).toEqual({ type: 'string', pattern: '^\\/.*' });
  });

  it('tools/list: a paid tool is not read-only (a call with a payment settles a USDC transfer); free tools are', async () => {
    const client = await agent();
    const { tools } = await client.listTools();
    const paid = tools.filter((t) => t._meta?.['x402/price'] !== undefined);
    expect(paid.map((t) => t.name).sort()).toEqual([
      'atlas',
      'atlas_human_report',
      'paid_main_brain',
      'paid_market_regime',
    ]);
    // A client may approve a read-only tool without asking: a payment must never be one of those.
    for (const tool of paid) {
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
    const free = tools.filter((t) => !paid.includes(t));
    expect(free.length).toBeGreaterThan(5);
    for (const tool of free) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
  });

  it('tools/list: a whole-number constant is an integer, as in the published documents', async () => {
    const client = await agent();
    const { tools } = await client.listTools();
    const paid = tools.find((t) => t.name === 'paid_market_regime')!.outputSchema!;
    const version = (paid.properties as Record<string, Record<string, unknown>>).x402Version;
    // Before: {"type":"number","const":2}, which client generators type as a float.
    expect(version).toMatchObject({ type: 'integer', const: 2 });
  });
});
