// The MCP server against the real local stack: the official SDK client over stdio (emi mcp, another process) and
// over streamable HTTP, the local paywall with the development facilitator, and a development wallet paying with
// the official x402 client.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EDUCATIONAL_NOTICE } from '../schemas/common.ts';
import { ReasoningResponse } from '../schemas/reasoning.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { bodyEnvelope } from '../mcp/facts.ts';
import { toolNameOf } from '../mcp/free-tools.ts';
import { HistoryToolOutput } from '../mcp/history-tool.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { PAYMENT_META, PAYMENT_RESPONSE_META } from '../mcp/paid-tools.ts';
import { createMcpServer, fetchPaidThrough } from '../mcp/server.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { newBuyer } from './paywall-harness.ts';

const BASE_URL = 'http://127.0.0.1:8080';
let root: string;
let paywall: LocalPaywall;
let paywallServer: Listening;
let mcpServer: Listening;

const FREE_TOOLS = FREE_RESOURCES.map((r) => (r.id === 'reasoning' ? 'reasoning' : toolNameOf(r.id)));
const PAID_TOOLS = PAID_RESOURCES.map((r) => toolNameOf(r.id));

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-mcp-'));
  const asOf = Math.floor(Date.now() / 60_000) * 60_000;
  const report = await runPipeline({
    outDir: join(root, 'site'),
    paidDir: join(root, 'paid'),
    stateDir: join(root, 'state'),
    source: 'sim',
    seed: 7,
    asOf,
  });
  expect(report.status).toBe('ok');
  paywall = await createLocalPaywall({
    paidDir: join(root, 'paid'),
    baseUrl: BASE_URL,
    devFacilitatorPort: 0,
  });
  paywallServer = await listen(paywall.app, 0, '127.0.0.1');
  const route = createMcpRoute(() =>
    createMcpServer({
      readText: readTextFrom(join(root, 'site')),
      fetchPaid: fetchPaidThrough((path, init) => paywall.app.request(path, init)),
      baseUrl: BASE_URL,
    }),
  );
  mcpServer = await listen(route, 0, '127.0.0.1');
}, 60_000);

afterAll(async () => {
  await mcpServer?.close();
  await paywallServer?.close();
  await paywall?.close();
  await rm(root, { recursive: true, force: true });
});

const transports = {
  'streamable HTTP': () =>
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${mcpServer.port}/mcp`)),
  // emi mcp in its own process; paid tools go to the same local paywall over HTTP (--paywall-url).
  stdio: () =>
    new StdioClientTransport({
      command: process.execPath,
      args: [
        'bin/emi.js',
        'mcp',
        '--dir',
        join(root, 'site'),
        '--paid',
        join(root, 'paid'),
        '--paywall-url',
        `http://127.0.0.1:${paywallServer.port}`,
      ],
      cwd: process.cwd(),
      stderr: 'pipe',
    }),
};

const textOf = (result: CallToolResult) => (result.content[0] as { type: 'text'; text: string }).text;

