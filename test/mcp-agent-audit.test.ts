// The MCP server as an agent meets it, against the real local stack (generator output, local paywall, development
// facilitator, official SDK client): the data mode and freshness of what every tool returns, a paid body never
// handed over without a settlement of this very payment, `emi mcp` answering every request read before stdin
// closes, history days that cannot be read, the reasoning tool's default asset and huge inputs.
import { spawn } from 'node:child_process';
import { cp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { toolNameOf } from '../mcp/free-tools.ts';
import { HistoryToolOutput } from '../mcp/history-tool.ts';
import { PAYMENT_META, PAYMENT_RESPONSE_META } from '../mcp/paid-tools.ts';
import type { FetchPaid } from '../mcp/paid-tools.ts';
import { fetchPaidAt, fetchPaidThrough } from '../mcp/server.ts';
import { BASE_URL, connectAgent, startMcpStack, stopMcpStack } from './mcp-stack.ts';
import type { AgentOptions } from './mcp-stack.ts';
import { newBuyer } from './paywall-harness.ts';

let root: string;
let paywall: LocalPaywall;
let paywallServer: Listening;
const closing: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ({ root, paywall, paywallServer } = await startMcpStack('emi-mcp-audit-', 7));
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await stopMcpStack({ root, paywall, paywallServer });
});

const inProcess: FetchPaid = (path, signature) =>
  fetchPaidThrough((p, init) => paywall.app.request(p, init))(path, signature);

/** An official SDK client on a streamable HTTP `/mcp` on 127.0.0.1 over this stack (test/mcp-stack.ts). */
const agent = (options: AgentOptions = {}): Promise<Client> =>
  connectAgent({ root, paywall, paywallServer }, closing, 'emi-audit', {
    fetchPaid: inProcess,
    listTools: false,
    ...options,
  });

