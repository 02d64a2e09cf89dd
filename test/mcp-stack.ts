// The local stack the MCP agent tests run against: a simulated generation in a folder of its own and the paywall
// (with the development facilitator) listening on 127.0.0.1.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { createMcpRoute } from '../mcp/http.ts';
import type { FetchPaid } from '../mcp/paid-tools.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { createMcpServer, fetchPaidAt } from '../mcp/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';

export const BASE_URL = 'http://127.0.0.1:8080';

export interface McpStack {
  /** Holds `site/`, `paid/` and `state/` of one generation. */
  root: string;
  paywall: LocalPaywall;
  paywallServer: Listening;
}

/** Generates the simulated market of `seed` at this minute and starts the paywall over its paid files. */
export async function startMcpStack(prefix: string, seed: number): Promise<McpStack> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const asOf = Math.floor(Date.now() / 60_000) * 60_000;
  const paths = { outDir: join(root, 'site'), paidDir: join(root, 'paid'), stateDir: join(root, 'state') };
  expect((await runPipeline({ ...paths, source: 'sim', seed, asOf })).status).toBe('ok');
  const paywall = await createLocalPaywall({
    paidDir: paths.paidDir,
    baseUrl: BASE_URL,
    devFacilitatorPort: 0,
  });
  const paywallServer = await listen(paywall.app, 0, '127.0.0.1');
  return { root, paywall, paywallServer };
}

export async function stopMcpStack(stack: Partial<McpStack>): Promise<void> {
  await stack.paywallServer?.close();
  await stack.paywall?.close();
  if (stack.root) await rm(stack.root, { recursive: true, force: true });
}

export interface AgentOptions {
  /** The published site the free tools read; default the stack's own. */
  site?: string;
  /** How paid tools reach the paywall; default the stack's paywall over HTTP. */
  fetchPaid?: FetchPaid;
  now?: () => number;
  /** Lists the tools first, as an agent does (default true). */
  listTools?: boolean;
}

/**
 * An official SDK client connected to a streamable HTTP `/mcp` on 127.0.0.1 over the stack; what closes the client
 * and its server is pushed onto `closing`.
 */
export async function connectAgent(
  stack: McpStack,
  closing: Array<() => Promise<void>>,
  name: string,
  options: AgentOptions = {},
): Promise<Client> {
  const route = createMcpRoute(() =>
    createMcpServer({
      readText: readTextFrom(options.site ?? join(stack.root, 'site')),
      fetchPaid: options.fetchPaid ?? fetchPaidAt(stack.paywallServer.url),
      baseUrl: BASE_URL,
      ...(options.now ? { now: options.now } : {}),
    }),
  );
  const server = await listen(route, 0, '127.0.0.1');
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`)));
  if (options.listTools !== false) await client.listTools();
  closing.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}