describe.each(Object.entries(transports))('over %s', (_name, makeTransport) => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ name: 'emi-test', version: '1.0.0' });
    await client.connect(makeTransport());
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  it('lists every tool, each with an input and an output schema, and the discovery resources', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...FREE_TOOLS, 'history', ...PAID_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(['emi://openapi.json', 'emi://llms.txt', 'emi://api/history/index.json']),
    );
    const openapi = await client.readResource({ uri: 'emi://openapi.json' });
    const text = (openapi.contents[0] as { text: string }).text;
    expect(JSON.parse(text).paths['/api/x402-atlas.php']).toBeDefined();
  });

  it('calls every free tool; each result validates against its output schema and states its facts', async () => {
    for (const resource of FREE_RESOURCES) {
      const name = resource.id === 'reasoning' ? 'reasoning' : toolNameOf(resource.id);
      const result = (await client.callTool({
        name,
        arguments: name === 'reasoning' ? { asset: 'eth' } : {},
      })) as CallToolResult;
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      const schema = name === 'reasoning' ? ReasoningResponse : resource.schema;
      const content = bodyEnvelope(schema).parse(result.structuredContent);
      expect(content.educational_notice).toBe(EDUCATIONAL_NOTICE);
      expect(content.data_mode).toBe('simulated');
      expect(content.data_age_seconds).toEqual(expect.any(Number));
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
      if (name === 'reasoning') expect((content.body as { asset: string }).asset).toBe('ETH');
    }
    const unknown = (await client.callTool({
      name: 'reasoning',
      arguments: { asset: 'doge' },
    })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/unknown asset "doge": use one of BTC, ETH/);
  });

  it('answers the history of a resource, with chosen fields', async () => {
    const result = (await client.callTool({
      name: 'history',
      arguments: { resource: 'main-brain', fields: ['btc_price'] },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const content = HistoryToolOutput.parse(result.structuredContent);
    expect(content.columns).toEqual(['run_at', 'data_mode', 'source_status', 'btc_price']);
    expect(content.rows).toHaveLength(1);
    expect(content.rows[0]?.btc_price).toEqual(expect.any(Number));
    expect(content.data_modes).toEqual(['simulated']);
    const bad = (await client.callTool({
      name: 'history',
      arguments: { resource: 'main-brain', fields: ['nope'] },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/unknown field\(s\) for main-brain: nope/);
  });

  it('a paid tool without payment answers the same PaymentRequired as the HTTP 402', async () => {
    const result = (await client.callTool({ name: 'atlas', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    const required = result.structuredContent as unknown as PaymentRequired;
    expect(required.x402Version).toBe(2);
    expect(required.accepts[0]).toMatchObject({ scheme: 'exact', amount: '20000', payTo: paywall.payTo });
    expect(required.resource.url).toBe(`${BASE_URL}/api/x402-atlas.php`);
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    // What is on offer, as every result says it (README "MCP"): the 402's data mode and generation time.
    const offer = (await (await paywall.app.request('/api/x402-atlas.php')).json()) as {
      data: { mode: string; generated_at: string };
    };
    expect(result.structuredContent).toMatchObject({
      educational_notice: EDUCATIONAL_NOTICE,
      data_mode: 'simulated',
      generated_at: offer.data.generated_at,
      data_age_seconds: expect.any(Number),
    });
  });

  it('pays with a development wallet: the body and the settlement; a replayed payment is never charged twice', async () => {
    const facilitator = paywall.devFacilitator!;
    const buyer = await newBuyer(facilitator);
    const challenge = (await client.callTool({ name: 'paid_main_brain', arguments: {} })) as CallToolResult;
    const payment: PaymentPayload = await buyer.pay(
      challenge.structuredContent as unknown as PaymentRequired,
    );
    const before = facilitator.ledger.assetBalance(paywall.payTo);

    const paid = (await client.callTool({
      name: 'paid_main_brain',
      arguments: {},
      _meta: { [PAYMENT_META]: payment },
    })) as CallToolResult;
    expect(paid.isError, textOf(paid)).toBeFalsy();
    const resource = PAID_RESOURCES.find((r) => r.id === 'paidMainBrain')!;
    const content = bodyEnvelope(resource.schema).parse(paid.structuredContent);
    expect(content.data_mode).toBe('simulated');
    const settlement = paid._meta?.[PAYMENT_RESPONSE_META] as { success: boolean; transaction: string };
    expect(settlement.success).toBe(true);
    expect(settlement.transaction).toMatch(/^[A-Z2-7]{52}$/);
    expect(facilitator.ledger.confirmedRound(settlement.transaction)).toBeDefined();
    expect(facilitator.ledger.assetBalance(paywall.payTo) - before).toBe(10_000n);

    // The same payment for another product is refused, and nothing more is charged.
    const elsewhere = (await client.callTool({
      name: 'paid_market_regime',
      arguments: {},
      _meta: { [PAYMENT_META]: payment },
    })) as CallToolResult;
    expect(elsewhere.isError).toBe(true);
    expect((elsewhere.structuredContent as { error: string }).error).toMatch(/payment_does_not_match/);
    // The same payment again for the same product: the paywall's replay guard redelivers, never settles twice.
    const again = (await client.callTool({
      name: 'paid_main_brain',
      arguments: {},
      _meta: { [PAYMENT_META]: payment },
    })) as CallToolResult;
    expect((again._meta?.[PAYMENT_RESPONSE_META] as { transaction: string }).transaction).toBe(
      settlement.transaction,
    );
    expect(facilitator.ledger.assetBalance(paywall.payTo) - before).toBe(10_000n);
  }, 60_000);

  it('a malformed _meta payment is a clear tool error', async () => {
    const text = (await client.callTool({
      name: 'atlas',
      arguments: {},
      _meta: { [PAYMENT_META]: 'not a payment' },
    })) as CallToolResult;
    expect(text.isError).toBe(true);
    expect(textOf(text)).toMatch(/must be an x402 v2 PaymentPayload object .* got string/);
    // The x402 MCP transport's "Payment Invalid": the PaymentRequired again, with the reason.
    const invalid = text.structuredContent as { x402Version: number; error: string; accepts: unknown[] };
    expect(invalid).toMatchObject({ x402Version: 2, error: 'invalid_payload' });
    expect(invalid.accepts.length).toBeGreaterThan(0);
    // What is on offer, as every result says it.
    expect(invalid).toMatchObject({ educational_notice: EDUCATIONAL_NOTICE, data_mode: 'simulated' });

    const shapeless = (await client.callTool({
      name: 'atlas',
      arguments: {},
      _meta: { [PAYMENT_META]: { x402Version: 1 } },
    })) as CallToolResult;
    expect(shapeless.isError).toBe(true);
    expect(textOf(shapeless)).toMatch(/not an x402 v2 PaymentPayload/);
    const v1 = shapeless.structuredContent as { error: string; accepts: unknown[] };
    expect(v1.error).toBe('invalid_x402_version');
    expect(v1.accepts.length).toBeGreaterThan(0);

    // Right shape, garbage inside: the paywall's own decoder refuses it, answered as a payment-required result.
    const garbage = (await client.callTool({
      name: 'atlas',
      arguments: {},
      _meta: { [PAYMENT_META]: { x402Version: 2, accepted: {}, payload: {} } },
    })) as CallToolResult;
    expect(garbage.isError).toBe(true);
    expect((garbage.structuredContent as { x402Version: number; error: string }).x402Version).toBe(2);
    expect((garbage.structuredContent as { error: string }).error).toEqual(expect.any(String));
  });
});
