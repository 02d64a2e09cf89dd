// What a browser asks before an MCP client on another origin posts to /mcp (the streamable HTTP transport sends
// Content-Type, Accept and Mcp-Protocol-Version), and what the answer must allow for the POST to go ahead.
import { expect } from 'vitest';

const REQUESTED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version'];

/** Sends the preflight of a cross-origin POST /mcp to `mcpUrl` and checks that it allows it. */
export async function expectMcpPreflightAllowsPost(mcpUrl: string): Promise<void> {
  const response = await fetch(mcpUrl, {
    method: 'OPTIONS',
    headers: {
      Origin: 'https://agent.example',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': REQUESTED_HEADERS.join(','),
    },
  });
  expect(response.status).toBeGreaterThanOrEqual(200);
  expect(response.status).toBeLessThan(300);
  const list = (name: string) =>
    (response.headers.get(name) ?? '').split(',').map((item) => item.trim().toLowerCase());
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  expect(list('access-control-allow-methods')).toContain('post');
  expect(list('access-control-allow-headers')).toEqual(expect.arrayContaining(REQUESTED_HEADERS));
}
