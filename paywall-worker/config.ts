// Checks the worker's configuration once, at start: a worker with a wrong payee must never run.
import algosdk from 'algosdk';
import { ALGORAND_MAINNET } from '../schemas/paid/terms.ts';
import { isKnownAlgorandNetwork, normalizeNetwork } from './network.ts';
import type { PaidFileStorage } from './storage.ts';

export interface PaywallConfig {
  /** Algorand address that receives the USDC; must be opted in to ASA 31566704. */
  payTo: string;
  /** Base URL of the x402 facilitator (POST /verify, POST /settle, GET /supported). */
  facilitatorUrl: string;
  /** Public base URL of the site, used in `resource.url` of the 402. */
  baseUrl: string;
  storage: PaidFileStorage;
  /** CAIP-2 id, short or long form; default Algorand mainnet. */
  network?: string;
  /** Per-call deadline for the facilitator (ms); default 10 000. */
  facilitatorTimeoutMs?: number;
  /** `maxTimeoutSeconds` of the requirements; default 300. */
  maxTimeoutSeconds?: number;
}

export interface ResolvedConfig {
  payTo: string;
  facilitatorUrl: string;
  baseUrl: string;
  network: `${string}:${string}`;
  facilitatorTimeoutMs: number;
  maxTimeoutSeconds: number;
}

export class PaywallConfigError extends Error {}

function httpUrl(value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PaywallConfigError(`${what} is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PaywallConfigError(`${what} must be http(s): ${value}`);
  }
  return value.replace(/\/+$/, '');
}

export function resolveConfig(config: PaywallConfig): ResolvedConfig {
  if (typeof config.payTo !== 'string' || !algosdk.isValidAddress(config.payTo)) {
    throw new PaywallConfigError(`payTo is not a valid Algorand address: ${JSON.stringify(config.payTo)}`);
  }
  const network = normalizeNetwork(config.network ?? ALGORAND_MAINNET);
  if (!isKnownAlgorandNetwork(network)) throw new PaywallConfigError(`unsupported network: ${network}`);
  const facilitatorTimeoutMs = config.facilitatorTimeoutMs ?? 10_000;
  if (!Number.isSafeInteger(facilitatorTimeoutMs) || facilitatorTimeoutMs <= 0) {
    throw new PaywallConfigError('facilitatorTimeoutMs must be a positive integer');
  }
  const maxTimeoutSeconds = config.maxTimeoutSeconds ?? 300;
  if (!Number.isSafeInteger(maxTimeoutSeconds) || maxTimeoutSeconds <= 0) {
    throw new PaywallConfigError('maxTimeoutSeconds must be a positive integer');
  }
  return {
    payTo: config.payTo,
    facilitatorUrl: httpUrl(config.facilitatorUrl, 'facilitatorUrl'),
    baseUrl: httpUrl(config.baseUrl, 'baseUrl'),
    network: network as `${string}:${string}`,
    facilitatorTimeoutMs,
    maxTimeoutSeconds,
  };
}
