// A free loopback port for a server that must be told its port up front (nginx, wrangler, netlify dev).
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Ports handed out once each from `first`..`last` (free when handed out), for a suite kept to its own range so that
 * suites running side by side never race for one port.
 */
export function portsInRange(first: number, last: number): () => Promise<number> {
  let next = first;
  return async () => {
    while (next <= last) {
      const port = next++;
      const server = createServer();
      const free = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (free) {
        await new Promise((resolve) => server.close(resolve));
        return port;
      }
    }
    throw new Error(`no free port left in ${first}-${last}`);
  };
}