const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
) => (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
const textOf = (result: CallToolResult) => (result.content[0] as { type: 'text'; text: string }).text;
const paidFile = async (file: string) =>
  JSON.parse(await readFile(join(root, 'paid', file), 'utf8')) as unknown;
const freeToolName = (id: string) => (id === 'reasoning' ? 'reasoning' : toolNameOf(id));
/** The id of the buyer's signed transaction: what a settlement of this payment must name. */
const txidOf = (payment: PaymentPayload) => {
  const { paymentGroup, paymentIndex } = payment.payload as { paymentGroup: string[]; paymentIndex: number };
  const signed = algosdk.base64ToBytes(paymentGroup[paymentIndex]!);
  return algosdk.decodeSignedTransaction(signed).txn.txID();
};
const balance = () => paywall.devFacilitator!.ledger.assetBalance(paywall.payTo);

describe('what the tools state about their data', () => {
  it('every paid tool, once paid, states the data mode of the body it delivers (the atlas too)', async () => {
    const client = await agent();
    const buyer = await newBuyer(paywall.devFacilitator!, '10000000');
    for (const resource of PAID_RESOURCES) {
      const name = toolNameOf(resource.id);
      const challenge = await call(client, name);
      const payment = await buyer.pay(challenge.structuredContent as unknown as PaymentRequired);
      const paid = await call(client, name, {}, { [PAYMENT_META]: payment });
      expect(paid.isError, `${name}: ${textOf(paid)}`).toBeFalsy();
      const content = paid.structuredContent as { data_mode: string | null; body: unknown };
      // The sim source: every paid file is simulated, and the result must say so.
      expect(content.data_mode, name).toBe('simulated');
      expect(content.body, name).toEqual(await paidFile(resource.file));
    }
  }, 60_000);

  it('says whether the data is fresh, late or stale, by the rule of /docs/freshness/', async () => {
    const generated = Date.parse(
      (JSON.parse(await readFile(join(root, 'site/api/main-brain.php'), 'utf8')) as { updated: string })
        .updated,
    );
    // The sim runs every minute: next_update_due is 60 s after generation.
    for (const [after, state] of [
      [10_000, 'fresh'],
      [90_000, 'late'],
      [3 * 3_600_000, 'stale'],
    ] as const) {
      const client = await agent({ now: () => generated + after });
      for (const resource of FREE_RESOURCES) {
        const name = freeToolName(resource.id);
        const result = await call(client, name, name === 'reasoning' ? { asset: 'ETH' } : {});
        expect(result.structuredContent?.freshness, `${name} ${after} ms after generation`).toBe(state);
      }
    }
  });

  it('tells no age and no freshness of data dated ahead of its clock beyond the skew hosts may have', async () => {
    const generated = Date.parse(
      (JSON.parse(await readFile(join(root, 'site/api/main-brain.php'), 'utf8')) as { updated: string })
        .updated,
    );
    for (const [before, age, state] of [
      [30_000, 0, 'fresh'], // within a minute of skew: read as just generated
      [4 * 60_000, null, null], // four minutes ahead: the paywall would refuse it, and it is not called fresh
    ] as const) {
      const client = await agent({ now: () => generated - before });
      const result = await call(client, 'market_regime', {});
      expect(result.structuredContent?.data_age_seconds, `${before} ms ahead`).toBe(age);
      expect(result.structuredContent?.freshness, `${before} ms ahead`).toBe(state);
    }
  });
});

describe('a paid body only with a settlement of this payment', () => {
  /** A plain static host serving the paid files at the paid paths, as a wrong --paywall-url would be. */
  async function staticHost(): Promise<string> {
    const app = new Hono();
    for (const resource of PAID_RESOURCES) {
      app.get(resource.path, async () => Response.json(await paidFile(resource.file)));
    }
    const server = await listen(app, 0, '127.0.0.1');
    closing.push(() => server.close());
    return server.url;
  }

  /** A cache in front of the paywall that replays the first 200 of a path to every later request. */
  async function replayingCache(): Promise<string> {
    const kept = new Map<string, { body: string; headers: Headers }>();
    const app = new Hono();
    app.get('*', async (c) => {
      const hit = kept.get(c.req.path);
      if (hit) return new Response(hit.body, { headers: hit.headers });
      const signature = c.req.header('PAYMENT-SIGNATURE');
      const response = await fetch(`${paywallServer.url}${c.req.path}`, {
        headers: signature ? { 'PAYMENT-SIGNATURE': signature } : {},
      });
      const body = await response.text();
      if (response.status === 200) kept.set(c.req.path, { body, headers: response.headers });
      return new Response(body, { status: response.status, headers: response.headers });
    });
    const server = await listen(app, 0, '127.0.0.1');
    closing.push(() => server.close());
    return server.url;
  }

  it('withholds a body answered 200 without any settlement (a static host at --paywall-url)', async () => {
    const client = await agent({ fetchPaid: fetchPaidAt(await staticHost()) });
    for (const resource of PAID_RESOURCES) {
      const result = await call(client, toolNameOf(resource.id));
      expect(result.isError, toolNameOf(resource.id)).toBe(true);
      expect(result.structuredContent?.body).toBeUndefined();
      expect(textOf(result)).toMatch(
        /answered 200 without a settlement of a payment, so the body is withheld/,
      );
    }
  });

  it("withholds a body that comes with another payment's settlement (a cache replaying a sale)", async () => {
    const client = await agent({ fetchPaid: fetchPaidAt(await replayingCache()) });
    const direct = await agent();
    const first = await newBuyer(paywall.devFacilitator!);
    const second = await newBuyer(paywall.devFacilitator!);
    const challenge = async () =>
      (await call(direct, 'paid_main_brain')).structuredContent as unknown as PaymentRequired;

    const bought = await first.pay(await challenge());
    const sale = await call(client, 'paid_main_brain', {}, { [PAYMENT_META]: bought });
    expect(sale.isError, textOf(sale)).toBeFalsy();
    expect((sale._meta?.[PAYMENT_RESPONSE_META] as { transaction: string }).transaction).toBe(txidOf(bought));

    // The cache now answers the first sale's 200 to everybody.
    const unpaid = await call(client, 'paid_main_brain');
    expect(unpaid.isError).toBe(true);
    expect(unpaid.structuredContent?.body).toBeUndefined();
    const other = await second.pay(await challenge());
    const before = balance();
    const replayed = await call(client, 'paid_main_brain', {}, { [PAYMENT_META]: other });
    expect(replayed.isError).toBe(true);
    expect(replayed.structuredContent?.body).toBeUndefined();
    expect(textOf(replayed)).toContain(`without a settlement of payment ${txidOf(other)}`);
    expect(balance()).toBe(before); // the second payment never reached the paywall
  }, 60_000);
});

describe('a payment whose settlement is unknown', () => {
  it('names the transaction and says, in MCP terms, to call again with the same payment; that call delivers', async () => {
    // The paywall's own app on the development ledger, whose facilitator loses settle calls while `lose` is set.
    const facilitator = paywall.devFacilitator!;
    const upstream = new HTTPFacilitatorClient({ url: facilitator.url });
    let lose = true;
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
          settle: (payload, requirements) =>
            lose ? Promise.reject(new TypeError('fetch failed')) : upstream.settle(payload, requirements),
        },
      },
    );
    const client = await agent({ fetchPaid: fetchPaidThrough((path, init) => app.request(path, init)) });
    const buyer = await newBuyer(facilitator);
    const challenge = await call(client, 'paid_main_brain');
    const payment = await buyer.pay(challenge.structuredContent as unknown as PaymentRequired);
    const before = balance();

    const lost = await call(client, 'paid_main_brain', {}, { [PAYMENT_META]: payment });
    expect(lost.isError).toBe(true);
    expect(lost.structuredContent?.body).toBeUndefined();
    expect(lost.structuredContent?.transaction).toBe(txidOf(payment));
    expect(textOf(lost)).toContain(
      `call paid_main_brain again with the same _meta["${PAYMENT_META}"], not a new payment`,
    );

    lose = false;
    const again = await call(client, 'paid_main_brain', {}, { [PAYMENT_META]: payment });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect((again._meta?.[PAYMENT_RESPONSE_META] as { transaction: string }).transaction).toBe(
      txidOf(payment),
    );
    expect(balance() - before).toBe(10_000n);
  }, 60_000);
});

