// The payment offer of each sale point: its x402 v2 requirements (built by the official resource server from the
// facilitator's /supported answer, which supplies the fee payer), the PaymentRequired object with the Bazaar
// extension, and the spec's 402 body around it. An offer names its path (`extra.resource`), so a payment signed
// for one path cannot buy another of the same price, and it states the data's mode and generation time, so
// nobody pays without knowing what they buy. Offers are built once per path and data generation.
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { DISCLAIMER, PROJECT } from '../schemas/common.ts';
import type { PaidResource } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import type { PaymentRequiredBody } from '../schemas/paid/payment-required.ts';
import { ECOSYSTEM, usdcAssetFor } from '../schemas/paid/terms.ts';
import { bazaarExtension } from './discovery.ts';
import { PAYMENT_IDENTIFIER, PAYMENT_IDENTIFIER_DECLARATION } from '../schemas/paid/payment-identifier.ts';
import { WHAT_THIS_IS_NOT, endpointName, productCopy, relatedPages } from './copy.ts';
import type { PaidFile } from './core/paid-file.ts';

/** Where a paid file is sold, to whom the money goes and at what price. */
export interface SalePoint {
  path: string;
  resource: PaidResource;
  payTo: string;
  amountAtomic: string;
  priceUsd: string;
  /** A publisher reselling under its own brand (the publisher programme); absent for the operator's own sales. */
  seller?: { id: string; name: string };
  /** Top-level fields added to the served paid body (a publisher's block); merged once per data generation. */
  bodyFields?: Readonly<Record<string, unknown>>;
}

export interface OfferSettings {
  network: `${string}:${string}`;
  baseUrl: string;
  maxTimeoutSeconds: number;
}

export interface Offer {
  point: SalePoint;
  data: Pick<PaidFile, 'mode' | 'generatedAt'>;
  accepts: PaymentRequirements[];
  paymentRequired: PaymentRequired;
  /** The unpaid 402, encoded once. */
  unpaid: { header: string; body: string };
}

/** The operator's own sale points: the four registry paths at the registry's prices. */
export const ownSalePoints = (resources: readonly PaidResource[], payTo: string): SalePoint[] =>
  resources.map((resource) => ({
    path: resource.path,
    resource,
    payTo,
    amountAtomic: resource.amountAtomic,
    priceUsd: resource.priceUsd,
  }));

const dataLabel = (data: Offer['data']): string =>
  `${data.mode === 'live' ? 'live' : `${data.mode.toUpperCase()} (not live)`} data generated ${data.generatedAt}`;

export async function buildOffer(
  server: x402ResourceServer,
  point: SalePoint,
  settings: OfferSettings,
  data: Offer['data'],
): Promise<Offer> {
  const built = await server.buildPaymentRequirements({
    scheme: 'exact',
    network: settings.network,
    price: { amount: point.amountAtomic, asset: usdcAssetFor(settings.network) },
    payTo: point.payTo,
    maxTimeoutSeconds: settings.maxTimeoutSeconds,
    // x402's "upfront" flow: the payment is settled before the file is handed over, with no separate verify call
    // (the facilitator verifies inside settle). The paywall always worked this way (settle, then serve); the flow
    // says so on the wire and spares each sale one facilitator round trip. See README, Decisions.
    extra: { paymentFlow: 'upfront' },
  });
  const accepts = built.map((r) => ({ ...r, extra: { ...r.extra, resource: point.path } }));
  const seller = point.seller ? ` sold by ${point.seller.name}` : '';
  const paymentRequired = await server.createPaymentRequiredResponse(
    accepts,
    {
      url: `${settings.baseUrl}${point.path}`,
      description: `${point.resource.title}${seller}, educational, not advice; ${dataLabel(data)}`,
      mimeType: 'application/json',
    },
    'payment_required',
    {
      bazaar: bazaarExtension(point.resource.schema, PAID_EXAMPLES[point.resource.id], point.seller),
      // Optional: a payment sent with an id can be collected again (see payment-identifier.ts).
      [PAYMENT_IDENTIFIER]: PAYMENT_IDENTIFIER_DECLARATION,
    },
  );
  const offer: Offer = { point, data, accepts, paymentRequired, unpaid: { header: '', body: '' } };
  offer.unpaid = challenge(offer, 'payment_required');
  return offer;
}

function instructions(offer: Offer): string {
  const { point } = offer;
  const asset = offer.accepts[0]?.asset ?? '';
  return (
    `Pay exactly ${point.priceUsd} USDC (${point.amountAtomic} atomic units of ASA ${asset}) on ` +
    'Algorand with x402 v2 (scheme exact): sign the payment described in accepts, then repeat this ' +
    'request with the base64 payment in the PAYMENT-SIGNATURE header.'
  );
}

/** The PAYMENT-REQUIRED header and the 402 body for one failure, agreeing on resource, accepts and extensions. */
export function challenge(offer: Offer, error: string, detail?: string): { header: string; body: string } {
  const paymentRequired: PaymentRequired = { ...offer.paymentRequired, error };
  const { resource } = offer.point;
  const body: PaymentRequiredBody = {
    error,
    project: PROJECT,
    ecosystem: ECOSYSTEM,
    endpoint: endpointName(resource),
    type: 'payment_required',
    x402Version: 2,
    resource: paymentRequired.resource as PaymentRequiredBody['resource'],
    accepts: paymentRequired.accepts as PaymentRequiredBody['accepts'],
    extensions: paymentRequired.extensions,
    data: {
      mode: offer.data.mode,
      // As the bodies' source.simulated: replayed data is recorded real answers, not simulated (`mode` says replay).
      simulated: offer.data.mode === 'simulated',
      generated_at: offer.data.generatedAt,
    },
    message: detail ? `${detail} ${instructions(offer)}` : instructions(offer),
    what_this_is: productCopy(resource).whatThisIs,
    what_this_is_not: WHAT_THIS_IS_NOT,
    related_pages: relatedPages(resource),
    disclaimer: DISCLAIMER,
  };
  return { header: encodePaymentRequiredHeader(paymentRequired), body: JSON.stringify(body) };
}
