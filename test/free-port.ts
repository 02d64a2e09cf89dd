// A free loopback port for a server that must be told its port up front (nginx, wrangler, netlify dev).
import { createServer } from 'node:net';

/** Whether a loopback port can be listened on now. */
function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Ports from `first`..`last` that are free when handed out, in turn from `start`. Once handed out, a port comes
 * round again only if `cycle` (a closed server's port is free again); it fails after a whole round found none free.
 */
function portsFrom(first: number, last: number, start: number, cycle: boolean): () => Promise<number> {
  const size = last - first + 1;
  let handedOut = 0;
  return async () => {
    for (let busy = 0; busy < size && (cycle || handedOut < size); busy++) {
      const port = first + ((start - first + handedOut++) % size);
      if (await isFree(port)) return port;
    }
    throw new Error(`no free port left in ${first}-${last}`);
  };
}

/**
 * Ports handed out once each from `first`..`last` (free when handed out), for a suite kept to its own range so that
 * suites running side by side never race for one port.
 */
export const portsInRange = (first: number, last: number): (() => Promise<number>) =>
  portsFrom(first, last, first, false);

/**
 * Below the kernel's ephemeral range (32768 and up on Linux): a port the OS hands out for listen(0) can be taken by
 * any outgoing connection between the check and a slow server's start (netlify dev once lost its port so). Each
 * test worker (VITEST_POOL_ID) has a slice of its own, walked from a random place, so two workers never hand out one
 * port and a second run on the machine rarely meets the first. The suites' own ranges (portsInRange) lie below 21000.
 */
const SLICES = { first: 21_000, size: 1_000, count: 11 };
const worker = Number(process.env.VITEST_POOL_ID ?? 1);
const slice = SLICES.first + ((worker - 1) % SLICES.count) * SLICES.size;
export const freePort: () => Promise<number> = portsFrom(
  slice,
  slice + SLICES.size - 1,
  slice + Math.floor(Math.random() * SLICES.size),
  true,
);
