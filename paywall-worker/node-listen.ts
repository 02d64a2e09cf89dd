// The project's one way to put a web-standard app on a Node HTTP server: resolves once it listens (rejects on
// EADDRINUSE and the like), closes without waiting for idle keep-alive sockets, gives a client 30 s to send its
// request, and answers a request that never reaches the app (headers Node refuses to parse, a URL or Host that
// @hono/node-server cannot read, an `Expect` it cannot meet, a method no route takes, a request sent too slowly)
// with a JSON error a browser on another origin can read.
import type { AddressInfo, Socket } from 'node:net';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, RequestError } from '@hono/node-server';
import { API_JSON_HEADERS } from '../schemas/delivery.ts';
import { errorBody } from './core/answers.ts';
import { logToStderr } from './core/log.ts';
import { describeError } from './facilitator-errors.ts';

/** Node's limit on a request's headers (`--max-http-header-size`; 16 KiB unless changed). */
const HEADER_LIMIT_KIB = 16;

/**
 * Time a client has to send its whole request, headers and body (Node's default is 300 s, which lets a slow body
 * hold a socket for minutes). A vote or a faucet call is a few KB; the answer's time does not count, so a paid
 * request waiting for its settlement and a streamed MCP answer are unaffected.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** An error answered before (or instead of) the app: the paywall's error shape, CORS, the API security headers. */
interface EarlyAnswer {
  status: 400 | 408 | 417 | 431 | 500 | 501;
  statusText: string;
  headers: Record<string, string>;
  body: string;
}

function earlyAnswer(
  status: EarlyAnswer['status'],
  statusText: string,
  error: string,
  message: string,
): EarlyAnswer {
  const body = JSON.stringify(errorBody(status, error, message, null));
  const headers = {
    ...API_JSON_HEADERS,
    // What could not be read leaves the connection in no state to read the next request on it.
    Connection: 'close',
  };
  return { status, statusText, headers, body };
}

/**
 * Headers over Node's limit. Node's own is a bare 431 without CORS headers, which a browser reports as a network
 * error; this one names the limit.
 */
const headersTooLarge = (): EarlyAnswer =>
  earlyAnswer(
    431,
    'Request Header Fields Too Large',
    'request_headers_too_large',
    `The request's headers exceed this server's ${HEADER_LIMIT_KIB} KiB limit (an x402 PAYMENT-SIGNATURE is ` +
      'about 4 KB); nothing was verified or settled.',
  );

const badRequest = (why: string): EarlyAnswer =>
  earlyAnswer(400, 'Bad Request', 'bad_request', `${why}; the request was not processed.`);

const tooSlow = (timeoutMs: number): EarlyAnswer =>
  earlyAnswer(
    408,
    'Request Timeout',
    'request_timeout',
    `The request was not received within ${timeoutMs / 1000} s; it was not processed.`,
  );

/** Node meets only `Expect: 100-continue`; its own answer to any other is a bare 417. */
const expectationFailed = (expect: string): EarlyAnswer =>
  earlyAnswer(
    417,
    'Expectation Failed',
    'expectation_failed',
    `This server meets no expectation but 100-continue (Expect: ${expect.slice(0, 100)}); the request was not ` +
      'processed.',
  );

/**
 * TRACE, which no route of these servers takes, is answered before the app: Fetch's Request cannot carry it (building
 * one threw a 500 wherever a request was handed on at a normalised path). Node's parser refuses TRACK (400 above)
 * and closes a CONNECT itself.
 */
const notImplemented = (method: string): EarlyAnswer =>
  earlyAnswer(501, 'Not Implemented', 'method_not_implemented', `${method} is not supported by this server.`);

const internalError = (): EarlyAnswer =>
  earlyAnswer(500, 'Internal Server Error', 'internal_error', 'The server could not handle this request.');

