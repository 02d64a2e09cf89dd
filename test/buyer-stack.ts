// The local stack for the buyer page's browser tests, all on loopback: one origin that serves the freshly bundled
// page, its config.json, the real paywall app (development facilitator, in-memory ledger) on the paid paths, and the
// facilitator's faucet and params call proxied under /x402-dev-facilitator/ (same origin, as `emi serve` should).
// Every request that reaches the report path is recorded; a hook can replace its answer, which turns the stack
// into a test double (tampered challenges, an unavailable facilitator, a refused settlement).
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { bundleBuyerPage } from '../generator/buyer/bundle.ts';
import { decodeBase64Json, encodeBase64Json } from '../generator/buyer/x402-codec.ts';
import { HUMAN_REPORT_PATH } from '../generator/buyer/human-report-terms.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { AtlasHumanReport } from '../schemas/paid/atlas-human-report.ts';
import { humanReportFixture } from './buyer-report-fixture.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'buyer');
const DEV_PREFIX = '/x402-dev-facilitator';
const PAGE_FILES = ['index.html', 'buyer.css'];

export interface BuyerConfigJson {
  merchantAddress: string;
  network: string;
  facilitatorMode: 'development' | 'production';
  devFundUrl?: string;
  algodUrl?: string;
}

/** Replaces the answer of the report path; `real` asks the real paywall. */
export type ReportHook = (request: Request, real: () => Promise<Response>) => Promise<Response>;

export interface BuyerStack {
  origin: string;
  pageUrl: string;
  payTo: string;
  facilitator: DevFacilitator;
  /** PAYMENT-SIGNATURE values of every request that reached the report path, in order. */
  signatures: string[];
  hook: ReportHook | null;
  /** Writes config.json (null removes it). */
  setConfig(config: BuyerConfigJson | null): Promise<void>;
  developmentConfig(): BuyerConfigJson;
  close(): Promise<void>;
}

async function buildSiteRoot(root: string): Promise<void> {
  const pageDir = join(root, 'x402-buyer');
  await mkdir(pageDir, { recursive: true });
  const source = join(import.meta.dirname, '..', 'site', 'x402-buyer');
  for (const file of PAGE_FILES) await copyFile(join(source, file), join(pageDir, file));
  await bundleBuyerPage({ outFile: join(pageDir, 'app.js'), minify: false });
}

async function writePaidFiles(dir: string): Promise<void> {
  // The paywall answers 503 for an invalid paid file: say so here rather than as a puzzling browser timeout.
  const check = AtlasHumanReport.safeParse(humanReportFixture);
  if (!check.success)
    throw new Error(`buyer-report-fixture.ts no longer fits the schema: ${check.error.message}`);
  const updated = new Date().toISOString();
  for (const resource of PAID_RESOURCES) {
    const body = resource.id === 'atlasHumanReport' ? humanReportFixture : PAID_EXAMPLES[resource.id];
    await writeFile(join(dir, resource.file), JSON.stringify({ ...(body as object), updated }));
  }
}

/** Forwards a request to the development facilitator over real HTTP (its faucet only answers loopback peers). */
async function forward(request: Request, target: string): Promise<Response> {
  const init: RequestInit = { method: request.method, headers: { 'Content-Type': 'application/json' } };
  if (request.method === 'POST') init.body = await request.text();
  const answer = await fetch(target, init);
  return new Response(await answer.text(), {
    status: answer.status,
    headers: { 'Content-Type': 'application/json' },
  });
}

export async function startBuyerStack(): Promise<BuyerStack> {
  const root = await mkdtemp(join(tmpdir(), 'emi-buyer-site-'));
  const paidDir = await mkdtemp(join(tmpdir(), 'emi-buyer-paid-'));
  await Promise.all([buildSiteRoot(root), writePaidFiles(paidDir)]);
  const facilitator = await startDevFacilitator({ port: 0 });
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);

  let paywall: Hono | null = null; // created once the origin (its baseUrl) is known
  const preview = createPreviewApp({
    root,
    paywall: { fetch: (request) => (paywall as Hono).fetch(request) },
  });
  const app = new Hono();
  const stack = { signatures: [] as string[], hook: null as ReportHook | null };

  app.all(`${DEV_PREFIX}/*`, (c) =>
    forward(c.req.raw, facilitator.url + c.req.path.slice(DEV_PREFIX.length)),
  );
  app.all(HUMAN_REPORT_PATH, (c) => {
    const signature = c.req.header('PAYMENT-SIGNATURE');
    if (signature) stack.signatures.push(signature);
    const real = async () => preview.fetch(c.req.raw.clone());
    return stack.hook ? stack.hook(c.req.raw, real) : real();
  });
  app.all('*', (c) => preview.fetch(c.req.raw));

  const server = await listen(app, 0);
  paywall = createPaywallApp({
    payTo,
    facilitatorUrl: facilitator.url,
    baseUrl: server.url,
    storage: createFsStorage(paidDir),
    allowSimulated: true, // the report fixture is the simulated example
    maxDataAgeSeconds: 3600, // the files are written once for the whole browser suite
    indexerUrl: facilitator.url,
  });
  const configFile = join(root, 'x402-buyer', 'config.json');

  return Object.assign(stack, {
    origin: server.url,
    pageUrl: `${server.url}/x402-buyer/`,
    payTo,
    facilitator,
    async setConfig(config: BuyerConfigJson | null) {
      if (config) await writeFile(configFile, JSON.stringify(config));
      else await rm(configFile, { force: true });
    },
    developmentConfig: (): BuyerConfigJson => ({
      merchantAddress: payTo,
      network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
      facilitatorMode: 'development',
      devFundUrl: `${DEV_PREFIX}/dev/fund`,
    }),
    async close() {
      await server.close();
      await facilitator.close();
      await rm(root, { recursive: true, force: true });
      await rm(paidDir, { recursive: true, force: true });
    },
  });
}

/** A 402 like the real one, with its PaymentRequired (header and body alike) changed by `mutate`. */
export async function tamperedChallenge(
  real: Response,
  mutate: (accepted: Record<string, unknown>) => void,
  options: { dropHeader?: boolean } = {},
): Promise<Response> {
  const paymentRequired = decodeBase64Json(real.headers.get('PAYMENT-REQUIRED') ?? '') as {
    accepts: Record<string, unknown>[];
  };
  const body = (await real.json()) as { accepts: Record<string, unknown>[] };
  for (const entry of [...paymentRequired.accepts, ...body.accepts]) mutate(entry);
  const headers = new Headers(real.headers);
  if (options.dropHeader) headers.delete('PAYMENT-REQUIRED');
  else headers.set('PAYMENT-REQUIRED', encodeBase64Json(paymentRequired));
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: 402, headers });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A fresh start for one buyer-page test: the stack's recorded signatures, hook and config reset, and a browser
 * context that never reaches the internet (anything off the stack's origin is cut).
 */
export async function freshBuyerContext(
  stack: BuyerStack,
  browser: Browser,
  options: BrowserContextOptions,
): Promise<BrowserContext> {
  stack.signatures.length = 0;
  stack.hook = null;
  await stack.setConfig(stack.developmentConfig());
  const context = await browser.newContext(options);
  await context.route('**/*', (route) =>
    route.request().url().startsWith(stack.origin) ? route.continue() : route.abort(),
  );
  return context;
}
