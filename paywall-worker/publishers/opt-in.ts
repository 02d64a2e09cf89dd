// Whether each publisher's address can receive USDC, asked of an algod node at start when one is configured: a
// payment to an address that has not opted in to the asset fails at settlement, after the buyer signed it. The
// question is the one asked of the operator's own payee (../opt-in.ts).
import { USDC_ASA_ID } from '../../schemas/paid/terms.ts';
import { askUsdcOptIn } from '../opt-in.ts';
import type { OptInCheckOptions } from '../opt-in.ts';
import { PublisherConfigError } from './config.ts';
import type { Publisher } from './config.ts';

export type { OptInCheckOptions } from '../opt-in.ts';

/**
 * Throws PublisherConfigError naming the first publisher whose address is not opted in to USDC (algod answers
 * 404 for `GET /v2/accounts/{address}/assets/{asset}`) or cannot be checked.
 */
export async function checkPublisherOptIns(
  publishers: readonly Publisher[],
  options: OptInCheckOptions,
): Promise<void> {
  for (const publisher of publishers) {
    const answer = await askUsdcOptIn(publisher.payTo, options);
    const field = `publisher "${publisher.id}": payTo:`;
    switch (answer.kind) {
      case 'opted-in':
        continue;
      case 'not-opted-in':
        throw new PublisherConfigError(
          `${field} ${publisher.payTo} has not opted in to USDC (ASA ${USDC_ASA_ID})`,
        );
      case 'unchecked':
        throw new PublisherConfigError(
          `${field} USDC opt-in could not be checked at ${answer.base} (${answer.detail})`,
        );
      case 'no-holding':
        throw new PublisherConfigError(`${field} algod's answer at ${answer.base} shows no USDC holding`);
    }
  }
}
