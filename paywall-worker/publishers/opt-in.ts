// Whether each publisher's address can receive USDC, asked of an algod node at start when one is configured: a
// payment to an address that has not opted in to the asset fails at settlement, after the buyer signed it. The
// question is the one asked of the operator's own payee (../opt-in.ts).
import { USDC_ASA_ID } from '../../schemas/paid/terms.ts';
import { askUsdcOptIn } from '../opt-in.ts';
import type { OptInCheckOptions, OptInProblem } from '../opt-in.ts';
import { PublisherConfigError } from './config.ts';
import type { Publisher } from './config.ts';

export type { OptInCheckOptions } from '../opt-in.ts';

/**
 * A publisher's address that cannot be offered. Its message is the operator's (which algod was asked, as `shownUrl`
 * writes it); `problem.message` may be said to anyone. `unchecked`: algod could not answer, which is algod's state
 * (answered 503, asked again), not a bad entry.
 */
export class PublisherOptInError extends PublisherConfigError {
  constructor(
    readonly problem: OptInProblem,
    readonly unchecked: boolean,
  ) {
    super(problem.detail);
  }
}

/**
 * Throws PublisherOptInError naming the first publisher whose address is not opted in to USDC (algod answers 404
 * for `GET /v2/accounts/{address}/assets/{asset}`) or cannot be checked.
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
      case 'not-opted-in': {
        const message = `${field} ${publisher.payTo} has not opted in to USDC (ASA ${USDC_ASA_ID})`;
        throw new PublisherOptInError({ message, detail: message }, false);
      }
      case 'unchecked':
        throw new PublisherOptInError(
          {
            message: `${field} USDC opt-in could not be checked (${answer.reason})`,
            detail: `${field} USDC opt-in could not be checked at ${answer.shown} (${answer.detail})`,
          },
          true,
        );
      case 'no-holding':
        throw new PublisherOptInError(
          {
            message: `${field} algod's answer shows no USDC holding`,
            detail: `${field} algod's answer at ${answer.shown} shows no USDC holding`,
          },
          false,
        );
    }
  }
}
