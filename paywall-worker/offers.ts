// The payment offer of each paid path: its x402 v2 requirements (built by the official resource server from the
// facilitator's /supported answer, which supplies the fee payer), the PaymentRequired object with the Bazaar
// extension, and the spec's 402 body around it. The unpaid 402 is prepared once and reused byte for byte.
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { DISCLAIMER, PROJECT } from '../schemas/common.ts';
import type { PaidResource } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import type { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { ECOSYSTEM, USDC_ASA_ID } from '../schemas/paid/terms.ts';
import { bazaarExtension } from './discovery.ts';
import { WHAT_THIS_IS_NOT, endpointName, productCopy, relatedPages } from './copy.ts';

export interface OfferSettings {
  payTo: string;
  network: `${string}:${string}`;
  baseUrl: string;
  maxTimeoutSeconds: number;
}

export interface Offer {
  resource: PaidResource;
  accepts: PaymentRequirements[];
  paymentRequired: PaymentRequired;
  unpaid: { header: string; body: string };
}

export async function buildOffer(
  server: x402ResourceServer,
  resource: PaidResource,
  settings: OfferSettings,
): Promise<Offer> {
  const accepts = await server.buildPaymentRequirements({
    scheme: 'exact',
    network: settings.network,
    price: { amount: resource.amountAtomic, asset: USDC_ASA_ID },
    payTo: settings.payTo,
    maxTimeoutSeconds: settings.maxTimeoutSeconds,
  });
  const paymentRequired = await server.createPaymentRequiredResponse(
    accepts,
    {
      url: `${settings.baseUrl}${resource.path}`,
      description: `${resource.title}: educational market intelligence, not advice (${resource.priceUsd} USDC)`,
      mimeType: 'application/json',
    },
    'payment_required',
    { bazaar: bazaarExtension(resource.schema, PAID_EXAMPLES[resource.id]) },
  );
  const offer: Offer = { resource, accepts, paymentRequired, unpaid: { header: '', body: '' } };
  const unpaid = challenge(offer, 'payment_required');
  offer.unpaid = unpaid;
  return offer;
}

function instructions(resource: PaidResource): string {
  return (
    `Pay exactly ${resource.priceUsd} USDC (${resource.amountAtomic} atomic units of ASA ${USDC_ASA_ID}) on ` +
    'Algorand mainnet with x402 v2 (scheme exact): sign the payment described in accepts, then repeat this ' +
    'request with the base64 payment in the PAYMENT-SIGNATURE header.'
  );
}

/** The PAYMENT-REQUIRED header and the 402 body for one failure, agreeing on resource, accepts and extensions. */
export function challenge(offer: Offer, error: string, detail?: string): { header: string; body: string } {
  const paymentRequired: PaymentRequired = { ...offer.paymentRequired, error };
  const body: PaymentRequiredBody = {
    error,
    project: PROJECT,
    ecosystem: ECOSYSTEM,
    endpoint: endpointName(offer.resource),
    type: 'payment_required',
    x402Version: 2,
    resource: paymentRequired.resource as PaymentRequiredBody['resource'],
    accepts: paymentRequired.accepts as PaymentRequiredBody['accepts'],
    extensions: paymentRequired.extensions,
    message: detail ? `${detail} ${instructions(offer.resource)}` : instructions(offer.resource),
    what_this_is: productCopy(offer.resource).whatThisIs,
    what_this_is_not: WHAT_THIS_IS_NOT,
    related_pages: relatedPages(offer.resource),
    disclaimer: DISCLAIMER,
  };
  return { header: encodePaymentRequiredHeader(paymentRequired), body: JSON.stringify(body) };
}
