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
  /** Per-call deadline for the facilitator and the indexer (ms); default 10 000, at most MAX_FACILITATOR_TIMEOUT_MS. */
  facilitatorTimeoutMs?: number;
  /** `maxTimeoutSeconds` of the requirements; default 300. */
  maxTimeoutSeconds?: number;
  /**
   * Algorand indexer API used to find out whether a payment landed when the settle answer was lost; default a
   * public indexer of the network (the local stack uses the development facilitator, which answers it too).
   */
  indexerUrl?: string;
  /** Sell simulated or replayed data (development only); default false: such files are refused before payment. */
  allowSimulated?: boolean;
  /** Refuse to sell a file generated longer ago than this; default DEFAULT_MAX_DATA_AGE_SECONDS. */
  maxDataAgeSeconds?: number;
  /** Highest fee the facilitator's fee-payer transaction may carry, microALGO; default 10 000. */
  maxFeePayerFeeMicroAlgos?: number;
}

export interface ResolvedConfig {
  payTo: string;
  facilitatorUrl: string;
  baseUrl: string;
  network: `${string}:${string}`;
  facilitatorTimeoutMs: number;
  maxTimeoutSeconds: number;
  indexerUrl: string;
  allowSimulated: boolean;
  maxDataAgeSeconds: number;
  maxFeePayerFeeMicroAlgos: bigint;
}

/** Public indexers (Nodely's free tier) per network, for reconciling lost settle answers. */
const PUBLIC_INDEXERS: Readonly<Record<string, string>> = {
  [ALGORAND_MAINNET]: 'https://mainnet-idx.algonode.cloud',
  'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe': 'https://testnet-idx.algonode.cloud',
};

/**
 * The longest facilitator timeout (EMI_FACILITATOR_TIMEOUT_MS) accepted. One paid request may wait on the
 * facilitator and the indexer several times in a row, each call bounded by it, and a proxy in front (nginx's
 * proxy_read_timeout, rendered from this bound by deploy/nginx/render.ts; Netlify's 26 s rewrite limit) that gives
 * up first answers the buyer while a settlement may still land. 15 s leaves a real settle (a few seconds on
 * Algorand) its margin.
 */
export const MAX_FACILITATOR_TIMEOUT_MS = 15_000;

/**
 * The oldest file sold by default (s): two one-minute cadences, the age at which the site's freshness rule calls data
 * stale (next_update_due, then one more interval). With another cadence, set EMI_MAX_DATA_AGE_SECONDS to twice it.
 */
export const DEFAULT_MAX_DATA_AGE_SECONDS = 120;

function facilitatorTimeout(value: number | undefined, what: string): number {
  const ms = positiveInteger(value, 10_000, what);
  if (ms > MAX_FACILITATOR_TIMEOUT_MS) {
    throw new PaywallConfigError(
      `${what} must be at most ${MAX_FACILITATOR_TIMEOUT_MS} (ms), so that the proxy in front (nginx's ` +
        `proxy_read_timeout, Netlify's 26 s) never gives up on a settlement in progress: ${ms}`,
    );
  }
  return ms;
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n <= 0) throw new PaywallConfigError(`${what} must be a positive integer`);
  return n;
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

/**
 * Why an API's base URL (the facilitator's, the indexer's) can never work, or null. fetch refuses a URL with a user
 * name or password, and the paths are appended to the base (`/supported`, `/v2/transactions/...`), after a query
 * string or a fragment: such a URL would start a worker whose every sale fails, and be repeated where it must not.
 */
export function apiUrlProblem(url: URL): string | null {
  if (url.username !== '' || url.password !== '') {
    return 'must not carry a user name or password (user:pass@): fetch refuses such a URL';
  }
  if (url.href.includes('?')) return 'must not carry a query string (?...): the paths are appended to it';
  if (url.href.includes('#')) return 'must not carry a fragment (#...): the paths are appended to it';
  return null;
}

/** An http(s) base URL of an API, refused (without repeating it: it may hold a secret) when it can never work. */
function apiUrl(value: string, what: string): string {
  const base = httpUrl(value, what);
  const problem = apiUrlProblem(new URL(value));
  if (problem) throw new PaywallConfigError(`${what} ${problem}`);
  return base;
}

export function resolveConfig(config: PaywallConfig): ResolvedConfig {
  if (typeof config.payTo !== 'string' || !algosdk.isValidAddress(config.payTo)) {
    throw new PaywallConfigError(`payTo is not a valid Algorand address: ${JSON.stringify(config.payTo)}`);
  }
  const network = normalizeNetwork(config.network ?? ALGORAND_MAINNET);
  if (!isKnownAlgorandNetwork(network)) throw new PaywallConfigError(`unsupported network: ${network}`);
  const indexerUrl = config.indexerUrl ?? PUBLIC_INDEXERS[network];
  if (!indexerUrl) throw new PaywallConfigError(`no indexer URL known for ${network}: set indexerUrl`);
  return {
    payTo: config.payTo,
    facilitatorUrl: apiUrl(config.facilitatorUrl, 'facilitatorUrl'),
    baseUrl: httpUrl(config.baseUrl, 'baseUrl'),
    network: network as `${string}:${string}`,
    facilitatorTimeoutMs: facilitatorTimeout(
      config.facilitatorTimeoutMs,
      'facilitatorTimeoutMs (EMI_FACILITATOR_TIMEOUT_MS)',
    ),
    maxTimeoutSeconds: positiveInteger(config.maxTimeoutSeconds, 300, 'maxTimeoutSeconds'),
    indexerUrl: apiUrl(indexerUrl, 'indexerUrl'),
    allowSimulated: config.allowSimulated ?? false,
    maxDataAgeSeconds: positiveInteger(
      config.maxDataAgeSeconds,
      DEFAULT_MAX_DATA_AGE_SECONDS,
      'maxDataAgeSeconds',
    ),
    maxFeePayerFeeMicroAlgos: BigInt(
      positiveInteger(config.maxFeePayerFeeMicroAlgos, 10_000, 'maxFeePayerFeeMicroAlgos'),
    ),
  };
}

