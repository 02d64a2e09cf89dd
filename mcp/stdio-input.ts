// What `emi mcp` does with its stdin before the SDK's stdio transport sees it. A line over the transport's buffer
// limit made it close itself, and its server then dropped the answers of the requests still running: the process
// exited 0 in silence, a paid call perhaps settled and never answered. Here the input stops before that line reaches
// the transport, so the session can end on its own terms. And a line the transport cannot read as a message it only
// hands to `onerror`, the line itself gone: a request with a readable id but a bad shape (`"params": null`) was
// answered without that id, and the client's call waited forever. So each line is checked here, with the SDK's own
// `deserializeMessage`, before the transport reads it: a line that fails is not passed on but reported, with its
// text, so it can be named on stderr and answered with the request's id when it has one.
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE, deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { RequestIdSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { clipped } from './results.ts';

/** The longest line read: the SDK's own limit for one stdio message (10 MiB). */
export const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from([NEWLINE]);

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

/** Cuts a byte stream into lines (without their '\n') of at most `maxBytes`, the open line kept across chunks. */
export class LineFramer {
  private pieces: Buffer[] = [];
  private open = 0;

  constructor(private readonly maxBytes: number) {}

  /** The lines `chunk` completes, and whether a line then went over the limit (nothing after it is framed). */
  push(chunk: Buffer): { lines: Buffer[]; tooLong: boolean } {
    const lines: Buffer[] = [];
    for (let start = 0; ;) {
      const newline = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      const open = openLineAfter(piece, this.open, this.maxBytes);
      if (open === null) return { lines, tooLong: true };
      if (newline === -1) {
        if (piece.length > 0) this.pieces.push(piece);
        this.open = open;
        return { lines, tooLong: false };
      }
      lines.push(this.pieces.length === 0 ? piece : Buffer.concat([...this.pieces, piece]));
      this.pieces = [];
      this.open = 0;
      start = newline + 1;
    }
  }
}

/** A line's text as the SDK's ReadBuffer reads it: UTF-8, one '\r' before the '\n' dropped. */
export function lineText(line: Buffer): string {
  return line.toString('utf8').replace(/\r$/, '');
}

/** Why the SDK's transport would refuse `text` as a message (a SyntaxError, a ZodError), or null when it takes it. */
export function lineProblem(text: string): Error | null {
  try {
    deserializeMessage(text);
    return null;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

export interface FramedInput {
  /** The lines the transport can read, unchanged and in order, each with its '\n'. */
  lines: Readable;
  /** Resolves at the first line over the limit: then `input` is no longer read and nothing more is passed on. */
  tooLong: Promise<void>;
}

/**
 * `input` framed into lines of at most `maxBytes`. A line the SDK would refuse goes to `onInvalid` instead (its text
 * and the SDK's error), in its place in the order. An unfinished last line is never passed on, as in the SDK.
 */
export function frameLines(
  input: Readable,
  maxBytes: number,
  onInvalid: (text: string, error: Error) => void,
): FramedInput {
  const framer = new LineFramer(maxBytes);
  let stopped = false;
  let stop = () => {};
  const tooLong = new Promise<void>((resolve) => (stop = resolve));
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (stopped) return done();
      const framed = framer.push(chunk);
      for (const line of framed.lines) {
        const text = lineText(line);
        const problem = lineProblem(text);
        if (problem) onInvalid(text, problem);
        else this.push(Buffer.concat([line, NEWLINE_BYTES]));
      }
      if (framed.tooLong) {
        stopped = true;
        input.unpipe(lines);
        input.pause();
        stop();
      }
      done();
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

/**
 * The id of the request `text` tried to be, when it can be read: a JSON object that is not a response (no `result`,
 * no `error`: an id there names one of the server's own requests, and an answer carrying it would look to the client
 * like the answer to its request of that id) with an id the SDK takes (a string or a safe integer).
 */
export function requestIdOf(text: string): RequestId | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  if ('result' in value || 'error' in value || !('id' in value)) return undefined;
  const id = RequestIdSchema.safeParse(value.id);
  return id.success ? id.data : undefined;
}

/**
 * The JSON-RPC error answering a line the transport would refuse: -32700 when it is not JSON, else -32600, with the
 * request's id when it has a readable one. JSON-RPC 2.0 wants `"id": null` when the id cannot be read; this answer
 * leaves `id` out instead, because the MCP SDK (1.32: `JSONRPCErrorResponseSchema`, `id: RequestIdSchema.optional()`,
 * a string or an integer) refuses a null id: its client would drop the whole line as unreadable, while an answer
 * without an id is read and reported as answering no request. MCP itself never allows a null id.
 */
export function invalidLineReply(text: string, error: Error): JSONRPCMessage {
  if (error instanceof SyntaxError) {
    return { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the line is not JSON' } };
  }
  const id = requestIdOf(text);
  return {
    jsonrpc: '2.0',
    ...(id === undefined ? {} : { id }),
    error: { code: -32600, message: 'Invalid Request: the line is not one JSON-RPC message' },
  };
}
