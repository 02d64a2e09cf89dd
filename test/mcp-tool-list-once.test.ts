// `/mcp` is stateless: every request builds a server of its own. The tools' output schemas (about 190 KB of the
// 200 KB tools/list answer) are made once per body schema, not once per request, and the list itself once per
// process: a fresh zod object per request converted every JSON Schema again on each tools/list (about 23 ms of CPU
// in-process, against about 4 ms now), the largest cost of an MCP request on a host that caps CPU per request.
// What is checked here is that both are shared, and that sharing them changes nothing a client reads: the answer
// is the SDK's own, to the byte.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { bodyEnvelope } from '../mcp/facts.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { paidToolOutput } from '../mcp/paid-tools.ts';
import { buildMcpServer, createMcpServer } from '../mcp/server.ts';
import type { McpServerOptions } from '../mcp/server.ts';
import { MarketRegimeResponse } from '../schemas/market-regime.ts';
import { MCP_PATH } from '../schemas/delivery.ts';

const options: McpServerOptions = {
  readText: async () => null,
  fetchPaid: async () => new Response('{"error":"unavailable"}', { status: 503 }),
  baseUrl: 'http://127.0.0.1:8080',
};
const route = createMcpRoute(() => createMcpServer(options));
/** The SDK's own tools/list handler, making the list on every request. */
const sdkRoute = createMcpRoute(() => buildMcpServer(options));

/** One JSON-RPC request, as a client on protocol 2025-06-18 sends it; the answer's text. */
async function rpcText(id: number, method: string, params?: unknown, app = route): Promise<string> {
  const response = await app.request(MCP_PATH, {
    method: 'POST',
    headers: {
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      'Mcp-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }),
  });
  expect(response.status).toBe(200);
  return response.text();
}

const rpc = async (id: number, method: string, params?: unknown) =>
  JSON.parse(await rpcText(id, method, params)) as Record<string, unknown>;

describe('MCP output schemas are made once per body schema', () => {
  it('the envelope of a free body and the output of a paid tool are the same object on every call', () => {
    expect(bodyEnvelope(MarketRegimeResponse)).toBe(bodyEnvelope(MarketRegimeResponse));
    expect(paidToolOutput(MarketRegimeResponse)).toBe(paidToolOutput(MarketRegimeResponse));
  });

  it('different bodies still get different schemas', () => {
    const other = z.object({ value: z.number() });
    expect(bodyEnvelope(other)).not.toBe(bodyEnvelope(MarketRegimeResponse));
    expect(z.toJSONSchema(bodyEnvelope(other))).toMatchObject({
      properties: { body: { properties: { value: { type: 'number' } } } },
    });
  });

  it('tools/list answers the same list on every stateless request, before and after tool calls', async () => {
    const first = await rpc(1, 'tools/list');
    const tools = (first.result as { tools: { name: string; outputSchema?: object }[] }).tools;
    expect(tools.length).toBeGreaterThan(10);
    expect(tools.every((tool) => tool.outputSchema !== undefined)).toBe(true);

    // Calls validate their answers against the same schemas (a refusal of a paid tool, an unpublished free file).
    const paid = await rpc(2, 'tools/call', { name: 'paid_market_regime', arguments: {} });
    expect(paid.result).toMatchObject({ isError: true });
    const free = await rpc(3, 'tools/call', { name: 'market_regime', arguments: {} });
    expect(free.result).toMatchObject({ isError: true });

    const again = await rpc(4, 'tools/list');
    expect(again.result).toEqual(first.result);
  });

  it("tools/list is the SDK's own answer to the byte, for a server on any base URL", async () => {
    const own = await rpcText(5, 'tools/list', undefined, sdkRoute);
    expect(await rpcText(5, 'tools/list')).toBe(own);
    const elsewhere = createMcpRoute(() => createMcpServer({ ...options, baseUrl: 'https://other.example' }));
    expect(await rpcText(5, 'tools/list', undefined, elsewhere)).toBe(own);
    expect(own.length).toBeGreaterThan(100_000);
  });
});