/** The answer as raw bytes, for a socket Node's parser gave up on (no ServerResponse exists). */
function rawAnswer(answer: EarlyAnswer): string {
  return [
    `HTTP/1.1 ${answer.status} ${answer.statusText}`,
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(answer.body)}`,
    '',
    answer.body,
  ].join('\r\n');
}

const asResponse = (answer: EarlyAnswer): Response =>
  new Response(answer.body, { status: answer.status, headers: answer.headers });

/**
 * What Node's parser refuses, and a request not received in time. As Node's default: nothing is written once an
 * answer to the request has started (it would corrupt it), only the socket closed.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, timeoutMs: number): void {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) return void socket.destroy();
  const answer =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? headersTooLarge()
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? tooSlow(timeoutMs)
        : badRequest(`The request is not valid HTTP (${error.code ?? 'unreadable'})`);
  // Closed once the answer is written, not only half-closed: a client that never closes its side would otherwise
  // hold the socket (and a file descriptor) for good; one that never reads it loses it after a few seconds.
  socket.setTimeout(ANSWER_FLUSH_MS, () => socket.destroy());
  socket.end(rawAnswer(answer), () => socket.destroy());
}

/** How long the early answer of a refused request may take to leave before its socket is destroyed anyway. */
const ANSWER_FLUSH_MS = 5_000;

/**
 * @hono/node-server's error path: a request it cannot turn into a URL (a backslash in the path, a Host that is no
 * host) is a RequestError, answered 400 (its own answer is a bare 400); anything else is the app's own failure
 * (its onError threw), logged on one line.
 */
function answerRequestError(error: unknown): Response {
  if (error instanceof RequestError) {
    return asResponse(badRequest(`The request's URL or Host header cannot be read (${error.message})`));
  }
  logToStderr({ level: 'error', event: 'unhandled', detail: describeError(error) });
  return asResponse(internalError());
}

/** An early answer on a request Node has parsed (a ServerResponse exists). */
function writeAnswer(outgoing: ServerResponse, answer: EarlyAnswer): void {
  const length = { 'Content-Length': String(Buffer.byteLength(answer.body)) };
  outgoing.writeHead(answer.status, { ...answer.headers, ...length }).end(answer.body);
}

/** HTTP/1.1 requires Host (RFC 9112 3.2); Node's own refusal is a bare 400, so it is checked here instead. */
const lacksRequiredHost = (incoming: IncomingMessage): boolean =>
  incoming.httpVersion === '1.1' && incoming.headers.host === undefined;

export interface Listening {
  port: number;
  /** `http://host:port`, with IPv6 hosts bracketed. */
  url: string;
  /** The time a client has to send a whole request (Node's `server.requestTimeout`). */
  requestTimeoutMs: number;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Time a client has to send a whole request; default REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
}

export function listen(
  app: { fetch(request: Request, env?: unknown): Response | Promise<Response> },
  port = 0,
  hostname = '127.0.0.1',
  options: ListenOptions = {},
): Promise<Listening> {
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // @hono/node-server's serve() takes no error handler: its request listener does. `hostname` stands in for a
  // missing Host (HTTP/1.0), as serve() has it.
  const handle = getRequestListener(app.fetch, { hostname, errorHandler: answerRequestError });
  const server = createServer(
    {
      requestTimeout: requestTimeoutMs,
      // Node looks for late requests every 30 s by default, which would let one run up to twice the limit.
      connectionsCheckingInterval: Math.max(100, Math.ceil(requestTimeoutMs / 6)),
      requireHostHeader: false, // checked below, answered in JSON
    },
    (incoming, outgoing) => {
      if (incoming.method === 'TRACE') return void writeAnswer(outgoing, notImplemented('TRACE'));
      if (!lacksRequiredHost(incoming)) return void handle(incoming, outgoing);
      writeAnswer(outgoing, badRequest('An HTTP/1.1 request needs a Host header'));
    },
  );
  server.on('checkExpectation', (incoming: IncomingMessage, outgoing: ServerResponse) =>
    writeAnswer(outgoing, expectationFailed(String(incoming.headers.expect))),
  );
  return new Promise((resolve, reject) => {
    let closed: Promise<void> | null = null;
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
      answerClientError(error, socket, requestTimeoutMs),
    );
    server.once('error', reject);
    server.listen(port, hostname, () => {
      const info = server.address() as AddressInfo;
      resolve({
        port: info.port,
        url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${info.port}`,
        requestTimeoutMs: server.requestTimeout,
        // Idempotent: a test or a shutdown path may close what another already closed.
        close: () =>
          (closed ??= new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeIdleConnections(); // keep-alive sockets would hold close() open
          })),
      });
    });
  });
}
