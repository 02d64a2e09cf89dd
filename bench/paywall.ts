// Benchmark: the x402 paywall on loopback. Requests per second of the unpaid 402 challenge against a bare Hono
// route on the same Node server stack (and, to show what confirming the file's version costs, of the same worker
// with each file's version read once), and latency of the paid path (settle, which verifies, through the development
// facilitator on its in-memory ledger, real ed25519 signatures). Bounded request counts; loopback only.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Agent, request as httpRequest } from 'node:http';
import { Hono } from 'hono';
import algosdk from 'algosdk';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import type { PaidFileStorage } from '../paywall-worker/storage.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { buyWithDevWallet, createDevBuyer } from '../paywall-worker/buy.ts';
import { inTurns } from './turns.ts';

const REQUESTS = Number(process.env.BENCH_PAYWALL_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_PAYWALL_CONCURRENCY ?? 16);
const PAID_REQUESTS = Number(process.env.BENCH_PAYWALL_PAID ?? 200);
const PAID_WARM_UP = 20;
const ROUNDS = Number(process.env.BENCH_PAYWALL_ROUNDS ?? 7);
const BUYERS = Number(process.env.BENCH_PAYWALL_BUYERS ?? 50);

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

interface Row {
  name: string;
  requests: number;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
}

/** One GET over a keep-alive agent (lighter than fetch, so the client eats less of the shared CPU). */
function get(agent: Agent, url: URL): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end();
  });
}

/** `total` GETs from `concurrency` loops; every answer must have the expected status. */
async function load(
  name: string,
  url: string,
  status: number,
  total = REQUESTS,
  concurrency = CONCURRENCY,
): Promise<Row> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next += 1;
      const start = performance.now();
      const got = await get(agent, target);
      latencies.push(performance.now() - start);
      if (got !== status) throw new Error(`${name}: expected ${status}, got ${got}`);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: total,
    concurrency,
    rps: total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/** Runs the two loads as ROUNDS pairs (bench/turns.ts) and keeps the pair whose ratio (b's req/s over a's) is the median. */
async function compare(
  a: () => Promise<Row>,
  b: () => Promise<Row>,
): Promise<{ pair: [Row, Row]; ratios: number[] }> {
  const pairs: Array<{ pair: [Row, Row]; ratio: number }> = [];
  for (let i = 0; i < ROUNDS; i++) {
    const pair = await inTurns(i, a, b);
    pairs.push({ pair, ratio: pair[1].rps / pair[0].rps });
  }
  pairs.sort((x, y) => x.ratio - y.ratio);
  const median = pairs[Math.floor(pairs.length / 2)]!;
  return { pair: median.pair, ratios: pairs.map((p) => p.ratio) };
}

/**
 * The same store with each file's version read once and never again. Not something the worker does: it would
 * offer a challenge for a file replaced or deleted any time ago. It is measured beside the real store to show what
 * confirming the version (one `stat` per file and millisecond) costs.
 */
function versionReadOnce(storage: PaidFileStorage): PaidFileStorage {
  const versions = new Map<string, string | null>();
  return {
    ...storage,
    versionNow(file) {
      if (!versions.has(file)) versions.set(file, storage.versionNow!(file));
      return versions.get(file)!;
    },
  };
}

/** What `npm run bench` keeps from this benchmark. */
export interface PaywallSummary {
  /** Requests per second of the unpaid 402, as a share of the bare route answering the same bytes. */
  challengeShare: number;
  challengeRps: number;
  bareRps: number;
  paidP50: number;
  paidP99: number;
}

