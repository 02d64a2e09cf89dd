// The three hosts run for real over one built site, for the tests that compare them: `emi serve` (the real CLI, with
// its development facilitator), Debian's nginx with the rendered recipe in front of the paywall worker, and the
// Cloudflare Worker in workerd (`wrangler dev`). Also the raw request those tests send (a path exactly as written).
// The site's folder holds dist/ (what is served), paid/ (the paid files) and a secret.txt that no host may serve.
import { request as httpRequest } from 'node:http';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import algosdk from 'algosdk';
import { expect } from 'vitest';
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import { FREE_RESOURCES } from '../../schemas/resources.ts';
import { uploadPaidFiles } from '../../deploy/cloudflare/run.ts';
import { renderNginxSite } from '../../deploy/nginx/render.ts';
import { hasNginx, startNginx } from '../../deploy/nginx/run.ts';
import { startDevFacilitator } from '../../paywall-worker/dev-facilitator/server.ts';
import { startPaywallServer } from '../../paywall-worker/server.ts';
import { createFsStorage } from '../../paywall-worker/storage-fs.ts';
import { freePort } from '../free-port.ts';
import { startEmi } from '../ops-cli.ts';
import { writePaidFixtures } from '../paywall-harness.ts';
import { startTestWorker } from './test-worker.ts';

/** The site's 404 page (dist/404.html). */
export const NOT_FOUND_PAGE = '<!doctype html><title>not found page</title>';

export interface Answer<Body = string> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Body;
}

