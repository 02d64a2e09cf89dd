// The paywall as the local stack runs it: with a configured facilitator and payee, or, when no facilitator URL is
// configured, with the development facilitator on loopback (and a throwaway development payee if none is set).
import algosdk from 'algosdk';
import type { Hono } from 'hono';
import { createPaywallApp } from './app.ts';
import { PaywallConfigError } from './config.ts';
import { DEV_FACILITATOR_PORT, startDevFacilitator } from './dev-facilitator/server.ts';
import type { DevFacilitator } from './dev-facilitator/server.ts';
import { createFsStorage } from './storage-fs.ts';

export interface LocalPaywallOptions {
  paidDir: string;
  baseUrl: string;
  payTo?: string;
  facilitatorUrl?: string;
  facilitatorTimeoutMs?: number;
  /** Port of the development facilitator when one is started; default 4021, 0 for any free port. */
  devFacilitatorPort?: number;
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

/** Reads EMI_PAYTO and EMI_FACILITATOR_URL (flags win over the environment). */
export function paywallEnv(
  env: NodeJS.ProcessEnv = process.env,
): Pick<LocalPaywallOptions, 'payTo' | 'facilitatorUrl'> {
  return { payTo: env.EMI_PAYTO || undefined, facilitatorUrl: env.EMI_FACILITATOR_URL || undefined };
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
  try {
    const app = createPaywallApp({
      payTo,
      facilitatorUrl,
      baseUrl: options.baseUrl,
      storage: createFsStorage(options.paidDir),
      facilitatorTimeoutMs: options.facilitatorTimeoutMs,
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
