// The simulated venues on a worker thread. Real venues compute their answers elsewhere while a run parses what came
// back; on their own thread the simulated ones do the same, so a simulated run uses a second core and its critical
// path is its own parsing, as in a live run. The answers are the in-process simulator's, byte for byte. One thread
// serves the whole process (a scheduler's cycles keep it warm); it never keeps the process alive when idle. This
// module stays light (no simulator, no zod) so a command can start the thread before it loads the rest.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Transport, TransportRequest, TransportResponse } from '../transport.ts';
import type { SimulatedTransportOptions } from './transport.ts';

/** Main thread to worker: open a market (once per thread), then ask it requests. */
export type VenueThreadMessage =
  | { kind: 'open'; market: number; options: SimulatedTransportOptions }
  | { kind: 'fetch'; id: number; market: number; request: TransportRequest };

export interface VenueThreadReply {
  id: number;
  response?: TransportResponse;
  error?: string;
}

/** The compiled worker (bin/build.js); from the sources without a build, the simulator runs in-process. */
export const VENUE_THREAD_FILE = fileURLToPath(
  new URL('../../../build/simulated-venues-worker.js', import.meta.url),
);

interface Pending {
  resolve: (response: TransportResponse) => void;
  reject: (error: Error) => void;
}

interface VenueThread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Markets this thread has opened. */
  opened: Set<number>;
}

let thread: VenueThread | null = null;
let nextId = 1;

function startThread(): VenueThread {
  const worker = new Worker(VENUE_THREAD_FILE);
  const started: VenueThread = { worker, pending: new Map(), opened: new Set() };
  worker.unref();
  const fail = (error: Error) => {
    if (thread === started) thread = null; // the next request starts a fresh thread
    for (const { reject } of started.pending.values()) reject(error);
    started.pending.clear();
  };
  worker.on('message', ({ id, response, error }: VenueThreadReply) => {
    const waiting = started.pending.get(id);
    if (!waiting) return;
    started.pending.delete(id);
    if (started.pending.size === 0) worker.unref();
    if (response) waiting.resolve(response);
    else waiting.reject(new Error(error ?? 'the simulated venue gave no answer'));
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the simulated venues' thread stopped (exit code ${code})`)));
  return started;
}

function ask(
  market: number,
  options: SimulatedTransportOptions,
  request: TransportRequest,
): Promise<TransportResponse> {
  thread ??= startThread();
  const { worker, pending, opened } = thread;
  if (!opened.has(market)) {
    opened.add(market);
    worker.postMessage({ kind: 'open', market, options } satisfies VenueThreadMessage);
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    // Kept alive while an answer is awaited, so a run never ends early waiting on an idle thread.
    if (pending.size === 0) worker.ref();
    pending.set(id, { resolve, reject });
    worker.postMessage({ kind: 'fetch', id, market, request } satisfies VenueThreadMessage);
  });
}

/** Stops the thread (tests; a long-running process simply lets it idle). Awaited answers fail. */
export async function stopVenueThread(): Promise<void> {
  const running = thread;
  thread = null;
  await running?.worker.terminate();
}

/** A thread pays only with a second core to run on, and needs the compiled worker. */
const threadWanted = (): boolean => availableParallelism() > 1 && existsSync(VENUE_THREAD_FILE);

/**
 * Starts the thread ahead of the first request, so that it loads its code while this thread loads the rest of
 * the run. Does nothing without the compiled worker.
 */
export function startVenueThread(): void {
  if (threadWanted()) thread ??= startThread();
}

/** The simulated venues on their thread when it pays (threadWanted), else in this thread. */
export async function createThreadedSimulatedTransport(
  options: SimulatedTransportOptions,
): Promise<Transport> {
  if (!threadWanted()) return (await import('./transport.ts')).createSimulatedTransport(options);
  const market = nextId++;
  const copy = { ...options, symbols: options.symbols ? [...options.symbols] : undefined };
  return {
    mode: 'simulated',
    async fetch(request: TransportRequest, signal?: AbortSignal): Promise<TransportResponse> {
      signal?.throwIfAborted();
      return ask(market, copy, { url: request.url, method: request.method, body: request.body });
    },
  };
}
