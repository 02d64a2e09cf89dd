// The paywall as the local stack runs it: with a configured facilitator and payee, or, when no facilitator URL is
// configured, with the development facilitator on loopback (and a throwaway development payee if none is set).
import algosdk from 'algosdk';
import type { Hono } from 'hono';
import { createPaywallApp } from './app.ts';
import { PaywallConfigError } from './config.ts';
import { DEV_FACILITATOR_PORT, startDevFacilitator } from './dev-facilitator/server.ts';
import type { DevFacilitator } from './dev-facilitator/server.ts';
import { createFsStorage } from './storage-fs.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { readTextFrom } from '../mcp/published.ts';
import { createMcpServer, fetchPaidThrough } from '../mcp/server.ts';

export interface LocalPaywallOptions {
  paidDir: string;
  baseUrl: string;
  payTo?: string;
  facilitatorUrl?: string;
  facilitatorTimeoutMs?: number;
  /** Port of the development facilitator when one is started; default 4021, 0 for any free port. */
  devFacilitatorPort?: number;
  /** Sell simulated or replayed data; default: only with the development facilitator (test money). */
  allowSimulated?: boolean;
  maxDataAgeSeconds?: number;
  /** Indexer API for reconciling lost settle answers; default the development facilitator, or a public one. */
  indexerUrl?: string;
  /** Built site folder: when set, `mcp` answers the MCP endpoint over this site and this paywall. */
  siteDir?: string;
}

export interface LocalPaywall {
  app: Hono;
  payTo: string;
  facilitatorUrl: string;
  /** The development facilitator, when one was started. */
  devFacilitator: DevFacilitator | null;
  /** The `/mcp` streamable HTTP route (when `siteDir` was given): paid tools go through `app` itself. */
  mcp: Hono | null;
  /** One line per fact worth printing at start. */
  describe(): string[];
  close(): Promise<void>;
}

type PaywallEnv = Pick<
  LocalPaywallOptions,
  'payTo' | 'facilitatorUrl' | 'allowSimulated' | 'maxDataAgeSeconds' | 'indexerUrl'
>;

/** Reads EMI_PAYTO, EMI_FACILITATOR_URL, EMI_INDEXER_URL, EMI_ALLOW_SIMULATED and EMI_MAX_DATA_AGE_SECONDS. */
export function paywallEnv(env: NodeJS.ProcessEnv = process.env): PaywallEnv {
  const maxAge = env.EMI_MAX_DATA_AGE_SECONDS;
  if (maxAge !== undefined && !/^[1-9][0-9]*$/.test(maxAge)) {
    throw new PaywallConfigError(
      `EMI_MAX_DATA_AGE_SECONDS must be a positive integer: ${JSON.stringify(maxAge)}`,
    );
  }
  const allow = env.EMI_ALLOW_SIMULATED;
  if (allow !== undefined && allow !== '' && allow !== '0' && allow !== '1') {
    throw new PaywallConfigError(`EMI_ALLOW_SIMULATED must be 0 or 1: ${JSON.stringify(allow)}`);
  }
  return {
    payTo: env.EMI_PAYTO || undefined,
    facilitatorUrl: env.EMI_FACILITATOR_URL || undefined,
    indexerUrl: env.EMI_INDEXER_URL || undefined,
    allowSimulated: allow ? allow === '1' : undefined,
    maxDataAgeSeconds: maxAge ? Number(maxAge) : undefined,
  };
}

export async function createLocalPaywall(options: LocalPaywallOptions): Promise<LocalPaywall> {
  if (options.facilitatorUrl && !options.payTo) {
    throw new PaywallConfigError(
      'a payee address (EMI_PAYTO) is required when a facilitator URL is configured',
    );
  }
  if (options.payTo && !algosdk.isValidAddress(options.payTo)) {
    throw new PaywallConfigError(`payTo is not a valid Algorand address: ${JSON.stringify(options.payTo)}`);
  }
  const payTo = options.payTo ?? algosdk.generateAccount().addr.toString();
  const devFacilitator = options.facilitatorUrl
    ? null
    : await startDevFacilitator({ optIn: [payTo], port: options.devFacilitatorPort ?? DEV_FACILITATOR_PORT });
  const facilitatorUrl = options.facilitatorUrl ?? (devFacilitator as DevFacilitator).url;
  // Test money buys test data: the development stack sells the simulated market, and says so in every 402.
  const allowSimulated = options.allowSimulated ?? devFacilitator !== null;
  try {
    const app = createPaywallApp({
      payTo,
      facilitatorUrl,
      baseUrl: options.baseUrl,
      storage: createFsStorage(options.paidDir),
      facilitatorTimeoutMs: options.facilitatorTimeoutMs,
      indexerUrl: options.indexerUrl ?? devFacilitator?.url,
      allowSimulated,
      maxDataAgeSeconds: options.maxDataAgeSeconds,
    });
    const siteDir = options.siteDir;
    const mcp = siteDir
      ? createMcpRoute(() =>
          createMcpServer({
            readText: readTextFrom(siteDir),
            fetchPaid: fetchPaidThrough((path, init) => app.request(path, init)),
            baseUrl: options.baseUrl,
          }),
        )
      : null;
    return {
      app,
      mcp,
      payTo,
      facilitatorUrl,
      devFacilitator,
      describe: () => [
        `x402 paywall: pays to ${payTo}${options.payTo ? '' : ' (throwaway development payee)'}`,
        devFacilitator
          ? `x402 facilitator: development facilitator on ${facilitatorUrl} (in-memory ledger, POST /dev/fund)`
          : `x402 facilitator: ${facilitatorUrl}`,
        `x402 paid files: ${options.paidDir}`,
        `x402 sells: ${allowSimulated ? 'simulated, replayed or live data (each 402 says which)' : 'live data only'}, at most ${options.maxDataAgeSeconds ?? 180} s old`,
      ],
      close: async () => {
        await devFacilitator?.close();
      },
    };
  } catch (error) {
    await devFacilitator?.close();
    throw error;
  }
}
