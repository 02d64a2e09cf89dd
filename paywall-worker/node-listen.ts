// The project's one way to put a web-standard app on a Node HTTP server: resolves once it listens (rejects on
// EADDRINUSE and the like), closes without waiting for idle keep-alive sockets, and answers a request whose headers
// Node refuses to parse with a JSON error a browser on another origin can read.
import type { AddressInfo, Socket } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { CORS_HEADERS, JSON_TYPE, NO_STORE } from '../schemas/delivery.ts';
import { errorBody } from './core/decide.ts';
import { API_SECURITY_HEADERS } from './security-headers.ts';

/** Node's limit on a request's headers (`--max-http-header-size`; 16 KiB unless changed). */
const HEADER_LIMIT_KIB = 16;

/**
 * The raw answer to headers over Node's limit. Node's own is a bare 431 without CORS headers, which a browser
 * reports as a network error; this one names the limit in the paywall's error shape, with the API security headers
 * of the worker's other answers.
 */
function headersTooLarge(): string {
  const body = JSON.stringify(
    errorBody(
      431,
      'request_headers_too_large',
      `The request's headers exceed this server's ${HEADER_LIMIT_KIB} KiB limit (an x402 PAYMENT-SIGNATURE is ` +
        'about 4 KB); nothing was verified or settled.',
      null,
    ),
  );
  const headers = {
    ...CORS_HEADERS,
    ...API_SECURITY_HEADERS,
    'Content-Type': JSON_TYPE,
    'Cache-Control': NO_STORE,
    Connection: 'close',
  };
  return [
    'HTTP/1.1 431 Request Header Fields Too Large',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/** Node's default for every other parse error: a bare 400 (408 on a header timeout), then the socket is closed. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) return void socket.destroy();
  if (error.code === 'HPE_HEADER_OVERFLOW') return void socket.end(headersTooLarge());
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
}

export interface Listening {
  port: number;
  /** `http://host:port`, with IPv6 hosts bracketed. */
  url: string;
  close(): Promise<void>;
}

export function listen(
  app: { fetch(request: Request, env?: unknown): Response | Promise<Response> },
  port = 0,
  hostname = '127.0.0.1',
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    let closed: Promise<void> | null = null;
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) =>
      resolve({
        port: info.port,
        url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${info.port}`,
        // Idempotent: a test or a shutdown path may close what another already closed.
        close: () =>
          (closed ??= new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeIdleConnections(); // keep-alive sockets would hold close() open
          })),
      }),
    ) as Server;
    server.on('clientError', answerClientError);
    server.once('error', reject);
  });
}
