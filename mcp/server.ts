// The MCP server: a tool per free resource, `reasoning` per asset, `history`, the four paid products, and the
// discovery documents and methodology pages as resources. Transports (stdio, streamable HTTP) wrap this factory.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, ListToolsResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { CATALOG_VERSION, EDUCATIONAL_NOTICE, PROJECT } from '../schemas/common.ts';
import { DOCS_PATHS } from '../generator/discovery/docs-paths.ts';
import { buildLlmsTxt } from '../generator/discovery/llms-txt.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { registerFreeTools } from './free-tools.ts';
import { registerHistoryTool } from './history-tool.ts';
import {
  PAYWALL_TIMEOUT_MS,
  PaywallNotSentError,
  PaywallTimeoutError,
  registerPaidTools,
} from './paid-tools.ts';
import type { FetchPaid } from './paid-tools.ts';
import { jsonReader } from './published.ts';
import type { ReadText } from './published.ts';

export interface McpServerOptions {
  /** Reads the published (built) site: the free files, history, openapi.json, llms.txt, docs pages. */
  readText: ReadText;
  /** The paywall: in production `(path, sig) => app.request(path, { headers })` of the paywall app. */
  fetchPaid: FetchPaid;
  /** Base URL for the discovery documents built when the site has none yet. */
  baseUrl: string;
  now?: () => number;
}

interface DocResource {
  name: string;
  uri: string;
  file: string;
  mimeType: string;
  description: string;
  /** Built in-process when the site folder has no such file (not built yet). */
  fallback?: () => string;
}

const pageFile = (path: string) => `${path.replace(/^\//, '')}index.html`;

function docResources(baseUrl: string): DocResource[] {
  return [
    {
      name: 'openapi',
      uri: 'emi://openapi.json',
      file: 'openapi.json',
      mimeType: 'application/json',
      description: 'OpenAPI 3.1 document of every free and paid path',
      fallback: () => `${JSON.stringify(buildOpenApiDocument({ baseUrl }), null, 2)}\n`,
    },
    {
      name: 'llms-txt',
      uri: 'emi://llms.txt',
      file: 'llms.txt',
      mimeType: 'text/plain',
      description: 'llms.txt: the service in one page for language models',
      fallback: () => buildLlmsTxt({ baseUrl, hasBuyer: false }),
    },
    {
      name: 'history-index',
      uri: 'emi://api/history/index.json',
      file: 'api/history/index.json',
      mimeType: 'application/json',
      description: 'what history exists: resources, columns, first and last days',
    },
    ...(
      [
        [
          'methodology-freshness',
          DOCS_PATHS.freshness,
          'freshness: how old each value may be and how to tell',
        ],
        ['methodology-educational-notice', DOCS_PATHS.educationalNotice, 'what this service is and is not'],
        [
          'methodology-payment-terms',
          DOCS_PATHS.paymentTerms,
          'payment terms of the paid products (x402 v2)',
        ],
      ] as const
    ).map(([name, path, description]) => ({
      name,
      uri: `emi://docs${path.slice('/docs'.length)}`,
      file: pageFile(path),
      mimeType: 'text/html',
      description,
    })),
  ];
}

/** A discovery document's text, or null when absent; one that is there but cannot be read is said so. */
async function readDocument(readText: ReadText, file: string): Promise<string | null> {
  try {
    return await readText(file);
  } catch (error) {
    throw new Error(`${file} is in the published site but could not be read (${(error as Error).message}).`, {
      cause: error,
    });
  }
}

/**
 * The MCP server. Its tools/list answer is the SDK's own, asked once per process (ownToolList): the list depends on
 * the code alone, and making it (every tool's JSON Schemas, about 200 KB) was most of a stateless request's CPU.
 */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = buildMcpServer(options);
  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await ownToolList() }));
  return server;
}

