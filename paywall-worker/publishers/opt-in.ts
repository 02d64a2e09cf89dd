// Whether each publisher's address can receive USDC, asked of an algod node at start when one is configured: a
// payment to an address that has not opted in to the asset fails at settlement, after the buyer signed it.
import { USDC_ASA_ID } from '../../schemas/paid/terms.ts';
import { PublisherConfigError } from './config.ts';
import type { Publisher } from './config.ts';

export interface OptInCheckOptions {
  algodUrl: string;
  /** Sent as X-Algo-API-Token when the node needs one. */
  algodToken?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * Throws PublisherConfigError naming the first publisher whose address is not opted in to USDC (algod answers
 * 404 for `GET /v2/accounts/{address}/assets/{asset}`) or cannot be checked.
 */
export async function checkPublisherOptIns(
  publishers: readonly Publisher[],
  options: OptInCheckOptions,
): Promise<void> {
  const get = options.fetch ?? fetch;
  const base = options.algodUrl.replace(/\/+$/, '');
  for (const publisher of publishers) {
    const url = `${base}/v2/accounts/${publisher.payTo}/assets/${USDC_ASA_ID}`;
    let response: Response;
    try {
      response = await get(url, {
        headers: options.algodToken ? { 'X-Algo-API-Token': options.algodToken } : {},
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch (error) {
      throw new PublisherConfigError(
        `publisher "${publisher.id}": payTo: USDC opt-in could not be checked at ${base} (${(error as Error).message})`,
      );
    }
    if (response.status === 404) {
      throw new PublisherConfigError(
        `publisher "${publisher.id}": payTo: ${publisher.payTo} has not opted in to USDC (ASA ${USDC_ASA_ID})`,
      );
    }
    if (!response.ok) {
      throw new PublisherConfigError(
        `publisher "${publisher.id}": payTo: USDC opt-in could not be checked at ${base} (HTTP ${response.status})`,
      );
    }
    const body = (await response.json().catch(() => null)) as { 'asset-holding'?: unknown } | null;
    if (!body?.['asset-holding']) {
      throw new PublisherConfigError(
        `publisher "${publisher.id}": payTo: algod's answer at ${base} shows no USDC holding`,
      );
    }
  }
}
