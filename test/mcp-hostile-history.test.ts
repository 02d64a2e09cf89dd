// The `history` tool names at most 10 unknown field names and counts the rest: it echoed every one, so 100 000
// unknown names came back as a 789 KB error text. Through the real `/mcp` route, over an empty site folder (the
// names are checked before any file is read).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpRoute } from '../mcp/http.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { createMcpServer } from '../mcp/server.ts';
import { MCP_PATH } from '../schemas/delivery.ts';

let root: string;
let route: Hono;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-mcp-history-'));
  route = createMcpRoute(() =>
    createMcpServer({
      readText: readTextFrom(root),
      fetchPaid: () => Promise.reject(new Error('no paid tool is called here')),
      baseUrl: 'http://127.0.0.1:8080',
    }),
  );
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The error text of `history` called with `fields`. */
async function historyError(fields: string[]): Promise<string> {
  const response = await route.request(MCP_PATH, {
    method: 'POST',
    headers: { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'history', arguments: { resource: 'main-brain', fields } },
    }),
  });
  expect(response.status).toBe(200);
  const { result } = (await response.json()) as { result: CallToolResult };
  expect(result.isError).toBe(true);
  return (result.content[0] as { text: string }).text;
}

describe('history with unknown field names', () => {
  it('1 000 unknown names: the first 10 and how many more, under 2 KB', async () => {
    const names = Array.from({ length: 1_000 }, (_, i) => `nope_${i}`);
    const text = await historyError(names);
    expect(text.length).toBeLessThan(2_000);
    expect(text).toMatch(
      /^unknown field\(s\) for main-brain: nope_0, nope_1, .*, nope_9 and 990 more\. Known: run_at, /,
    );
    expect(text).not.toContain('nope_10');
  });

  it('a few unknown names are all named, a known one is not', async () => {
    const text = await historyError(['nope', 'run_at', 'other']);
    expect(text).toMatch(/^unknown field\(s\) for main-brain: nope, other\. Known: /);
  });
});
