// A JSON-RPC batch at `/mcp` is refused before any of its messages is handled: one 4.8 KB POST of 100 `tools/list`
// was answered with 19 MB and blocked `emi serve` for over a second. A client on protocol 2025-06-18 or later (which
// has no batches) gets 400 / -32600 for any batch; a 2025-03-26 client (the version the SDK assumes when a request
// names none), whose servers must take batches, may send up to MAX_BATCH_MESSAGES. Checked on the route itself and
// through `emi serve`'s preview app, which hands /mcp to it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { MAX_BATCH_MESSAGES, createMcpRoute } from '../mcp/http.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { createMcpServer } from '../mcp/server.ts';
import { MCP_PATH } from '../schemas/delivery.ts';

let root: string;
let route: Hono;
let preview: Hono;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-mcp-batch-'));
  route = createMcpRoute(() =>
    createMcpServer({
      readText: readTextFrom(root),
      fetchPaid: () => Promise.reject(new Error('no paid tool is called here')),
      baseUrl: 'http://127.0.0.1:8080',
    }),
  );
  preview = createPreviewApp({ root, mcp: route });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const toolsList = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

/** POSTs `body` as a client would (the Accept and Content-Type the transport requires), with optional headers. */
const post = (app: Hono, body: string, headers: Record<string, string> = {}) =>
  app.request(MCP_PATH, {
    method: 'POST',
    headers: {
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      ...headers,
    },
    body,
  });

interface JsonRpcAnswer {
  jsonrpc: string;
  id?: unknown;
  result?: { tools?: unknown[] };
  error?: { code: number; message: string };
}

describe.each([
  ['the route (mcp/http.ts)', () => route],
  ['emi serve (the preview app)', () => preview],
])('JSON-RPC batches at /mcp: %s', (_where, app) => {
  it('a batch of 100 tools/list: 400 / -32600 naming why, in a small body, with CORS', async () => {
    const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => toolsList(i + 1)));
    const response = await post(app(), batch);
    expect(response.status).toBe(400);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const text = await response.text();
    expect(text.length).toBeLessThan(1_000);
    const answer = JSON.parse(text) as JsonRpcAnswer;
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(answer.error?.message).toContain(
      `batches of more than ${MAX_BATCH_MESSAGES} messages are not supported (this one holds 100)`,
    );
    expect(answer.error?.message).toContain('send one message per request');
  });

  it.each(['2025-06-18', '2025-11-25'])(
    'a batch of 2 from a client on %s (no batches in its protocol): 400 / -32600',
    async (version) => {
      const response = await post(app(), JSON.stringify([toolsList(1), toolsList(2)]), {
        'Mcp-Protocol-Version': version,
      });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as JsonRpcAnswer;
      expect(answer).toMatchObject({ id: null, error: { code: -32600 } });
      expect(answer.error?.message).toContain('batches are not supported');
    },
  );

  it('an empty batch: 400 / -32600', async () => {
    const response = await post(app(), '[]');
    expect(response.status).toBe(400);
    expect(((await response.json()) as JsonRpcAnswer).error?.code).toBe(-32600);
  });

  it('a batch of 2 from a 2025-03-26 client (no version header) is still answered, both messages', async () => {
    const response = await post(app(), JSON.stringify([toolsList(1), toolsList(2)]));
    expect(response.status).toBe(200);
    const answers = (await response.json()) as JsonRpcAnswer[];
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    for (const answer of answers) expect(answer.result?.tools?.length).toBeGreaterThan(0);
  });

  it('a single tools/list still works, with and without a version header', async () => {
    const headerSets: Array<Record<string, string>> = [{}, { 'Mcp-Protocol-Version': '2025-11-25' }];
    for (const headers of headerSets) {
      const response = await post(app(), JSON.stringify(toolsList(7)), headers);
      expect(response.status).toBe(200);
      const answer = (await response.json()) as JsonRpcAnswer;
      expect(answer.id).toBe(7);
      expect(answer.result?.tools?.length).toBeGreaterThan(0);
    }
  });

  it('a body that is not JSON is still the transport parse error (-32700)', async () => {
    const response = await post(app(), 'not json');
    expect(response.status).toBe(400);
    expect(((await response.json()) as JsonRpcAnswer).error?.code).toBe(-32700);
  });
});
