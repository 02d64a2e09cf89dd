// The worker side of venue-thread.ts: answers venue requests from the in-process simulator of each market it opened.
import { parentPort } from 'node:worker_threads';
import type { Transport } from '../transport.ts';
import { createSimulatedTransport } from './transport.ts';
import type { VenueThreadMessage, VenueThreadReply } from './venue-thread.ts';

/** Markets kept: a long-running process asks about one as-of at a time, tests may interleave a few. */
const KEPT_MARKETS = 4;
const markets = new Map<number, Transport>();

parentPort?.on('message', (message: VenueThreadMessage) => {
  if (message.kind === 'open') {
    markets.set(message.market, createSimulatedTransport(message.options));
    for (const old of markets.keys()) if (markets.size > KEPT_MARKETS) markets.delete(old);
    return;
  }
  const reply = (body: Omit<VenueThreadReply, 'id'>) => parentPort?.postMessage({ id: message.id, ...body });
  const transport = markets.get(message.market);
  if (!transport) return reply({ error: 'the simulated market was closed' });
  transport.fetch(message.request).then(
    (response) => reply({ response }),
    (error: Error) => reply({ error: error.message }),
  );
});