describe('emi mcp (stdio) when the client closes stdin', () => {
  it('answers every request read before stdin closed, the paid one with its settlement, and exits 0 printing only protocol', async () => {
    const direct = await agent();
    const buyer = await newBuyer(paywall.devFacilitator!);
    const challenge = await call(direct, 'paid_main_brain');
    const payment = await buyer.pay(challenge.structuredContent as unknown as PaymentRequired);
    const before = balance();

    const child = spawn(
      process.execPath,
      [
        'bin/emi.js',
        'mcp',
        '--dir',
        join(root, 'site'),
        '--paid',
        join(root, 'paid'),
        '--paywall-url',
        paywallServer.url,
      ],
      { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (code, signal) => resolve([code, signal])),
    );
    child.stderr.resume();
    // The SDK's own stdio framing reads stdout: any line that is not a JSON-RPC message throws.
    const buffer = new ReadBuffer();
    const messages: JSONRPCMessage[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      buffer.append(chunk);
      for (let m = buffer.readMessage(); m; m = buffer.readMessage()) messages.push(m);
    });
    const send = (message: JSONRPCMessage) => child.stdin.write(serializeMessage(message));
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'main_brain', arguments: {} } });
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'paid_main_brain', arguments: {}, _meta: { [PAYMENT_META]: payment } },
    });
    child.stdin.end();

    expect(await exited).toEqual([0, null]);
    const answer = (id: number) =>
      (messages.find((m) => 'id' in m && m.id === id) as { result?: CallToolResult } | undefined)?.result;
    expect(answer(1)).toBeDefined();
    const free = answer(2);
    expect(free, 'main_brain answered').toBeDefined();
    expect(free?.isError).toBeFalsy();
    const paid = answer(3);
    expect(paid, 'paid_main_brain answered').toBeDefined();
    expect(paid?.isError, paid && textOf(paid)).toBeFalsy();
    expect((paid?._meta?.[PAYMENT_RESPONSE_META] as { transaction: string }).transaction).toBe(
      txidOf(payment),
    );
    expect(balance() - before).toBe(10_000n);
  }, 60_000);
});

describe('history when days cannot be read', () => {
  it('names a listed day whose file cannot be read, and refuses a range without a history index', async () => {
    const site = join(root, 'site-damaged');
    await cp(join(root, 'site'), site, { recursive: true });
    const index = JSON.parse(await readFile(join(site, 'api/history/index.json'), 'utf8')) as {
      resources: Array<{ resource: string; days: string[] }>;
    };
    const day = index.resources.find((r) => r.resource === 'main-brain')!.days.at(-1)!;
    await rm(join(site, `api/history/main-brain/${day}.json`));
    const client = await agent({ site });

    const result = await call(client, 'history', { resource: 'main-brain', from: day });
    expect(result.isError).toBeFalsy();
    const content = HistoryToolOutput.parse(result.structuredContent);
    expect(content.rows).toEqual([]);
    expect(content.missing_days).toEqual([day]);

    await rm(join(site, 'api/history/index.json'));
    const noIndex = await call(client, 'history', { resource: 'main-brain', from: day });
    expect(noIndex.isError).toBe(true);
    expect(textOf(noIndex)).toMatch(
      /^no history has been published yet \(api\/history\/index\.json is absent\): run the generator first\.$/,
    );
  });
});

describe('inputs an agent may send', () => {
  it('reasoning without an asset answers BTC, as its description says', async () => {
    const client = await agent();
    const { tools } = await client.listTools();
    const reasoning = tools.find((t) => t.name === 'reasoning')!;
    expect(reasoning.description).toMatch(/default BTC/);
    const result = await call(client, 'reasoning');
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((result.structuredContent?.body as { asset: string }).asset).toBe('BTC');
  });

  it('a huge string is not echoed back whole in the error', async () => {
    const client = await agent();
    const huge = 'x'.repeat(100_000);
    const asset = await call(client, 'reasoning', { asset: huge });
    expect(asset.isError).toBe(true);
    expect(textOf(asset)).toMatch(/^unknown asset "x+\.\.\.": use one of BTC, ETH/);
    expect(textOf(asset).length).toBeLessThan(200);
    const fields = await call(client, 'history', { resource: 'main-brain', fields: [huge] });
    expect(fields.isError).toBe(true);
    expect(textOf(fields)).toMatch(/^unknown field\(s\) for main-brain: x+\.{4} Known:/);
    expect(textOf(fields).length).toBeLessThan(2_000);
  });
});
