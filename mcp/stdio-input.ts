// What `emi mcp` does with its stdin beyond the SDK's stdio transport. A line over the transport's buffer limit made
// it close itself, and its server then dropped the answers of the requests still running: the process exited 0 in
// silence, a paid call perhaps settled and never answered. Here the input stops before that line reaches the
// transport, so the session can end on its own terms. And a line that is not a message, which the transport only
// hands to `onerror`, is named on stderr and answered with a JSON-RPC error (without an id: it has none to give).
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { clipped } from './results.ts';

/** The longest line read: the SDK's own limit for one stdio message (10 MiB). */
export const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

const NEWLINE = 0x0a;

/**
 * The length of the line still open after `chunk`, given `open` bytes of it before; null when a line in `chunk`
 * (the open one included) is longer than `maxBytes`.
 */
export function openLineAfter(chunk: Buffer, open: number, maxBytes: number): number | null {
  let start = 0;
  let length = open;
  for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
    if (length + newline - start > maxBytes) return null;
    start = newline + 1;
    length = 0;
  }
  length += chunk.length - start;
  return length > maxBytes ? null : length;
}

/**
 * `input` as a stream of lines of at most `maxBytes`, and a promise that resolves at the first longer line: then it
 * stops reading `input` and passes nothing more on (not even the start of that line).
 */
export function limitLines(input: Readable, maxBytes: number): { lines: Readable; tooLong: Promise<void> } {
  let open = 0;
  let stopped = () => {};
  const tooLong = new Promise<void>((resolve) => (stopped = resolve));
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const after = openLineAfter(chunk, open, maxBytes);
      if (after === null) {
        input.unpipe(lines);
        input.pause();
        stopped();
        return done();
      }
      open = after;
      done(null, chunk);
    },
  });
  // The transport listens for errors on what it reads: a read error of `input` is passed on (pipe does not).
  input.once('error', (error) => lines.destroy(error));
  return { lines: input.pipe(lines), tooLong };
}

/** What was wrong with the input, as one line for stderr (after `emi mcp: `). */
export function inputProblem(error: Error): string {
  if (error instanceof SyntaxError)
    return `a line that is not JSON was ignored (${clipped(error.message, 120)})`;
  if (error.name === 'ZodError') {
    return 'a line that is not a JSON-RPC message was ignored (one message per line; batches are not supported)';
  }
  return clipped(error.message.replace(/\s+/g, ' '), 200);
}

/** The JSON-RPC error answering a line that is not a message, or null for another kind of error. */
export function inputErrorReply(error: Error): JSONRPCMessage | null {
  if (error instanceof SyntaxError) {
    return { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the line is not JSON' } };
  }
  if (error.name === 'ZodError') {
    return {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: the line is not one JSON-RPC message' },
    };
  }
  return null;
}
