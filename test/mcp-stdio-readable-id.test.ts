// `emi mcp` (stdio) given a line that is JSON with a readable id but not a valid JSON-RPC message (found by fuzzing:
// `"params": null`, `[]` or `"x"` for tools/list, tools/call, prompts/list, ping). The SDK's transport handed such a
// line to onerror with the line gone, so the answer (-32600) carried no id and the client's request waited forever:
// an SDK client matches answers by id. Now each line is checked before the transport reads it and answered with
// the request's id. A line whose id cannot be read (not JSON, not an object, a response) is still answered without
// an id: the SDK refuses `"id": null` (see invalidLineReply). The real CLI (bin/emi.js, compiled by
// `node bin/build.js`) over an empty site folder, its own paywall in-process.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emiMcp as spawnEmiMcp, handshake } from './helpers/emi-mcp-stdio.ts';
import * as stdioInput from '../mcp/stdio-input.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-mcp-stdio-id-'));
  await mkdir(join(root, 'site'));
  await mkdir(join(root, 'paid'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const emiMcp = () => spawnEmiMcp(join(root, 'site'), join(root, 'paid'));
const [initialize, initialized] = handshake('readable-id');

const answersTo = (messages: JSONRPCMessage[], id: number | string) =>
  messages.filter((m) => 'id' in m && m.id === id && ('result' in m || 'error' in m));
const errorCodeOf = (message: JSONRPCMessage | undefined) =>
  message && 'error' in message ? message.error.code : undefined;

describe('emi mcp (stdio): a line with a readable id that is not a valid message', () => {
  it('"params": null with id 7 is answered -32600 with id 7, and a later request is answered', async () => {
    const run = emiMcp();
    await run.write(serializeMessage(initialize));
    await run.write(serializeMessage(initialized));
    await run.write('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":null}\n');
    await run.write(serializeMessage({ jsonrpc: '2.0', id: 8, method: 'ping' }));
    run.end();
    const [code, signal] = await run.exited;

    expect([code, signal], run.stderr()).toEqual([0, null]);
    const answers = answersTo(run.messages, 7);
    expect(answers, JSON.stringify(run.messages)).toHaveLength(1);
    expect(errorCodeOf(answers[0])).toBe(-32600);
    expect(answersTo(run.messages, 8)[0], 'the ping after it answered').toHaveProperty('result');
    expect(run.stderr()).toContain('emi mcp: a line that is not a JSON-RPC message was ignored');
    // Every error answer names the request it answers: none is left without an id.
    expect(run.messages.filter((m) => 'error' in m && !('id' in m))).toEqual([]);
  }, 60_000);

  it('params [] or "x" for tools/list, tools/call, prompts/list, ping: each answered -32600 with its own id (string ids too)', async () => {
    const run = emiMcp();
    await run.write(serializeMessage(initialize));
    await run.write(serializeMessage(initialized));
    const bad = [
      { id: 21, method: 'tools/list', params: [] },
      { id: 22, method: 'tools/call', params: 'x' },
      { id: 23, method: 'prompts/list', params: [] },
      { id: 24, method: 'ping', params: 'x' },
      { id: 'twenty-five', method: 'tools/call', params: null },
    ];
    for (const line of bad) await run.write(`${JSON.stringify({ jsonrpc: '2.0', ...line })}\n`);
    await run.write(serializeMessage({ jsonrpc: '2.0', id: 26, method: 'tools/list' }));
    run.end();
    const [code, signal] = await run.exited;

    expect([code, signal], run.stderr()).toEqual([0, null]);
    for (const { id } of bad) {
      const answers = answersTo(run.messages, id);
      expect(answers, `answers to ${id}`).toHaveLength(1);
      expect(errorCodeOf(answers[0]), `answer to ${id}`).toBe(-32600);
    }
    expect(answersTo(run.messages, 26)[0], 'tools/list after them answered').toHaveProperty('result.tools');
  }, 60_000);

  it('a line that is not JSON: -32700 with no id to give (the SDK refuses "id": null), the session goes on', async () => {
    const run = emiMcp();
    await run.write(serializeMessage(initialize));
    await run.write('{"jsonrpc":"2.0","id":3,"method":"ping"\n');
    await run.write(serializeMessage({ jsonrpc: '2.0', id: 4, method: 'ping' }));
    run.end();
    const [code, signal] = await run.exited;

    expect([code, signal], run.stderr()).toEqual([0, null]);
    const parseErrors = run.messages.filter((m) => errorCodeOf(m) === -32700);
    expect(parseErrors).toEqual([
      { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the line is not JSON' } },
    ]);
    expect(answersTo(run.messages, 3)).toEqual([]);
    expect(answersTo(run.messages, 4)[0]).toHaveProperty('result');
  }, 60_000);

  it('valid lines split across writes (one cut inside a UTF-8 character), "\\r\\n" endings and an empty line: read as the SDK reads them', async () => {
    const run = emiMcp();
    const init = serializeMessage(initialize);
    await run.write(init.slice(0, 10));
    await run.write(init.slice(10, 40));
    await run.write(init.slice(40));
    await run.write(serializeMessage(initialized).replace('\n', '\r\n'));
    const ping = Buffer.from(
      serializeMessage({ jsonrpc: '2.0', id: 5, method: 'ping', params: { _meta: { note: 'été €' } } }),
    );
    const inEuro = ping.indexOf(Buffer.from('€')) + 1;
    await run.write(ping.subarray(0, inEuro));
    await run.write(ping.subarray(inEuro));
    // An empty line is not JSON to the SDK's ReadBuffer either: -32700, nothing else happens.
    await run.write('\n');
    await run.write(serializeMessage({ jsonrpc: '2.0', id: 6, method: 'tools/list' }).replace('\n', '\r\n'));
    run.end();
    const [code, signal] = await run.exited;

    expect([code, signal], run.stderr()).toEqual([0, null]);
    expect(answersTo(run.messages, 1)[0], 'initialize').toHaveProperty('result.serverInfo');
    expect(answersTo(run.messages, 5)[0], 'the split ping').toHaveProperty('result');
    expect(answersTo(run.messages, 6)[0], 'tools/list ending in \\r\\n').toHaveProperty('result.tools');
    expect(run.messages.filter((m) => 'error' in m).map(errorCodeOf)).toEqual([-32700]);
  }, 60_000);
});

describe('emi mcp (stdio) with the real SDK client', () => {
  it('a request the server refuses as malformed fails at once with -32600 (it waited forever), and the client goes on', async () => {
    const client = new Client({ name: 'emi-readable-id', version: '1.0.0' });
    const clientErrors: Error[] = [];
    client.onerror = (error) => clientErrors.push(error);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['bin/emi.js', 'mcp', '--dir', join(root, 'site'), '--paid', join(root, 'paid')],
      cwd: process.cwd(),
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      // The SDK's typed calls never send params null: a hand-made request, as a fuzzer or another client might.
      const refused = await client
        .request({ method: 'tools/list', params: null } as never, ListToolsResultSchema, { timeout: 20_000 })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError).code).toBe(-32600);

      // A line with no id to give: its answer has no id either, which this client reads and reports as answering
      // no request (a null id it would refuse as unreadable). Nothing else happens: the next call is answered.
      await transport.send({ jsonrpc: '2.0', method: 7 } as never);
      const tools = await client.listTools();
      expect(tools.tools.length).toBeGreaterThan(0);
      expect(clientErrors.map((error) => error.message)).toEqual([
        expect.stringContaining('Received a response for an unknown message ID'),
      ]);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('the line checks', () => {
  const { LineFramer, invalidLineReply, lineProblem, requestIdOf } = stdioInput;
  const bytes = (text: string) => Buffer.from(text, 'utf8');
  const texts = (lines: Buffer[]) => lines.map((line) => line.toString('utf8'));

  it('frames lines across chunks, and stops at a line over the limit after the lines before it', () => {
    const framer = new LineFramer(5);
    expect(texts(framer.push(bytes('ab')).lines)).toEqual([]);
    expect(texts(framer.push(bytes('c\n\nde')).lines)).toEqual(['abc', '']);
    // 'de' and 'fghi' make one line of 6 bytes: nothing of it, nor after it, is framed.
    expect(framer.push(bytes('fghi\nok\n'))).toEqual({ lines: [], tooLong: true });
    const fresh = new LineFramer(5);
    const framed = fresh.push(bytes('ok\nabcdef\nnext\n'));
    expect({ lines: texts(framed.lines), tooLong: framed.tooLong }).toEqual({ lines: ['ok'], tooLong: true });
  });

  it('reads an id only from a request-like object, as the SDK takes ids', () => {
    expect(requestIdOf('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":null}')).toBe(7);
    expect(requestIdOf('{"id":"seven","method":1}')).toBe('seven');
    // A response from the client: its id is one of the server's, an answer with it would look like another one.
    expect(requestIdOf('{"jsonrpc":"2.0","id":7,"result":"x"}')).toBeUndefined();
    expect(requestIdOf('{"jsonrpc":"2.0","id":7,"error":null}')).toBeUndefined();
    expect(requestIdOf('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')).toBeUndefined();
    expect(requestIdOf('{"jsonrpc":"2.0","id":null,"method":"ping"}')).toBeUndefined();
    expect(requestIdOf('[{"jsonrpc":"2.0","id":7,"method":"ping"}]')).toBeUndefined();
    expect(requestIdOf('not json')).toBeUndefined();
  });

  it("answers with the SDK's own error kinds: -32700 for not JSON, -32600 with the id when there is one", () => {
    const notJson = lineProblem('{');
    const notMessage = lineProblem('{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}');
    expect(lineProblem('{"jsonrpc":"2.0","id":7,"method":"ping"}')).toBeNull();
    expect(notJson).toBeInstanceOf(SyntaxError);
    expect(invalidLineReply('{', notJson!)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: the line is not JSON' },
    });
    expect(invalidLineReply('{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}', notMessage!)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32600, message: 'Invalid Request: the line is not one JSON-RPC message' },
    });
  });
});