export async function runPaywallBench(): Promise<PaywallSummary> {
  const paidDir = await mkdtemp(join(tmpdir(), 'emi-bench-paywall-'));
  const updated = new Date().toISOString(); // fresh for the whole run: the worker refuses stale files
  for (const r of PAID_RESOURCES) {
    await writeFile(join(paidDir, r.file), JSON.stringify({ ...(PAID_EXAMPLES[r.id] as object), updated }));
  }
  const facilitator = await startDevFacilitator();
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
  const settings = {
    port: 0,
    payTo,
    facilitatorUrl: facilitator.url,
    baseUrl: 'http://127.0.0.1:8080',
    allowSimulated: true,
    maxDataAgeSeconds: 3600,
    indexerUrl: facilitator.url,
  };
  const worker = await startPaywallServer({ ...settings, storage: createFsStorage(paidDir) });
  const statFree = await startPaywallServer({
    ...settings,
    storage: versionReadOnce(createFsStorage(paidDir)),
  });
  const resource = PAID_RESOURCES[0]!;
  const paidUrl = `${worker.url}${resource.path}`;
  const statFreeUrl = `${statFree.url}${resource.path}`;
  // The baseline answers the very same bytes (the 402's headers and body, captured once) from a bare Hono route,
  // so the comparison measures the paywall's own work per request, not the size of a 402.
  const sample = await fetch(paidUrl);
  const sampleBody = await sample.text();
  const sampleHeaders = Object.fromEntries(sample.headers);
  const bare = new Hono().get('/bare', (c) => c.body(sampleBody, 402, sampleHeaders));
  const bareServer = await listen(bare, 0, '127.0.0.1');

  try {
    await load('warm-up', paidUrl, 402, 200); // offers are built on the first request
    await load('warm-up', `http://127.0.0.1:${bareServer.port}/bare`, 402, 200);
    await load('warm-up', statFreeUrl, 402, 200);
    const bareLoad = () =>
      load('bare Hono route (the same 402 bytes)', `http://127.0.0.1:${bareServer.port}/bare`, 402);
    const { pair, ratios } = await compare(bareLoad, () =>
      load('402 challenge (unpaid request)', paidUrl, 402),
    );
    const rows: Row[] = [...pair];
    const withoutStat = await compare(bareLoad, () =>
      load('402 challenge, version read once', statFreeUrl, 402),
    );

    // Paid path: one payment at a time, each signed just before it is sent; only the paid request is timed.
    const { client } = await createDevBuyer(
      facilitator.url,
      String((PAID_WARM_UP + PAID_REQUESTS) * Number(resource.amountAtomic) * 2),
    );
    let signing = 0;
    /** One whole purchase; returns the time of the paid request alone. */
    const pay = async (i: number): Promise<number> => {
      const challenge = await fetch(paidUrl);
      const signStart = performance.now();
      const payload = await client.createPaymentPayload(
        decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!),
      );
      signing += performance.now() - signStart;
      const start = performance.now();
      const response = await fetch(paidUrl, {
        headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) },
      });
      await response.arrayBuffer();
      const ms = performance.now() - start;
      if (response.status !== 200) throw new Error(`paid request ${i}: ${response.status}`);
      return ms;
    };
    // Untimed warm-up payments first, as the 402 loads have theirs: the first payments of a process compile the
    // paid path (worker, facilitator, ledger; 60-150 ms for the very first), and three of them would be the p99 of
    // 200, which would then measure the process's start rather than the paid path of a running server.
    for (let i = 0; i < PAID_WARM_UP; i++) await pay(i);
    signing = 0;
    const latencies: number[] = [];
    const started = performance.now();
    for (let i = 0; i < PAID_REQUESTS; i++) latencies.push(await pay(i));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    rows.push({
      name: `paid path (settle, which verifies; dev facilitator; after ${PAID_WARM_UP} untimed)`,
      requests: PAID_REQUESTS,
      concurrency: 1,
      rps: PAID_REQUESTS / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    });

    console.log(`x402 paywall on loopback (Node ${process.version}); ${resource.path}`);
    console.log('| request | requests | concurrency | req/s | p50 (ms) | p99 (ms) |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.requests} | ${r.concurrency} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`,
      );
    }
    const share = ([a, b]: [Row, Row]) => `${((b.rps / a.rps) * 100).toFixed(0)} %`;
    const percents = (all: number[]) => all.map((r) => (r * 100).toFixed(0)).join(', ');
    console.log(
      `402 challenge throughput: ${share(pair)} of the bare route ` +
        `(the median of ${ratios.length} paired rounds, shown above; all rounds: ${percents(ratios)} %). ` +
        `Paid req/s includes fetching a challenge and signing (${(signing / PAID_REQUESTS).toFixed(1)} ms per payment).`,
    );
    console.log(
      `What confirming the file's version costs (one stat per file and millisecond): the same worker with each ` +
        `paid file's version read once (which the worker never does: it would offer a challenge for a replaced or ` +
        `deleted file) answered at ` +
        `${share(withoutStat.pair)} of the bare route, against ${share(pair)} above (medians of ${ROUNDS} ` +
        `paired rounds; all rounds: ${percents(withoutStat.ratios)} %).`,
    );
    console.log(
      `ledger: ${facilitator.ledger.transactionCount} transactions (fee + payment per group) settled`,
    );

    // Header sizes: the challenge of each path and the signature the official client builds from it.
    console.log('\n| paid path | PAYMENT-REQUIRED (bytes) | PAYMENT-SIGNATURE (bytes) | limit |');
    console.log('|---|---:|---:|---:|');
    for (const r of PAID_RESOURCES) {
      const challenge = await fetch(`${worker.url}${r.path}`);
      const required = challenge.headers.get('PAYMENT-REQUIRED')!;
      const payload = await client.createPaymentPayload(decodePaymentRequiredHeader(required));
      const signature = encodePaymentSignatureHeader(payload);
      console.log(`| ${r.path} | ${required.length} | ${signature.length} | 4096 |`);
    }

    // Concurrent buyers: each funds a fresh wallet, fetches the challenge, signs and pays with @x402/fetch.
    const buyStarted = performance.now();
    const buys = await Promise.all(
      Array.from({ length: BUYERS }, async () => {
        const start = performance.now();
        const result = await buyWithDevWallet({ url: paidUrl, facilitatorUrl: facilitator.url });
        return { ok: result.status === 200, ms: performance.now() - start };
      }),
    );
    const buyMs = buys.map((b) => b.ms).sort((a, b) => a - b);
    console.log(
      `\n${BUYERS} concurrent buyers (@x402/fetch, whole purchase incl. funding): ` +
        `${buys.filter((b) => b.ok).length}/${BUYERS} served, p50 ${percentile(buyMs, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(buyMs, 99).toFixed(0)} ms, all done in ${(performance.now() - buyStarted).toFixed(0)} ms`,
    );
    return {
      challengeShare: rows[1]!.rps / rows[0]!.rps,
      challengeRps: rows[1]!.rps,
      bareRps: rows[0]!.rps,
      paidP50: rows[2]!.p50,
      paidP99: rows[2]!.p99,
    };
  } finally {
    await bareServer.close();
    await statFree.close();
    await worker.close();
    await facilitator.close();
    await rm(paidDir, { recursive: true, force: true });
  }
}

// Run on its own (`node bin/run-ts.js bench/paywall.ts`), or imported by bench/run.ts.
if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url)
  await runPaywallBench();
