// The paywall as the local stack runs it: with a configured facilitator and payee, or, when no facilitator URL is
// configured, with the development facilitator on loopback (and a throwaway development payee if none is set).
import algosdk from 'algosdk';
import type { Hono } from 'hono';
import { createPaywallApp } from './app.ts';
import { PaywallConfigError, settingsFromEnv } from './config.ts';
import type { EnvSettings } from './config.ts';
import { DEV_FACILITATOR_PORT, startDevFacilitator } from './dev-facilitator/server.ts';
import type { DevFacilitator } from './dev-facilitator/server.ts';
import { createFsStorage } from './storage-fs.ts';

export interface LocalPaywallOptions {
  paidDir: string;
  baseUrl: string;
  payTo?: string;
  facilitatorUrl?: string;
  facilitatorTimeoutMs?: number;
  /** CAIP-2 network; default Algorand mainnet (the development ledger answers for it). */
  network?: string;
  /** Port of the development facilitator when one is started; default 4021, 0 for any free port. */
  devFacilitatorPort?: number;
  /** Sell simulated or replayed data; default: only with the development facilitator (test money). */
  allowSimulated?: boolean;
  maxDataAgeSeconds?: number;
  /** Indexer API for reconciling lost settle answers; default the development facilitator, or a public one. */
  indexerUrl?: string;
}

export interface LocalPaywall {
  app: Hono;
  payTo: string;
  facilitatorUrl: string;
  /** The development facilitator, when one was started. */
  devFacilitator: DevFacilitator | null;
  /** One line per fact worth printing at start. */
  describe(): string[];
  close(): Promise<void>;
}

/** The paywall settings of this process's environment (see `settingsFromEnv`). */
export const paywallEnv = (): EnvSettings => settingsFromEnv(process.env);

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
      network: options.network,
      indexerUrl: options.indexerUrl ?? devFacilitator?.url,
      allowSimulated,
      maxDataAgeSeconds: options.maxDataAgeSeconds,
    });
    return {
      app,
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
