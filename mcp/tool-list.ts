// The tool list as the server itself reports it (tools/list over an in-memory link), for the agents docs page:
// the page can never drift from the server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { createMcpServer } from './server.ts';

export interface ToolSummary {
  name: string;
  title: string;
  description: string;
  /** Input parameter names, with `?` for optional ones. */
  inputs: string[];
  paid: boolean;
}

/**
 * Compiles a tool's output schema on the first validation, not when the tool is listed: this client lists the
 * tools and never calls one, and compiling every output schema (ajv) was most of a site build's time.
 */
class CompileOnUse implements jsonSchemaValidator {
  private readonly ajv = new AjvJsonSchemaValidator();
  getValidator<T>(schema: Parameters<jsonSchemaValidator['getValidator']>[0]): JsonSchemaValidator<T> {
    let compiled: JsonSchemaValidator<T> | undefined;
    return (input) => (compiled ??= this.ajv.getValidator<T>(schema))(input);
  }
}

/** The list depends only on the code and the base URL: a long-running process asks the server once per URL. */
const listed = new Map<string, Promise<ToolSummary[]>>();

export function listMcpTools(baseUrl: string): Promise<ToolSummary[]> {
  let tools = listed.get(baseUrl);
  if (!tools) {
    tools = askServer(baseUrl);
    tools.catch(() => listed.delete(baseUrl));
    listed.set(baseUrl, tools);
  }
  return tools;
}

async function askServer(baseUrl: string): Promise<ToolSummary[]> {
  const server = createMcpServer({
    readText: async () => null,
    fetchPaid: async () => new Response(null, { status: 503 }),
    baseUrl,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client(
    { name: 'emi-docs', version: '1.0.0' },
    { jsonSchemaValidator: new CompileOnUse() },
  );
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
