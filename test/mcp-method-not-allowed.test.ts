// `/mcp` answers POST (JSON-RPC) and OPTIONS (the preflight); every other method gets one JSON 405 with
// `Allow: POST, OPTIONS`, CORS and the API security headers. GET and DELETE always did; PUT and PATCH fell through to
// Hono's bare text 404, which carried neither (and a browser on another origin could not read it). Checked on the
// route itself and through `emi serve`'s preview app, which hands every method at /mcp to the route.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpRoute } from '../mcp/http.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { API_SECURITY_HEADERS } from '../paywall-worker/security-headers.ts';
import { MCP_PATH } from '../schemas/delivery.ts';

const route = createMcpRoute(() => new McpServer({ name: 'method-test', version: '1.0.0' }));
let root: string;
let preview: Hono;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-mcp-method-'));
  preview = createPreviewApp({ root, mcp: route });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const ORIGIN = 'https://agent.example';

/** The headers that say what the answer is, without its length (the message names the method). */
const headersOf = (response: Response): Record<string, string> =>
  Object.fromEntries([...response.headers].filter(([name]) => name !== 'content-length'));

describe.each([
  ['the route (mcp/http.ts)', () => route],
  ['emi serve (the preview app)', () => preview],
])('every method but POST and OPTIONS at /mcp: %s', (_where, app) => {
  it.each(['PUT', 'PATCH', 'GET', 'DELETE'])(
    '%s: a JSON 405 with Allow, CORS and the API headers',
    async (method) => {
      const response = await app().request(MCP_PATH, { method, headers: { Origin: ORIGIN } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST, OPTIONS');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('cache-control')).toBe('no-store');
      for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) {
        expect(response.headers.get(name), name).toBe(value);
      }
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as {
        jsonrpc?: string;
        error?: { message?: string };
        id?: unknown;
      };
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null });
      expect(body.error?.message).toMatch(new RegExp(`^${method} is not supported`));
    },
  );

  it('PUT and PATCH carry exactly the headers GET does', async () => {
    const get = await app().request(MCP_PATH, { headers: { Origin: ORIGIN } });
    for (const method of ['PUT', 'PATCH']) {
      const other = await app().request(MCP_PATH, { method, headers: { Origin: ORIGIN } });
      expect(headersOf(other), method).toEqual(headersOf(get));
    }
  });
});
