// Whether an address can receive USDC, asked of an algod node (`GET /v2/accounts/{address}/assets/{asset}`): a
// payment to an address that has not opted in to the asset fails at settlement, after the buyer signed it. One
// question for every payee: the operator's own (`payeeOptInProblem`) and each publisher's (publishers/opt-in.ts).
// Hosted algod services (QuickNode, Chainstack) put the API token in the URL's path: what is said to anyone names
// no URL, and what the operator reads names algod by its origin only (`shownUrl`).
import { ALGORAND_MAINNET, USDC_ASA_ID, usdcAssetFor } from '../schemas/paid/terms.ts';
import { normalizeNetwork } from './network.ts';

export interface OptInCheckOptions {
  algodUrl: string;
  /** Sent as X-Algo-API-Token when the node needs one. */
  algodToken?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** What algod says of one address's USDC holding; `shown` is the algod asked, as `shownUrl` writes it. */
export type UsdcOptIn = { shown: string } & (
  | { kind: 'opted-in' }
  /** algod answered 404: the account holds no such asset. */
  | { kind: 'not-opted-in' }
  /**
   * No answer, or an HTTP error other than 404. `reason` may be said to anyone (`HTTP <status>`, `unreachable`,
   * `timed out`); `detail` is for the operator's log (the error's own message).
   */
  | { kind: 'unchecked'; reason: string; detail: string }
  /** A 2xx answer without `asset-holding`. */
  | { kind: 'no-holding' }
);

/**
 * A URL as the operator's log may show it: its origin, without a user name or password, and `/…` for a path, a query
 * or a fragment, where hosted services put their token.
 */
export function shownUrl(value: string): string {
  try {
    const url = new URL(value);
    const rest = url.pathname.replace(/\/+$/, '') !== '' || url.search !== '' || url.hash !== '';
    return `${url.origin}${rest ? '/…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

/** A failed fetch in words that name no URL (an error's message may quote it). */
const fetchFailure = (error: unknown): string =>
  (error as Error)?.name === 'TimeoutError' ? 'timed out' : 'unreachable';

/** Asks algod whether `address` holds `asset` (default mainnet USDC); never throws. */
export async function askUsdcOptIn(
  address: string,
  options: OptInCheckOptions,
  asset: string = USDC_ASA_ID,
): Promise<UsdcOptIn> {
  const get = options.fetch ?? fetch;
  const base = options.algodUrl.replace(/\/+$/, '');
  const shown = shownUrl(options.algodUrl);
  let response: Response;
  try {
    response = await get(`${base}/v2/accounts/${address}/assets/${asset}`, {
      headers: options.algodToken ? { 'X-Algo-API-Token': options.algodToken } : {},
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    return { shown, kind: 'unchecked', reason: fetchFailure(error), detail: (error as Error).message };
  }
  if (response.status === 404) return { shown, kind: 'not-opted-in' };
  if (!response.ok) {
    const status = `HTTP ${response.status}`;
    return { shown, kind: 'unchecked', reason: status, detail: status };
  }
  const body = (await response.json().catch(() => null)) as { 'asset-holding'?: unknown } | null;
  return body?.['asset-holding'] ? { shown, kind: 'opted-in' } : { shown, kind: 'no-holding' };
}

/** Why a payee cannot be offered, twice: in words for anyone, and with where algod was asked, for the operator. */
export interface OptInProblem {
  /** For the 503s, /x402/health and the MCP tools: names the address, the asset and what to do, never a URL. */
  message: string;
  /** For the operator's log and a refused start: also which algod was asked (`shownUrl`) and its error. */
  detail: string;
}

/**
 * Why the operator's payee cannot be offered to buyers, or null when algod shows its USDC holding on `network`
 * (default Algorand mainnet). An algod that cannot be asked is a problem too, as it is for the publishers: a payee
 * nobody could check is not offered.
 */
export async function payeeOptInProblem(
  payTo: string,
  options: OptInCheckOptions & { network?: string },
): Promise<OptInProblem | null> {
  const asset = usdcAssetFor(normalizeNetwork(options.network ?? ALGORAND_MAINNET));
  const answer = await askUsdcOptIn(payTo, options, asset);
  const usdc = `USDC (asset ${asset})`;
  switch (answer.kind) {
    case 'opted-in':
      return null;
    case 'not-opted-in': {
      const message =
        `payTo ${payTo} has not opted in to ${usdc}, so no payment to it can settle: ` +
        `opt the address in to ${usdc} from its wallet, or pay to an address that has`;
      return { message, detail: message };
    }
    case 'unchecked': {
      const checked = `payTo ${payTo}: its opt-in to ${usdc} could not be checked`;
      return {
        message: `${checked} (${answer.reason}): check EMI_ALGOD_URL`,
        detail: `${checked} at ${answer.shown} (${answer.detail}): check EMI_ALGOD_URL`,
      };
    }
    case 'no-holding':
      return {
        message: `payTo ${payTo}: algod's answer shows no ${usdc} holding: check EMI_ALGOD_URL`,
        detail: `payTo ${payTo}: algod's answer at ${answer.shown} shows no ${usdc} holding: check EMI_ALGOD_URL`,
      };
  }
}
