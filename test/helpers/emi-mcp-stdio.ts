// The real `emi mcp` (bin/emi.js, compiled by `node bin/build.js`) as a child process over stdio, for the tests
// that send it input no SDK client would: what it writes is read with the SDK's own framing.
import { spawn } from 'node:child_process';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface EmiMcpRun {
  /**
   * Writes `data` and resolves once it is handed to the pipe (so separate writes reach the server as they were cut);
   * the server may stop reading before the whole input is written, and a write cut short is not an error here.
   */
  write(data: string | Buffer): Promise<void>;
  end(): void;
  /** The exit code and signal. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** Every message on stdout, read with the SDK's own framing (a line that is not a message throws). */
  messages: JSONRPCMessage[];
  stderr(): string;
}

/** `emi mcp --dir <dir> --paid <paid>` (its own paywall in-process). */
export function emiMcp(dir: string, paid: string): EmiMcpRun {
  const child = spawn(process.execPath, ['bin/emi.js', 'mcp', '--dir', dir, '--paid', paid], {
    cwd: process.cwd(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (code, signal) => resolve([code, signal])),
  );
  child.stdin.on('error', () => {});
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const buffer = new ReadBuffer();
  const messages: JSONRPCMessage[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffer.append(chunk);
    for (let m = buffer.readMessage(); m; m = buffer.readMessage()) messages.push(m);
  });
  return {
    write: (data) => new Promise<void>((resolve) => child.stdin.write(data, () => resolve())),
    end: () => child.stdin.end(),
    exited,
    messages,
    stderr: () => stderr,
  };
}

/** The initialize request (id 1) a client named `name` sends first, and the notification that follows its answer. */
export const handshake = (name: string): [JSONRPCMessage, JSONRPCMessage] => [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
];
