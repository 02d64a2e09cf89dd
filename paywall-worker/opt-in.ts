// Whether an address can receive USDC, asked of an algod node (`GET /v2/accounts/{address}/assets/{asset}`): a
// payment to an address that has not opted in to the asset fails at settlement, after the buyer signed it. One
// question for every payee: the operator's own (`payeeOptInProblem`) and each publisher's (publishers/opt-in.ts).
import { ALGORAND_MAINNET, USDC_ASA_ID, usdcAssetFor } from '../schemas/paid/terms.ts';
import { normalizeNetwork } from './network.ts';

export interface OptInCheckOptions {
  algodUrl: string;
  /** Sent as X-Algo-API-Token when the node needs one. */
  algodToken?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** What algod says of one address's USDC holding; `base` is the algod URL asked, without a trailing slash. */
export type UsdcOptIn = { base: string } & (
  | { kind: 'opted-in' }
  /** algod answered 404: the account holds no such asset. */
  | { kind: 'not-opted-in' }
  /** No answer, or an HTTP error other than 404: `detail` is the error's message or `HTTP <status>`. */
  | { kind: 'unchecked'; detail: string }
  /** A 2xx answer without `asset-holding`. */
  | { kind: 'no-holding' }
);

/** Asks algod whether `address` holds `asset` (default mainnet USDC); never throws. */
export async function askUsdcOptIn(
  address: string,
  options: OptInCheckOptions,
  asset: string = USDC_ASA_ID,
): Promise<UsdcOptIn> {
  const get = options.fetch ?? fetch;
  const base = options.algodUrl.replace(/\/+$/, '');
  let response: Response;
  try {
    response = await get(`${base}/v2/accounts/${address}/assets/${asset}`, {
      headers: options.algodToken ? { 'X-Algo-API-Token': options.algodToken } : {},
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    return { base, kind: 'unchecked', detail: (error as Error).message };
  }
  if (response.status === 404) return { base, kind: 'not-opted-in' };
  if (!response.ok) return { base, kind: 'unchecked', detail: `HTTP ${response.status}` };
  const body = (await response.json().catch(() => null)) as { 'asset-holding'?: unknown } | null;
  return body?.['asset-holding'] ? { base, kind: 'opted-in' } : { base, kind: 'no-holding' };
}

/**
 * Why the operator's payee cannot be offered to buyers (one line naming the address, the asset and what to do), or
 * null when algod shows its USDC holding on `network` (default Algorand mainnet). An algod that cannot be asked is a
 * problem too, as it is for the publishers: a payee nobody could check is not offered.
 */
export async function payeeOptInProblem(
  payTo: string,
  options: OptInCheckOptions & { network?: string },
): Promise<string | null> {
  const asset = usdcAssetFor(normalizeNetwork(options.network ?? ALGORAND_MAINNET));
  const answer = await askUsdcOptIn(payTo, options, asset);
  const usdc = `USDC (asset ${asset})`;
  switch (answer.kind) {
    case 'opted-in':
      return null;
    case 'not-opted-in':
      return (
        `payTo ${payTo} has not opted in to ${usdc}, so no payment to it can settle: ` +
        `opt the address in to ${usdc} from its wallet, or pay to an address that has`
      );
    case 'unchecked':
      return (
        `payTo ${payTo}: its opt-in to ${usdc} could not be checked at ${answer.base} (${answer.detail}): ` +
        'check EMI_ALGOD_URL'
      );
    case 'no-holding':
      return `payTo ${payTo}: algod's answer at ${answer.base} shows no ${usdc} holding: check EMI_ALGOD_URL`;
  }
}
