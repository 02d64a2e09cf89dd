// The first request of an MCP session over HTTP, as an MCP client sends it: for tests that only need a server to
// answer at a path (the official SDK client is used where a test speaks MCP).
export const MCP_INITIALIZE: RequestInit = {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  }),
};
