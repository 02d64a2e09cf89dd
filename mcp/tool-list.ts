// The tool list as the server itself reports it (tools/list), for the agents docs page: the page can never drift
// from the server.
import { ownToolList } from './server.ts';

export interface ToolSummary {
  name: string;
  title: string;
  description: string;
  /** Input parameter names, with `?` for optional ones. */
  inputs: string[];
  paid: boolean;
}

export async function listMcpTools(): Promise<ToolSummary[]> {
  return (await ownToolList()).map((tool) => {
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
}
