// The page's configuration, read from ./config.json next to the page (written by the operator in production, served
// by the local stack in development). Without a valid file the page still shows the challenge but refuses to pay,
// because it cannot know who the money should go to.
//
// No algosdk here: it is about 490 KB, and this file is on the page's first load. The payee's form is checked at
// once (parseBuyerConfig), its checksum with algosdk once a wallet is chosen and again before anything is signed
// (confirmPayee, which imports algosdk on demand).
import { isAlgorandAddressForm } from '../../../generator/buyer/challenge.ts';
import { isAlgorandMainnet } from '../../../generator/buyer/human-report-terms.ts';

export interface BuyerConfig {
  /** The only address this page will pay. */
  merchantAddress: string;
  /** CAIP-2 id of the payment network; must be Algorand mainnet (either spelling). */
  network: string;
  /** 'development' enables the development wallet; it is never offered in 'production'. */
  facilitatorMode: 'development' | 'production';
  /** Development only: the facilitator's POST /dev/fund faucet (absolute, or relative to the config file). */
  devFundUrl?: string;
  /** Algod API base for suggested transaction params (GET /v2/transactions/params). */
  algodUrl: string;
  /** Where the report is sold; defaults to the human report path on this origin. */
  reportUrl: string;
  /** The exact price there in USDC atomic units, when not the base price (a publisher's storefront). */
  reportAmount?: string;
}

export type ConfigResult = { ok: true; config: BuyerConfig } | { ok: false; reason: string };

/** Public algod used for suggested params when a production config names none (CORS-enabled, no key). */
export const DEFAULT_MAINNET_ALGOD = 'https://mainnet-api.algonode.cloud';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const absolute = (url: string, base: string): string | null => {
  try {
    return new URL(url, base).toString().replace(/\/$/, '');
  } catch {
    return null;
  }
};

/** Why a config.json's payee is refused, at load (its form) or later (its checksum): the same words either way. */
export const NO_VALID_MERCHANT = 'config.json has no valid merchant address (merchantAddress).';

/**
 * Validates the parsed config.json; `base` resolves relative URLs (the config file's own URL). The payee is held to
 * `isValidPayee`: by default the form of an address only (the page checks the checksum later, see confirmPayee);
 * code that has algosdk at hand may pass `algosdk.isValidAddress` for the whole check at once.
 */
export function parseBuyerConfig(
  raw: unknown,
  base: string,
  defaultReportUrl: string,
  isValidPayee: (address: string) => boolean = isAlgorandAddressForm,
): ConfigResult {
  if (!isRecord(raw)) return { ok: false, reason: 'config.json is not a JSON object.' };
  const { merchantAddress, network, facilitatorMode, devFundUrl, algodUrl, reportUrl, reportAmount } = raw;
  if (typeof merchantAddress !== 'string' || !isValidPayee(merchantAddress)) {
    return { ok: false, reason: NO_VALID_MERCHANT };
  }
  if (typeof network !== 'string' || !isAlgorandMainnet(network)) {
    return {
      ok: false,
      reason: `config.json names the network "${String(network)}"; this page only pays on Algorand mainnet.`,
    };
  }
  if (facilitatorMode !== 'development' && facilitatorMode !== 'production') {
    return { ok: false, reason: 'config.json must set facilitatorMode to "development" or "production".' };
  }
  for (const [name, value] of Object.entries({ devFundUrl, algodUrl, reportUrl })) {
    if (value !== undefined && (typeof value !== 'string' || absolute(value, base) === null)) {
      return { ok: false, reason: `config.json: ${name} is not a URL.` };
    }
  }
  if (
    reportAmount !== undefined &&
    (typeof reportAmount !== 'string' || !/^[1-9][0-9]{0,15}$/.test(reportAmount))
  ) {
    return { ok: false, reason: 'config.json: reportAmount is not an amount in atomic units.' };
  }
  const fund = typeof devFundUrl === 'string' ? (absolute(devFundUrl, base) ?? undefined) : undefined;
  // Development without an explicit algodUrl: the development facilitator answers the params call next to /dev/fund.
  const devAlgod = fund?.endsWith('/dev/fund') ? fund.slice(0, -'/dev/fund'.length) : undefined;
  const algod =
    typeof algodUrl === 'string'
      ? absolute(algodUrl, base)
      : facilitatorMode === 'production'
        ? DEFAULT_MAINNET_ALGOD
        : devAlgod;
  if (!algod)
    return {
      ok: false,
      reason: 'config.json: development mode needs algodUrl (or a devFundUrl ending in /dev/fund).',
    };
  return {
    ok: true,
    config: {
      merchantAddress,
      network,
      facilitatorMode,
      ...(facilitatorMode === 'development' && fund ? { devFundUrl: fund } : {}),
      algodUrl: algod,
      reportUrl:
        absolute(typeof reportUrl === 'string' ? reportUrl : defaultReportUrl, base) ?? defaultReportUrl,
      ...(typeof reportAmount === 'string' ? { reportAmount } : {}),
    },
  };
}

/** Fetches and validates config.json; a missing or broken file is a refusal to pay, explained. */
export async function loadBuyerConfig(configUrl: string, defaultReportUrl: string): Promise<ConfigResult> {
  let response: Response;
  try {
    response = await fetch(configUrl, { cache: 'no-store' });
  } catch {
    return { ok: false, reason: 'config.json could not be loaded (network error).' };
  }
  if (response.status === 404) {
    return { ok: false, reason: 'This site has no payment configuration (config.json is missing).' };
  }
  if (!response.ok)
    return { ok: false, reason: `config.json could not be loaded (HTTP ${response.status}).` };
  let raw: unknown;
  try {
    raw = await response.json();
  } catch {
    return { ok: false, reason: 'config.json is not valid JSON.' };
  }
  return parseBuyerConfig(raw, new URL(configUrl, location.href).toString(), defaultReportUrl);
}

/**
 * The payee's checksum (the last 4 bytes of SHA-512/256 of its public key), checked with algosdk, imported here on
 * demand. The page calls it once a wallet is chosen and before every signature: a payee of the right form whose
 * checksum fails is refused with the same words as at load, and never paid.
 */
export async function confirmPayee(config: BuyerConfig): Promise<ConfigResult> {
  const { isValidAddress } = await import('algosdk');
  return isValidAddress(config.merchantAddress)
    ? { ok: true, config }
    : { ok: false, reason: NO_VALID_MERCHANT };
}
