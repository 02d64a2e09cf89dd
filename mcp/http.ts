// The streamable HTTP endpoint (`/mcp`) as a Hono app on web-standard Request/Response, so the same route runs
// on Node (emi serve, emi paywall) and in workerd. Stateless: every request gets a fresh server and transport
// (no session to lose between isolates), JSON responses instead of an SSE stream.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';

export const MCP_PATH = '/mcp';

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
  'Access-Control-Expose-Headers': 'Mcp-Session-Id, Mcp-Protocol-Version',
};

function withCors(response: Response): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(CORS)) headers.set(name, value);
  headers.set('Cache-Control', 'no-store');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** A Hono app answering `/mcp`; mount it (`app.route('/', createMcpRoute(...))`) or forward `/mcp` to its fetch. */
export function createMcpRoute(makeServer: () => McpServer): Hono {
  const app = new Hono();
  app.options(MCP_PATH, () => new Response(null, { status: 204, headers: CORS }));
  app.all(MCP_PATH, async (c) => {
    const server = makeServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return withCors(await transport.handleRequest(c.req.raw));
    } finally {
      // The JSON answer is complete once returned: nothing is left to stream.
      await server.close();
    }
  });
  return app;
}
