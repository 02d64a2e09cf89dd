// The streamable HTTP endpoint (`/mcp`) as a Hono app on web-standard Request/Response, so the same route runs
// on Node (emi serve, emi paywall) and in workerd. Stateless: every request gets a fresh server and transport
// (no session to lose between isolates), JSON responses instead of an SSE stream.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
  requestBodyTooLargeMessage,
} from '@modelcontextprotocol/sdk/server/requestBody.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { Context } from 'hono';

import { logToStderr } from '../paywall-worker/core/log.ts';
import { answerUnhandled } from '../paywall-worker/unhandled.ts';
import { API_JSON_HEADERS, MCP_PATH, POST_METHODS, preflightAnswer } from '../schemas/delivery.ts';

export { MCP_PATH };

/**
 * The delivery policy's headers for a worker's JSON answer (CORS, the API security headers, no-store), the content
 * type the transport chose kept: `/mcp` answers alike on every host (`emi serve`, `emi paywall`, the Worker).
 */
function withCors(response: Response): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(API_JSON_HEADERS)) {
    if (name !== 'Content-Type' || !headers.has(name)) headers.set(name, value);
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** A Hono app answering `/mcp`; mount it (`app.route('/', createMcpRoute(...))`) or forward `/mcp` to its fetch. */
export function createMcpRoute(makeServer: () => McpServer): Hono {
  const app = new Hono();
  app.options(MCP_PATH, () => preflightAnswer(MCP_PATH));
  app.post(MCP_PATH, answerJsonRpc(makeServer));
  // Every other method (PUT, PATCH... as well as GET and DELETE) gets the same JSON 405, with CORS and the API
  // headers: left to Hono, it would be a bare text 404 a browser on another origin cannot even read.
  app.all(MCP_PATH, (c) => methodNotAllowed(c.req.method));
  // Every host calls this app's fetch itself: without this, an exception is Hono's text/plain 500 and no log line.
  // In JSON-RPC's words, as the route's other refusals: -32603 internal error (-32600 for a body cut short).
  app.onError(
    answerUnhandled(
      'The MCP endpoint could not handle this request.',
      logToStderr,
      (status, _error, message) => jsonRpcError(status, status === 500 ? -32603 : -32600, message),
    ),
  );
  return app;
}

/** Why a method other than POST and OPTIONS is refused, as the JSON-RPC error message of the 405. */
function refusalMessage(method: string): string {
  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE); the spec allows 405.
  return method === 'GET' || method === 'DELETE'
    ? `${method} is not supported: this endpoint is stateless`
    : `${method} is not supported: send JSON-RPC messages with POST`;
}

/** A JSON-RPC error answer without an id (the request it answers could not be read as one message). */
function jsonRpcError(status: number, code: number, message: string, headers?: HeadersInit): Response {
  return withCors(Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers }));
}

/** The 405 for any method but POST and OPTIONS: a JSON-RPC error naming the methods allowed. */
function methodNotAllowed(method: string): Response {
  return jsonRpcError(405, -32000, refusalMessage(method), { Allow: POST_METHODS });
}

/** The first protocol version without JSON-RPC batches: MCP 2025-06-18 removed them. */
const FIRST_VERSION_WITHOUT_BATCHES = '2025-06-18';

/**
 * The most messages one batch may hold. 2025-03-26, which the SDK still negotiates (and assumes when a request names
 * no version), requires a server to take batches; but the whole batch is answered in one piece on one turn of the
 * event loop, and one `tools/list` answer is about 190 KB: 100 of them (the SDK's own cap) were 19 MB and blocked
 * `emi serve` for over a second.
 */
export const MAX_BATCH_MESSAGES = 10;

/**
 * Why a POST body is refused before any of its messages is handled, or null. Only a JSON array (a batch) is: from a
 * client on 2025-06-18 or later (its `Mcp-Protocol-Version` header), always; otherwise when it is empty or holds more
 * than MAX_BATCH_MESSAGES.
 */
export function batchRefusal(body: unknown, protocolVersion: string | null): string | null {
  if (!Array.isArray(body)) return null;
  const instead = 'send one message per request';
  if (protocolVersion !== null && protocolVersion >= FIRST_VERSION_WITHOUT_BATCHES) {
    return `batches are not supported (protocol version ${FIRST_VERSION_WITHOUT_BATCHES} and later have none); ${instead}`;
  }
  if (body.length === 0) return `an empty batch holds no message; ${instead}`;
  if (body.length > MAX_BATCH_MESSAGES) {
    return `batches of more than ${MAX_BATCH_MESSAGES} messages are not supported (this one holds ${body.length}); ${instead}`;
  }
  return null;
}

/** The body as JSON, or undefined when it is not JSON (the transport then answers its own parse error). */
function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** POST: the body read once (with the SDK's own size bound) and checked, then one stateless server and transport. */
function answerJsonRpc(makeServer: () => McpServer) {
  return async (c: Context): Promise<Response> => {
    const request = c.req.raw;
    const body = await readRequestBody(request, DEFAULT_MAX_REQUEST_BODY_SIZE);
    if (body.tooLarge) {
      return jsonRpcError(413, -32000, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE));
    }
    const parsed = parsedOrUndefined(body.text);
    const refusal = batchRefusal(parsed, request.headers.get('mcp-protocol-version'));
    if (refusal) return jsonRpcError(400, -32600, `Invalid Request: ${refusal}`);
    const server = makeServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      // The body is read: the transport gets it parsed, or (not JSON) as text again to answer its parse error.
      const response =
        parsed === undefined
          ? await transport.handleRequest(
              new Request(request.url, { method: 'POST', headers: request.headers, body: body.text }),
            )
          : await transport.handleRequest(request, { parsedBody: parsed });
      // Read the whole JSON answer before the server closes: closing first would cut a large body mid-stream.
      const answer = response.status === 202 ? null : await response.arrayBuffer();
      return withCors(new Response(answer, { status: response.status, headers: response.headers }));
    } finally {
      await server.close();
    }
  };
}