/** The settings an operator gives through the environment (Node) or Worker variables (Cloudflare). */
export interface EnvSettings {
  payTo?: string;
  facilitatorUrl?: string;
  baseUrl?: string;
  network?: string;
  facilitatorTimeoutMs?: number;
  indexerUrl?: string;
  allowSimulated?: boolean;
  maxDataAgeSeconds?: number;
}

function integerVariable(env: Readonly<Record<string, unknown>>, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^[1-9][0-9]*$/.test(value)) {
    throw new PaywallConfigError(`${name} must be a positive integer: ${JSON.stringify(value)}`);
  }
  return Number(value);
}

const textVariable = (env: Readonly<Record<string, unknown>>, name: string): string | undefined =>
  typeof env[name] === 'string' && env[name] !== '' ? env[name] : undefined;

/** The variable each setting comes from, as `settingsFromEnv` reads it. */
export const SETTING_VARIABLES: Readonly<Record<keyof EnvSettings, string>> = {
  payTo: 'EMI_PAYTO',
  facilitatorUrl: 'EMI_FACILITATOR_URL',
  baseUrl: 'EMI_BASE_URL',
  network: 'EMI_NETWORK',
  facilitatorTimeoutMs: 'EMI_FACILITATOR_TIMEOUT_MS',
  indexerUrl: 'EMI_INDEXER_URL',
  allowSimulated: 'EMI_ALLOW_SIMULATED',
  maxDataAgeSeconds: 'EMI_MAX_DATA_AGE_SECONDS',
};

/**
 * Checks each setting that is given as `resolveConfig` will, before anything starts, and that a facilitator URL
 * comes with a payee. Throws a PaywallConfigError naming the setting (`names`: where a value came from, e.g.
 * `--pay-to`; by default its variable). Whether the payee can receive USDC is not checked here: that asks algod.
 */
export function checkSettings(
  settings: EnvSettings,
  names: Partial<Record<keyof EnvSettings, string>> = {},
): void {
  const name = (key: keyof EnvSettings): string => names[key] ?? SETTING_VARIABLES[key];
  if (settings.payTo !== undefined && !algosdk.isValidAddress(settings.payTo)) {
    throw new PaywallConfigError(
      `${name('payTo')} is not a valid Algorand address: ${JSON.stringify(settings.payTo)}`,
    );
  }
  if (settings.baseUrl !== undefined) httpUrl(settings.baseUrl, name('baseUrl'));
  for (const key of ['facilitatorUrl', 'indexerUrl'] as const) {
    const value = settings[key];
    if (value !== undefined) apiUrl(value, name(key));
  }
  if (settings.facilitatorTimeoutMs !== undefined) {
    facilitatorTimeout(settings.facilitatorTimeoutMs, name('facilitatorTimeoutMs'));
  }
  if (settings.network !== undefined && !isKnownAlgorandNetwork(normalizeNetwork(settings.network))) {
    throw new PaywallConfigError(
      `${name('network')} is not a supported network: ${JSON.stringify(settings.network)}`,
    );
  }
  if (settings.facilitatorUrl !== undefined && settings.payTo === undefined) {
    throw new PaywallConfigError(
      `a payee address (${name('payTo')}) is required when a facilitator URL is configured`,
    );
  }
}

/**
 * Reads EMI_PAYTO, EMI_FACILITATOR_URL, EMI_BASE_URL, EMI_NETWORK, EMI_FACILITATOR_TIMEOUT_MS, EMI_INDEXER_URL,
 * EMI_ALLOW_SIMULATED (0 or 1) and EMI_MAX_DATA_AGE_SECONDS; unset or empty means the default.
 */
export function settingsFromEnv(env: Readonly<Record<string, unknown>>): EnvSettings {
  const allow = textVariable(env, 'EMI_ALLOW_SIMULATED');
  if (allow !== undefined && allow !== '0' && allow !== '1') {
    throw new PaywallConfigError(`EMI_ALLOW_SIMULATED must be 0 or 1: ${JSON.stringify(allow)}`);
  }
  return {
    payTo: textVariable(env, 'EMI_PAYTO'),
    facilitatorUrl: textVariable(env, 'EMI_FACILITATOR_URL'),
    baseUrl: textVariable(env, 'EMI_BASE_URL'),
    network: textVariable(env, 'EMI_NETWORK'),
    facilitatorTimeoutMs: integerVariable(env, 'EMI_FACILITATOR_TIMEOUT_MS'),
    indexerUrl: textVariable(env, 'EMI_INDEXER_URL'),
    allowSimulated: allow === undefined ? undefined : allow === '1',
    maxDataAgeSeconds: integerVariable(env, 'EMI_MAX_DATA_AGE_SECONDS'),
  };
}
