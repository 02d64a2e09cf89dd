// What an agent's inputs and the operator's options do, against the real local stack (generator output, the paywall
// with the development facilitator on 127.0.0.1, the official SDK client over streamable HTTP and over stdio):
//   - a tool argument the tool does not take is an invalid-arguments error naming it, never ignored, and every
//     published inputSchema says additionalProperties: false;
//   - `emi mcp --paywall-url` takes only an absolute http(s) URL, `--paywall-timeout` only with it (exit 2
//     otherwise), and a request fetch never sent (a URL it cannot fetch, a port it blocks) is "not sent", not
//     "may have been taken";
//   - a history file that is there but unreadable is said so, apart from one that is absent.
import { spawnSync } from 'node:child_process';
import { cp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { PAYMENT_META } from '../mcp/paid-tools.ts';
import { fetchPaidAt } from '../mcp/server.ts';
import { connectAgent, startMcpStack, stopMcpStack } from './mcp-stack.ts';
import type { AgentOptions } from './mcp-stack.ts';
import { newBuyer } from './paywall-harness.ts';

let root: string;
let paywall: LocalPaywall;
let paywallServer: Listening;
const closing: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ({ root, paywall, paywallServer } = await startMcpStack('emi-mcp-inputs-', 17));
}, 60_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await stopMcpStack({ root, paywall, paywallServer });
});

/** An official SDK client on a streamable HTTP `/mcp` on 127.0.0.1 over this stack (test/mcp-stack.ts). */
const agent = (options: AgentOptions = {}): Promise<Client> =>
  connectAgent({ root, paywall, paywallServer }, closing, 'emi-inputs', { ...options });