/** The server without the per-process tool list: its tools/list makes the list on every request (tests compare). */
export function buildMcpServer(options: McpServerOptions): McpServer {
  const now = options.now ?? Date.now;
  const server = new McpServer(
    { name: 'educational-market-intelligence', title: PROJECT, version: CATALOG_VERSION },
    { instructions: `${EDUCATIONAL_NOTICE} Paid tools follow the x402 v2 MCP transport (USDC on Algorand).` },
  );
  const read = jsonReader(options.readText);
  registerFreeTools(server, read, now);
  registerHistoryTool(server, read, now);
  registerPaidTools(server, options.fetchPaid, now);
  for (const doc of docResources(options.baseUrl)) {
    server.registerResource(
      doc.name,
      doc.uri,
      { description: doc.description, mimeType: doc.mimeType },
      async (uri) => {
        const text = (await readDocument(options.readText, doc.file)) ?? doc.fallback?.() ?? null;
        if (text === null)
          throw new Error(`${doc.file} is not in the published site yet: run emi build first.`);
        return { contents: [{ uri: uri.href, mimeType: doc.mimeType, text }] };
      },
    );
  }
  return server;
}

let toolList: Promise<Tool[]> | null = null;

/** The tools as the SDK's own tools/list handler answers them, asked once per process over an in-memory link. */
export function ownToolList(): Promise<Tool[]> {
  if (!toolList) {
    toolList = askForToolList();
    toolList.catch(() => (toolList = null));
  }
  return toolList;
}

async function askForToolList(): Promise<Tool[]> {
  const server = buildMcpServer({
    readText: async () => null,
    fetchPaid: async () => new Response(null, { status: 503 }),
    baseUrl: 'http://127.0.0.1', // the tools do not depend on it (only the documents' fallbacks do)
  });
  const [here, there] = InMemoryTransport.createLinkedPair();
  const answer = new Promise<JSONRPCMessage>((resolve) => (here.onmessage = resolve));
  await server.connect(there);
  try {
    await here.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const message = await answer;
    if (!('result' in message)) throw new Error(`tools/list failed: ${JSON.stringify(message)}`);
    // The answer as sent, not parsed by a client (which would reorder its keys).
    return (message.result as ListToolsResult).tools;
  } finally {
    await server.close();
  }
}

/** A `fetchPaid` over the paywall app's own `request` (Hono's `app.request`): no network, the same decisions. */
export const fetchPaidThrough =
  (request: (path: string, init: RequestInit) => Response | Promise<Response>): FetchPaid =>
  (path, signature) =>
    Promise.resolve(request(path, { headers: signature ? { 'PAYMENT-SIGNATURE': signature } : {} }));

/** Statuses whose answer has no body (a Response refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * Why `value` cannot be the URL of a paywall (it must be an absolute http or https URL with a host), or null when
 * it can.
 */
export function paywallUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not an absolute URL: use one such as http://127.0.0.1:8080`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `"${value}" is not an http(s) URL (${url.protocol.replace(/:$/, '')}): use one such as http://127.0.0.1:8080`;
  }
  if (!url.hostname) return `"${value}" names no host: use one such as http://127.0.0.1:8080`;
  return null;
}

/**
 * A `fetchPaid` to a paywall running elsewhere (e.g. `emi serve` or a deployed worker). The whole answer, body
 * included, must come within `timeoutMs`: a paywall that takes the connection and never answers (or stalls its
 * body) ends the call with a `PaywallTimeoutError` instead of hanging it. A base URL that is not an absolute
 * http(s) URL sends nothing: each call ends with a `PaywallNotSentError` (nothing was paid).
 */
export const fetchPaidAt =
  (baseUrl: string, { timeoutMs = PAYWALL_TIMEOUT_MS }: { timeoutMs?: number } = {}): FetchPaid =>
  async (path, signature) => {
    const problem = paywallUrlProblem(baseUrl);
    if (problem) throw new PaywallNotSentError(`the paywall URL ${problem}`);
    const url = new URL(path, baseUrl);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(url, {
        headers: signature ? { 'PAYMENT-SIGNATURE': signature } : {},
        signal,
      });
      const body = await response.arrayBuffer();
      return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      if (!signal.aborted) throw error;
      throw new PaywallTimeoutError(`no complete answer from ${url.origin} within ${timeoutMs / 1000} s`, {
        cause: error,
      });
    }
  };
