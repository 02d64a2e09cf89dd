// A tool's description is what an agent reads to call it: it names the tool's own arguments, never an HTTP query
// parameter the tool does not take (the `reasoning` tool said "Choose the asset with ?asset="). The HTTP documents
// keep their wording. The real `emi mcp` over stdio, asked by the official SDK client.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';

let dir: string;
let client: Client;
let tools: Tool[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-mcp-descriptions-'));
  client = new Client({ name: 'emi-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      // A site not built yet: tools/list and the discovery documents do not need one.
      args: ['bin/emi.js', 'mcp', '--dir', dir, '--paid', dir],
      cwd: process.cwd(),
      stderr: 'pipe',
    }),
  );
  ({ tools } = await client.listTools());
}, 60_000);

afterAll(async () => {
  await client?.close();
  await rm(dir, { recursive: true, force: true });
});

const tool = (name: string): Tool => {
  const found = tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe('tool descriptions', () => {
  it('reasoning names its `asset` argument: the assets, case-insensitive, BTC by default', () => {
    const { description = '', inputSchema } = tool('reasoning');
    expect(Object.keys(inputSchema.properties ?? {})).toEqual(['asset']);
    expect(description).toContain(
      `Choose the asset with the \`asset\` argument: one of ${TRACKED_ASSETS.join(', ')}, case-insensitive; ` +
        'default BTC.',
    );
    expect(description).not.toContain('?asset=');
  });

  it('no tool speaks of an HTTP query parameter; each names only arguments it takes', () => {
    expect(tools.length).toBeGreaterThan(10);
    for (const { name, description = '', inputSchema } of tools) {
      expect(description, name).not.toMatch(/\?[a-z_]+=/i);
      const taken = Object.keys(inputSchema.properties ?? {});
      const named = [...description.matchAll(/`([a-z_]+)` argument/g)].map((m) => m[1]);
      expect(taken, name).toEqual(expect.arrayContaining(named));
    }
  });

  it('the HTTP documents keep their own wording (?asset=)', async () => {
    const openapi = await client.readResource({ uri: 'emi://openapi.json' });
    const document = JSON.parse((openapi.contents[0] as { text: string }).text) as {
      paths: Record<string, { get: { description: string } }>;
    };
    expect(document.paths['/api/reasoning.php']?.get.description).toContain(
      'Choose the asset with ?asset= (default BTC).',
    );
  });
});
