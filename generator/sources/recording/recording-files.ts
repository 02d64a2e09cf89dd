// The layout of a recording folder: one JSON file per distinct request, named from a hash of method, URL and body,
// and an index.json that lists them with the run's as-of time (a replay must ask the same URLs).
import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { TransportRequest } from '../transport.ts';

export const INDEX_FILE = 'index.json';
export const RECORDING_VERSION = 1;

/** The identity of a request: method, URL and body, exactly as the adapters built them. */
export const requestKey = (request: TransportRequest): string =>
  `${request.method ?? 'GET'} ${request.url}${request.body === undefined ? '' : `\n${request.body}`}`;

/** e.g. "api.binance.com-GET-3f2a9c1d0b7e4a55.json": readable host, stable hash. */
export function recordFileName(request: TransportRequest): string {
  const hash = createHash('sha256').update(requestKey(request)).digest('hex').slice(0, 16);
  return `${new URL(request.url).host}-${request.method ?? 'GET'}-${hash}.json`;
}

export const RecordedRequest = z.object({
  method: z.enum(['GET', 'POST']),
  url: z.url(),
  body: z.string().optional(),
});

/** What one file holds: the answer, or the transport error a live call ended with (replayed as the same error). */
export const RecordedExchange = z.object({
  request: RecordedRequest,
  response: z
    .object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: z.string() })
    .nullable(),
  error: z.string().nullable(),
});
export type RecordedExchange = z.infer<typeof RecordedExchange>;

export const RecordingIndex = z.object({
  version: z.literal(RECORDING_VERSION),
  /** The recorded run's as-of time: replays describe this instant. */
  asOf: z.iso.datetime(),
  entries: z.array(RecordedRequest.extend({ file: z.string(), status: z.number().int().nullable() })),
});
export type RecordingIndex = z.infer<typeof RecordingIndex>;
