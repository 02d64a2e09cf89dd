// `/mcp` is stateless: every request builds a server of its own. The tools' output schemas (about 190 KB of the
// 200 KB tools/list answer) are made once per body schema, not once per request: a fresh zod object per request
// converted the whole JSON Schema again on every tools/list (about 23 ms of CPU each, against about 9 ms with the
// schemas made once), the largest cost of an MCP request on a host that bills or caps CPU per request. What is
// checked here is that the schemas are shared, and that sharing them changes nothing a client reads.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { bodyEnvelope } from '../mcp/facts.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { paidToolOutput } from '../mcp/paid-tools.ts';
import { createMcpServer } from '../mcp/server.ts';
import { MarketRegimeResponse } from '../schemas/market-regime.ts';
import { MCP_PATH } from '../schemas/delivery.ts';

const route = createMcpRoute(() =>
  createMcpServer({
    readText: async () => null,
    fetchPaid: async () => new Response('{"error":"unavailable"}', { status: 503 }),
    baseUrl: 'http://127.0.0.1:8080',
  }),
);

/** One JSON-RPC request, as a client on protocol 2025-06-18 sends it; the parsed answer. */
async function rpc(id: number, method: string, params?: unknown): Promise<Record<string, unknown>> {
  const response = await route.request(MCP_PATH, {
    method: 'POST',
    headers: {
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      'Mcp-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

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
});
