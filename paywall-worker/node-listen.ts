// Starts a Hono app on a Node HTTP server and resolves once it listens (rejects on EADDRINUSE and the like).
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

export interface Listening {
  port: number;
  close(): Promise<void>;
}

export function listen(app: Hono, port: number, hostname: string): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) =>
      resolve({
        port: info.port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            (server as Server).closeIdleConnections?.(); // keep-alive sockets would hold close() open
          }),
      }),
    ) as Server;
    server.once('error', reject);
  });
}
