// Benchmark: a full live-shaped collection (live HTTP transport, venue adapters, fallback plan) of the 7 tracked
// assets against a loopback replay server that answers from the simulator after a seeded 50-300 ms delay per
// request. Wall time with the configured concurrency against a sequential run. Loopback only; bounded (~15 s).
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { DEFAULT_CONCURRENCY } from '../generator/sources/collect.ts';
import { DEFAULT_HTTP } from '../generator/sources/config.ts';
import { collectLiveMarket } from '../generator/sources/live.ts';
import { startReplayServer, transportHandler, venuesAt } from '../generator/sources/replay-server.ts';
import { streamKey, uniform } from '../generator/sources/simulator/random.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';

const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 5);
const SEED = Number(process.env.BENCH_SEED ?? 7);
const [MIN_MS, MAX_MS] = [50, 300];

/** The same request always waits the same time (a hash of its path picks the uniform). */
function latencyOf(path: string): number {
  let hash = 0;
  for (const char of path) hash = (hash * 31 + char.charCodeAt(0)) | 0;
  return Math.round(MIN_MS + uniform(streamKey(SEED, 'latency'), hash >>> 0) * (MAX_MS - MIN_MS));
}

const simulator = transportHandler(createSimulatedTransport({ seed: SEED, asOf: AS_OF }));
const server = await startReplayServer(async (request) => ({
  ...(await simulator(request)),
  delayMs: latencyOf(`/${request.venue}${request.path}${request.body}`),
}));

async function run(label: string, config: SourcesConfigInput) {
  server.requests.length = 0;
  const started = performance.now();
  const snapshot = await collectLiveMarket({
    asOf: AS_OF,
    symbols: TRACKED_ASSETS,
    env: {},
    config: { ...config, venues: venuesAt(server), order: SIMULATOR_ORDER },
  });
  const wallMs = performance.now() - started;
  const injected = server.requests.reduce((sum, r) => sum + latencyOf(`/${r.venue}${r.path}${r.body}`), 0);
  if (snapshot.issues.length > 0)
    throw new Error(`${label}: ${snapshot.issues.length} issue(s), first: ${snapshot.issues[0]?.message}`);
  return { label, requests: server.requests.length, injected, wallMs };
}

try {
  const rows = [
    await run(
      `configured (${DEFAULT_CONCURRENCY} in flight, ${DEFAULT_HTTP.concurrency} per host, ${DEFAULT_HTTP.requestsPerSecond}/s per host)`,
      {},
    ),
    await run('configured, without the per-host rate budget', { http: { requestsPerSecond: 1000 } }),
    await run('sequential (1 in flight)', { concurrency: 1, http: { concurrency: 1 } }),
  ];
  const sequential = rows.at(-1)!.wallMs;
  console.log(
    `live-shaped collection of ${TRACKED_ASSETS.length} assets, loopback, ${MIN_MS}-${MAX_MS} ms per request (seed ${SEED})`,
  );
  console.log('| run | requests | injected latency, sum (ms) | wall time (ms) | speed-up |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${r.requests} | ${r.injected} | ${r.wallMs.toFixed(0)} | ${(sequential / r.wallMs).toFixed(1)}x |`,
    );
  }
} finally {
  await server.close();
}
