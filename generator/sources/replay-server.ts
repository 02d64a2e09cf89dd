// A loopback HTTP server that plays venues: `/binance-spot/api/v3/...` is answered as https://api.binance.com would
// be. Tests and the benchmark route every venue here, so the live transport runs for real without the internet.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SourcesConfigInput } from './config.ts';
import type { Transport } from './transport.ts';
import { VENUE_BASE_URLS, VENUE_IDS } from './venues.ts';
import type { VenueId } from './venues.ts';

export interface ServedRequest {
  method: string;
  venue: string;
  /** Path and query below the venue prefix, e.g. "/api/v3/depth?symbol=BTCUSDT&limit=100". */
  path: string;
  body: string;
  /** ms since the server started. */
  at: number;
}

export interface ServedAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  /** Wait this long before answering (injected latency, timeouts). */
  delayMs?: number;
  /** Send only this many bytes of the body, then cut the connection. */
  cutAfterBytes?: number;
}

export type ServeHandler = (request: ServedRequest) => ServedAnswer | Promise<ServedAnswer>;

export interface ReplayServer {
  origin: string;
  requests: ServedRequest[];
  close(): Promise<void>;
}

export async function startReplayServer(handler: ServeHandler): Promise<ReplayServer> {
  const started = performance.now();
  const requests: ServedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const [, venue = '', ...rest] = (req.url ?? '/').split('/');
      const request: ServedRequest = {
        method: req.method ?? 'GET',
        venue,
        path: `/${rest.join('/')}`,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now() - started,
      };
      requests.push(request);
      let answer: ServedAnswer;
      try {
        answer = await handler(request);
      } catch (error) {
        answer = { status: 500, body: `replay server handler failed: ${(error as Error).message}` };
      }
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (res.destroyed) return;
      const body = Buffer.from(answer.body);
      res.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        'content-length': String(body.length),
        ...answer.headers,
      });
      if (answer.cutAfterBytes === undefined) res.end(body);
      else res.write(body.subarray(0, answer.cutAfterBytes), () => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Configuration that routes every venue to the server, each under its own prefix. */
export const venuesAt = (server: ReplayServer): NonNullable<SourcesConfigInput['venues']> =>
  Object.fromEntries(VENUE_IDS.map((venue) => [venue, { baseUrl: `${server.origin}/${venue}` }]));

/** Answers from a Transport (the simulator, a recording) behind the server, on the venue's canonical URL. */
export const transportHandler =
  (transport: Transport): ServeHandler =>
  async (request) => {
    const base = VENUE_BASE_URLS[request.venue as VenueId];
    if (!base) return { status: 404, body: 'unknown venue prefix' };
    const method = request.method === 'POST' ? 'POST' : 'GET';
    const response = await transport.fetch({
      url: base + request.path,
      method,
      body: method === 'POST' ? request.body : undefined,
    });
    return { status: response.status, headers: response.headers, body: response.body };
  };