/** One request with the path sent exactly as written (fetch would resolve `%2e%2e` or re-encode it), its body kept as sent. */
export function rawBytes(
  base: string,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer<Buffer>> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, path, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** {@link rawBytes} with the body read as UTF-8. */
export async function raw(
  base: string,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const answer = await rawBytes(base, path, method, headers, body);
  return { ...answer, body: answer.body.toString('utf8') };
}

/** One header of an answer, a repeated one joined as a client reads it. */
export const header = (answer: Answer<unknown>, name: string): string | undefined => {
  const value = answer.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** A free file's hint, counted down from its writing (schemas/delivery.ts freeCacheFor). */
const COUNTDOWN = /^max-age=(\d+)$/;

/** A cache hint with its counted-down seconds left out, for comparing answers asked a moment apart. */
export const withoutCountdown = (cache: string | null | undefined): string | null | undefined =>
  cache?.replace(COUNTDOWN, 'max-age=(counting)');

/**
 * Asserts that a later hint is the first one or the first counted down by one second (a tick may fall between the
 * two asks); never higher. Hints that count nothing down are left to the caller's comparison.
 */
export function expectCountedDownWithinATick(
  later: string | null | undefined,
  first: string | null | undefined,
  label: string,
): void {
  const left = (cache: string | null | undefined) => Number(COUNTDOWN.exec(cache ?? '')?.[1]);
  if (Number.isFinite(left(first))) expect(left(first) - left(later), label).toBeOneOf([0, 1]);
}

/**
 * Asserts that a later answer is what a client saw first: status, type, cache hint and body (left out where it says
 * when it was asked). A counted-down hint may have ticked between the two asks: its seconds are compared within one.
 */
export function expectSameAnswer(later: Answer, first: Answer, label: string, compareBody = true): void {
  const seen = (answer: Answer) => ({
    status: answer.status,
    type: header(answer, 'content-type'),
    cache: withoutCountdown(header(answer, 'cache-control')),
    body: compareBody ? answer.body : undefined,
  });
  expect(seen(later), label).toEqual(seen(first));
  expectCountedDownWithinATick(header(later, 'cache-control'), header(first, 'cache-control'), label);
}

/** Where a host's ports come from (told up front to nginx, wrangler and `emi serve`). */
export type Ports = () => Promise<number>;

export interface StartedHost {
  base: string;
  stop(): Promise<void>;
}

export interface NginxSiteOptions {
  /** nginx's own folder (prefix, logs, temp paths). */
  dir: string;
  /** The folder it serves. */
  siteRoot: string;
  port: number;
  paywallUpstream: string;
  /** Configuration put before the rendered server block in the http block (Debian's `gzip on;`). */
  before?: string;
  /** The path probed for a 200 before the site counts as served. */
  probePath?: string;
}

/** Debian's nginx with the rendered recipe on 127.0.0.1:`port`. */
export async function startNginxSite(options: NginxSiteOptions): Promise<StartedHost> {
  const base = `http://127.0.0.1:${options.port}`;
  const site = await renderNginxSite({
    root: options.siteRoot,
    listen: `127.0.0.1:${options.port}`,
    paywallUpstream: options.paywallUpstream,
  });
  const config = options.before === undefined ? site : `${options.before}\n${site}`;
  const nginx = await startNginx(options.dir, config, `${base}${options.probePath ?? '/'}`);
  return { base, stop: () => nginx.stop() };
}

/** A host with the paywall facilitator it settles with (it funds the test buyers). */
export interface Host extends StartedHost {
  facilitatorUrl: string;
}

interface HostSettings {
  root: string;
  payTo: string;
  facilitatorUrl: string;
  ports: Ports;
}

/** The real `emi serve` in `root`, its development facilitator on a free port, as the auditor ran it. */
async function startEmiServeHost(root: string, ports: Ports): Promise<Host> {
  const port = await ports();
  const args = [
    'serve',
    '--port',
    String(port),
    '--dev-facilitator-port',
    '0',
    '--dir',
    'dist',
    '--paid',
    'paid',
  ];
  const emi = startEmi(root, args, { EMI_STATE_DIR: join(root, 'var') });
  const stop = async () => {
    emi.stop();
    await emi.done;
  };
  const announced = /development facilitator on (http:\/\/[^\s)]+)/;
  try {
    await emi.waitFor(announced);
  } catch (error) {
    await stop();
    throw error;
  }
  return { base: `http://127.0.0.1:${port}`, facilitatorUrl: announced.exec(emi.output())?.[1] ?? '', stop };
}

/** nginx with the recipe in front of the paywall worker (Node), which sells the paid files. */
async function startNginxHost({ root, payTo, facilitatorUrl, ports }: HostSettings): Promise<Host> {
  const port = await ports();
  const worker = await startPaywallServer({
    port: 0,
    payTo,
    facilitatorUrl,
    indexerUrl: facilitatorUrl,
    baseUrl: `http://127.0.0.1:${port}`,
    storage: createFsStorage(join(root, 'paid')),
    allowSimulated: true, // the fixtures are the simulated examples
  });
  try {
    const nginx = await startNginxSite({
      dir: join(root, 'nginx'),
      siteRoot: join(root, 'dist'),
      port,
      paywallUpstream: new URL(worker.url).host,
    });
    const stop = async () => {
      await nginx.stop();
      await worker.close();
    };
    return { base: nginx.base, facilitatorUrl, stop };
  } catch (error) {
    await worker.close();
    throw error;
  }
}

/** The Cloudflare Worker under `wrangler dev`, the paid files uploaded to its local bucket. */
async function startWorkerHost({ root, payTo, facilitatorUrl, ports }: HostSettings): Promise<Host> {
  const persistTo = join(root, 'wrangler');
  await uploadPaidFiles(join(root, 'paid'), { persistTo });
  const worker = await startTestWorker({
    persistTo,
    assetsDir: join(root, 'dist'),
    payTo,
    facilitatorUrl,
    ports,
  });
  return { base: worker.url, facilitatorUrl, stop: () => worker.stop() };
}

export const HOSTS = ['emi serve', 'nginx', 'worker'] as const;
export type HostName = (typeof HOSTS)[number];

export interface RunningHosts {
  /** The host by name; throws when it did not start (nginx when it is absent). */
  host(name: HostName): Host;
  /** Stops every host, then the facilitator. */
  stop(): Promise<void>;
}

/**
 * Starts the three hosts over the site in `root` (nginx only where it is installed), the shared development
 * facilitator and its payee first. What started is stopped again when any host fails to start.
 */
export async function startHosts(root: string, ports: Ports = freePort): Promise<RunningHosts> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const stopOne of stops.splice(0).reverse()) await stopOne();
  };
  const hosts = new Map<HostName, Host>();
  const start = async (name: HostName, starting: () => Promise<Host>) => {
    const host = await starting();
    stops.push(() => host.stop());
    hosts.set(name, host);
  };
  try {
    const facilitator = await startDevFacilitator();
    stops.push(() => facilitator.close());
    const payTo = algosdk.generateAccount().addr.toString();
    facilitator.ledger.optIn(payTo);
    const settings: HostSettings = { root, payTo, facilitatorUrl: facilitator.url, ports };
    const started = await Promise.allSettled([
      start('emi serve', () => startEmiServeHost(root, ports)),
      ...(hasNginx() ? [start('nginx', () => startNginxHost(settings))] : []),
      start('worker', () => startWorkerHost(settings)),
    ]);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    host(name) {
      const found = hosts.get(name);
      if (!found) throw new Error(`${name} did not start`);
      return found;
    },
    stop,
  };
}

/**
 * A fresh folder (readable by nginx's workers) with the site the hosts serve: in dist/ the free files, every asset's
 * reasoning, the home, 404, docs and buyer pages, and `extra` (path: body); the paid fixtures in paid/; and
 * `secret` in secret.txt next to dist/.
 */
export async function writeHostsSite(
  prefix: string,
  secret: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const write = async (file: string, body: string) => {
    await mkdir(dirname(join(root, 'dist', file)), { recursive: true });
    await writeFile(join(root, 'dist', file), body);
  };
  try {
    await chmod(root, 0o755); // nginx workers run as another user when the master is root
    for (const resource of FREE_RESOURCES)
      await write(resource.file, JSON.stringify({ file: resource.file }));
    for (const asset of TRACKED_ASSETS) await write(`api/reasoning/${asset}.json`, JSON.stringify({ asset }));
    await write('index.html', '<!doctype html><title>home</title>');
    await write('404.html', NOT_FOUND_PAGE);
    await write('docs/index.html', '<!doctype html><title>docs</title>');
    await write('x402-buyer/index.html', '<!doctype html><title>buyer page</title>');
    for (const [file, body] of Object.entries(extra)) await write(file, body);
    await writeFile(join(root, 'secret.txt'), secret);
    await mkdir(join(root, 'paid'));
    await writePaidFixtures(join(root, 'paid'));
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return root;
}