const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
) => (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
const textsOf = (result: CallToolResult) =>
  result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
const txidOf = (payment: PaymentPayload) => {
  const { paymentGroup, paymentIndex } = payment.payload as { paymentGroup: string[]; paymentIndex: number };
  return algosdk.decodeSignedTransaction(algosdk.base64ToBytes(paymentGroup[paymentIndex]!)).txn.txID();
};

async function signedPayment(client: Client, tool: string): Promise<PaymentPayload> {
  const buyer = await newBuyer(paywall.devFacilitator!);
  return buyer.pay((await call(client, tool)).structuredContent as unknown as PaymentRequired);
}

describe('tool arguments are strict', () => {
  it('tools/list: every inputSchema refuses other properties (additionalProperties: false)', async () => {
    const client = await agent();
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(10);
    const open = tools.filter((tool) => tool.inputSchema.additionalProperties !== false).map((t) => t.name);
    expect(open).toEqual([]);
  });

  it('reasoning {symbol: "ETH"} is an error naming symbol, not the BTC answer', async () => {
    const client = await agent();
    const result = await call(client, 'reasoning', { symbol: 'ETH' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textsOf(result)).toContain('Input validation error');
    expect(textsOf(result)).toContain('unknown argument "symbol": reasoning takes only asset');
    // The argument it does take still works.
    const eth = await call(client, 'reasoning', { asset: 'eth' });
    expect(eth.isError, textsOf(eth)).toBeFalsy();
    expect((eth.structuredContent?.body as { asset: string }).asset).toBe('ETH');
  });

  it('history with start/end is an error naming both, not the latest rows', async () => {
    const client = await agent();
    const result = await call(client, 'history', {
      resource: 'main-brain',
      start: '2020-01-01',
      end: '2020-01-02',
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(textsOf(result)).toContain(
      'unknown arguments "start", "end": history takes only resource, from, to, fields',
    );
  });

  it('a file tool and a paid tool take no arguments; a paid call with one never reaches the paywall', async () => {
    let asked = 0;
    const client = await agent({
      fetchPaid: (path, signature) => {
        asked += 1;
        return fetchPaidAt(paywallServer.url)(path, signature);
      },
    });
    const free = await call(client, 'market_regime', { asset: 'ETH' });
    expect(free.isError).toBe(true);
    expect(textsOf(free)).toContain('unknown argument "asset": market_regime takes no arguments');

    const paid = await call(client, 'paid_main_brain', { quantity: 2 });
    expect(paid.isError).toBe(true);
    expect(textsOf(paid)).toContain('unknown argument "quantity": paid_main_brain takes no arguments');
    expect(asked).toBe(0);
  });

  it('a huge unknown key is not echoed back whole', async () => {
    const client = await agent();
    const result = await call(client, 'reasoning', { ['k'.repeat(10_000)]: 1 });
    expect(result.isError).toBe(true);
    expect(textsOf(result)).toMatch(/unknown argument "k+\.\.\.": reasoning takes only asset/);
    expect(textsOf(result).length).toBeLessThan(500);
  });
});

describe('emi mcp --paywall-url and --paywall-timeout', () => {
  const emiMcp = (...args: string[]) =>
    spawnSync(process.execPath, ['bin/emi.js', 'mcp', '--dir', join(root, 'site'), ...args], {
      encoding: 'utf8',
      input: '', // stdin closed at once: a server that started anyway exits
      timeout: 30_000,
    });

  it.each([
    ['notaurl', 'not a URL'],
    ['ftp://x', 'another scheme'],
    ['file:///tmp/paywall', 'a file URL'],
    ['/api', 'a path'],
  ])('refuses %s (%s) with exit 2 before starting', (url) => {
    const result = emiMcp('--paywall-url', url);
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toContain(`--paywall-url "${url}" is not an absolute http(s) URL`);
    expect(result.stderr).not.toMatch(/serving|paid tools go to/);
  });

  it('refuses --paywall-timeout without --paywall-url (exit 2)', () => {
    const result = emiMcp('--paywall-timeout', '5');
    expect(result.status, result.stderr).toBe(2);
    expect(result.stderr).toContain('--paywall-timeout bounds the wait for --paywall-url');
    expect(result.stderr).not.toMatch(/serving/);
  });

  it('a port fetch blocks (:1): the payment is said not sent, nothing taken (stdio)', async () => {
    const payment = await signedPayment(await agent(), 'paid_main_brain');
    const client = new Client({ name: 'emi-inputs-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['bin/emi.js', 'mcp', '--dir', join(root, 'site'), '--paywall-url', 'http://127.0.0.1:1'],
        cwd: process.cwd(),
        stderr: 'pipe',
      }),
    );
    closing.push(() => client.close());
    await client.listTools();
    const result = await call(client, 'paid_main_brain', {}, { [PAYMENT_META]: payment });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: 'paywall_unreachable' });
    expect(result.structuredContent?.transaction).toBeUndefined();
    expect(textsOf(result)).toContain('The payment was not sent: nothing was taken');
    expect(textsOf(result)).not.toMatch(/may have been taken/);
  }, 60_000);

  it.each(['notaurl', 'ftp://x', 'http://127.0.0.1:1'])(
    'fetchPaidAt(%s) in a server: a payment is said not sent',
    async (url) => {
      const client = await agent({ fetchPaid: fetchPaidAt(url) });
      const payment = await signedPayment(await agent(), 'paid_market_regime');
      const result = await call(client, 'paid_market_regime', {}, { [PAYMENT_META]: payment });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'paywall_unreachable' });
      expect(textsOf(result)).toContain('The payment was not sent: nothing was taken');
      expect(textsOf(result)).not.toContain(txidOf(payment));
    },
    60_000,
  );
});

describe('history files that are there but unreadable', () => {
  it('latest.json and index.json: named with why, never "not published yet"; an absent one is', async () => {
    const site = join(root, 'site-history');
    await cp(join(root, 'site'), site, { recursive: true });
    await writeFile(join(site, 'api/history/main-brain/latest.json'), '{"rows": [');
    await writeFile(join(site, 'api/history/index.json'), JSON.stringify({ hello: 'world' }));
    await rm(join(site, 'api/history/market-regime/latest.json'));
    const client = await agent({ site });

    const latest = await call(client, 'history', { resource: 'main-brain' });
    expect(latest.isError).toBe(true);
    expect(textsOf(latest)).toMatch(
      /^the history is published but could not be read: the file api\/history\/main-brain\/latest\.json is not valid JSON \(/,
    );

    const range = await call(client, 'history', { resource: 'main-brain', from: '2026-01-01' });
    expect(range.isError).toBe(true);
    expect(textsOf(range)).toMatch(
      /^the history is published but could not be read: the file api\/history\/index\.json does not match its schema \(.+\)/,
    );

    for (const result of [latest, range]) {
      expect(textsOf(result)).not.toMatch(/not been published|no readable history|published yet/);
    }

    const absent = await call(client, 'history', { resource: 'market-regime' });
    expect(absent.isError).toBe(true);
    expect(textsOf(absent)).toBe(
      'no history has been published yet (api/history/market-regime/latest.json is absent): run the generator first.',
    );
  });
});
