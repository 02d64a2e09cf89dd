// `emi mcp` (stdio) given input that is not what a client should send. A line over 10 MB made the SDK's transport
// close itself: the process exited 0 without a word (the in-process paywall closed at once, the answers still owed
// dropped). Now the input stops before that line, the requests already read are answered, one stderr line says why
// and the exit status is 1, even while the client keeps stdin open. A line that is not JSON, or not one JSON-RPC
// message, got no answer and no note; now stderr names it and stdout answers with a JSON-RPC error without an id.
// The real CLI (bin/emi.js, compiled by `node bin/build.js`) over an empty site folder, its own paywall in-process.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emiMcp as spawnEmiMcp, handshake } from './helpers/emi-mcp-stdio.ts';
import { openLineAfter } from '../mcp/stdio-input.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-mcp-stdio-hostile-'));
  await mkdir(join(root, 'site'));
  await mkdir(join(root, 'paid'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const emiMcp = () => spawnEmiMcp(join(root, 'site'), join(root, 'paid'));
const [initialize, initialized] = handshake('hostile');

const answerTo = (messages: JSONRPCMessage[], id: number) =>
  messages.find((m) => 'id' in m && m.id === id && ('result' in m || 'error' in m));

describe('emi mcp (stdio) given hostile input', () => {
  it('a line over 10 MB: the requests read before it are answered, one stderr line says why, exit 1 (stdin still open)', async () => {
    const run = emiMcp();
    run.write(serializeMessage(initialize));
    run.write(serializeMessage(initialized));
    run.write(serializeMessage({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    run.write(`${'x'.repeat(11 * 1024 * 1024)}\n`);
    run.write(serializeMessage({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    // stdin is not closed: the process ends on its own.
    const [code, signal] = await run.exited;
    run.end();

    expect([code, signal], run.stderr()).toEqual([1, null]);
    const why = run
      .stderr()
      .split('\n')
      .filter((line) => line.includes('bytes, the most one message may take'));
    expect(why).toEqual([
      'emi mcp: a line is over 10485760 bytes, the most one message may take: stopped reading, answering the ' +
        'requests already read, then exiting',
    ]);
    expect(answerTo(run.messages, 1), 'initialize answered').toHaveProperty('result');
    expect(answerTo(run.messages, 2), 'tools/list answered').toHaveProperty('result.tools');
    // Nothing after the long line is read.
    expect(answerTo(run.messages, 3)).toBeUndefined();
  }, 60_000);

  it('a line that is not JSON, and one that is not one message: named on stderr, answered -32700 / -32600, the session goes on', async () => {
    const run = emiMcp();
    run.write(serializeMessage(initialize));
    run.write(serializeMessage(initialized));
    run.write('not json\n');
    run.write(`${JSON.stringify([{ jsonrpc: '2.0', id: 9, method: 'ping' }])}\n`);
    run.write(serializeMessage({ jsonrpc: '2.0', id: 2, method: 'ping' }));
    run.end();
    const [code, signal] = await run.exited;

    expect([code, signal], run.stderr()).toEqual([0, null]);
    expect(run.stderr()).toContain('emi mcp: a line that is not JSON was ignored (');
    expect(run.stderr()).toContain('emi mcp: a line that is not a JSON-RPC message was ignored');
    const errors = run.messages.filter((m) => 'error' in m && !('id' in m));
    expect(errors.map((m) => ('error' in m ? m.error.code : null)).sort()).toEqual([-32700, -32600].sort());
    expect(answerTo(run.messages, 2), 'the ping after them answered').toHaveProperty('result');
    expect(answerTo(run.messages, 9)).toBeUndefined();
  }, 60_000);
});

describe('openLineAfter (the line length check)', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8');

  it('carries the open line across chunks and allows a line of exactly the limit', () => {
    expect(openLineAfter(bytes('abc'), 0, 5)).toBe(3);
    expect(openLineAfter(bytes('de\nfg'), 3, 5)).toBe(2);
    expect(openLineAfter(bytes('abcde\n'), 0, 5)).toBe(0);
  });

  it('refuses a line one byte over, whether it ends in the chunk, lies inside it or stays open', () => {
    expect(openLineAfter(bytes('def\n'), 3, 5)).toBeNull();
    expect(openLineAfter(bytes('a\nabcdef\nb'), 0, 5)).toBeNull();
    expect(openLineAfter(bytes('a\nabcdef'), 0, 5)).toBeNull();
  });
});
