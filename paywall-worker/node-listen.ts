// The project's one way to put a web-standard app on a Node HTTP server: resolves once it listens (rejects on
// EADDRINUSE and the like), and closes without waiting for idle keep-alive sockets.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';

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
    server.once('error', reject);
  });
}
