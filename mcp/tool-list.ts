// The tool list as the server itself reports it (tools/list over an in-memory link), for the agents docs page:
// the page can never drift from the server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from './server.ts';

export interface ToolSummary {
  name: string;
  title: string;
  description: string;
  /** Input parameter names, with `?` for optional ones. */
  inputs: string[];
  paid: boolean;
}

export async function listMcpTools(baseUrl: string): Promise<ToolSummary[]> {
  const server = createMcpServer({
    readText: async () => null,
    fetchPaid: async () => new Response(null, { status: 503 }),
    baseUrl,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'emi-docs', version: '1.0.0' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    return tools.map((tool) => {
      const required = new Set(tool.inputSchema.required ?? []);
      return {
        name: tool.name,
        title: tool.title ?? tool.name,
        description: tool.description ?? '',
        inputs: Object.keys(tool.inputSchema.properties ?? {}).map((key) =>
          required.has(key) ? key : `${key}?`,
        ),
        paid: tool._meta?.['x402/price'] !== undefined,
      };
    });
  } finally {
    await client.close();
    await server.close();
  }
}
