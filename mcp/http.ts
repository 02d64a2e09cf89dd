// The streamable HTTP endpoint (`/mcp`) as a Hono app on web-standard Request/Response, so the same route runs
// on Node (emi serve, emi paywall) and in workerd. Stateless: every request gets a fresh server and transport
// (no session to lose between isolates), JSON responses instead of an SSE stream.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { Context } from 'hono';

import { API_SECURITY_HEADERS } from '../paywall-worker/security-headers.ts';
import { MCP_PATH } from '../schemas/delivery.ts';

export { MCP_PATH };

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
  'Access-Control-Expose-Headers': 'Mcp-Session-Id, Mcp-Protocol-Version',
};

/** CORS, no-store and the worker's API security headers (nosniff, `default-src 'none'`, no referrer). */
function withCors(response: Response): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries({ ...CORS, ...API_SECURITY_HEADERS })) headers.set(name, value);
  headers.set('Cache-Control', 'no-store');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** A Hono app answering `/mcp`; mount it (`app.route('/', createMcpRoute(...))`) or forward `/mcp` to its fetch. */
export function createMcpRoute(makeServer: () => McpServer): Hono {
  const app = new Hono();
  app.options(MCP_PATH, () => new Response(null, { status: 204, headers: CORS }));
  app.post(MCP_PATH, answerJsonRpc(makeServer));
  // Every other method (PUT, PATCH... as well as GET and DELETE) gets the same JSON 405, with CORS and the API
  // headers: left to Hono, it would be a bare text 404 a browser on another origin cannot even read.
  app.all(MCP_PATH, (c) => methodNotAllowed(c.req.method));
  return app;
}

/** Why a method other than POST and OPTIONS is refused, as the JSON-RPC error message of the 405. */
function refusalMessage(method: string): string {
  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE); the spec allows 405.
  return method === 'GET' || method === 'DELETE'
    ? `${method} is not supported: this endpoint is stateless`
    : `${method} is not supported: send JSON-RPC messages with POST`;
}

/** The 405 for any method but POST and OPTIONS: a JSON-RPC error naming the methods allowed. */
function methodNotAllowed(method: string): Response {
  return withCors(
    Response.json(
      { jsonrpc: '2.0', error: { code: -32000, message: refusalMessage(method) }, id: null },
      { status: 405, headers: { Allow: 'POST, OPTIONS' } },
    ),
  );
}

/** POST: one stateless server and transport per request, answering in JSON. */
function answerJsonRpc(makeServer: () => McpServer) {
  return async (c: Context): Promise<Response> => {
    const server = makeServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(c.req.raw);
      // Read the whole JSON answer before the server closes: closing first would cut a large body mid-stream.
      const body = response.status === 202 ? null : await response.arrayBuffer();
      return withCors(new Response(body, { status: response.status, headers: response.headers }));
    } finally {
      await server.close();
    }
  };
}
