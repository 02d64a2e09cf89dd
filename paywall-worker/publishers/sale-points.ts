// A publisher's storefront as the paywall core sees it: one sale point per resold product, at
// `/p/<id>/api/x402-<product>.php`, paying the publisher's address the publisher's price, and the sale hooks that
// hold, consume and give back the publisher's credits. The operator's own paths have no seller and pass through.
import type { SettleResponse } from '@x402/core/types';
import type { PaywallLogEntry, SaleHooks, SellerRefusal } from '../core/decide.ts';
import type { SalePoint } from '../offers.ts';
import { isClosed } from './closure.ts';
import type { Publisher, PublisherProduct } from './config.ts';
import type { CreditLedger } from './credit-ledger.ts';
import { DEVELOPMENT_NETWORK } from './statement.ts';

export const storefrontPrefix = (publisherId: string): string => `/p/${publisherId}`;

export const publisherPath = (publisherId: string, product: Pick<PublisherProduct, 'slug'>): string =>
  `${storefrontPrefix(publisherId)}/api/x402-${product.slug}.php`;

/** The `publisher` block of a paid body bought through a publisher: who sold it and where the money went. */
export function publisherBlock(publisher: Publisher, product: PublisherProduct): Record<string, unknown> {
  return {
    id: publisher.id,
    name: publisher.brand.name,
    contact_url: publisher.brand.contactUrl,
    terms_url: publisher.brand.termsUrl,
    pay_to: publisher.payTo,
    price_usd: product.priceUsd,
    note:
      `Sold by ${publisher.brand.name}, an independent publisher; the payment went directly to its address. ` +
      'The content is the same educational report the service publishes, unchanged.',
  };
}

const STOREFRONT_PAID_PATH = /^\/p\/([^/]+)\/api\/x402-[^/]*\.php$/;

/**
 * Why a storefront's paid-looking path is not for sale, in words a buyer can act on: the publisher does not resell
 * that product (its paid paths are named), or no publisher has that id. Null for any other path.
 */
export function unsoldStorefrontMessage(path: string, points: readonly SalePoint[]): string | null {
  const id = STOREFRONT_PAID_PATH.exec(path)?.[1];
  if (id === undefined) return null;
  const sold = points.filter((point) => point.seller?.id === id).map((point) => point.path);
  if (sold.length === 0)
    return 'No publisher storefront sells at this path: there is no publisher with this id.';
  return `This publisher does not resell this product; it sells ${sold.join(', ')}.`;
}

export function publisherSalePoints(publishers: readonly Publisher[]): SalePoint[] {
  return publishers.flatMap((publisher) =>
    publisher.products.map((product) => ({
      path: publisherPath(publisher.id, product),
      resource: product.resource,
      payTo: publisher.payTo,
      amountAtomic: product.amountAtomic,
      priceUsd: product.priceUsd,
      seller: { id: publisher.id, name: publisher.brand.name },
      bodyFields: { publisher: publisherBlock(publisher, product) },
    })),
  );
}

interface SaleFacts {
  publisher: Publisher;
  product: PublisherProduct;
}

export interface CreditHooksOptions {
  now?: () => number;
  /**
   * When the publisher's storefront closes (ms since the epoch), asked at every sale; default its `closedAt` as
   * configured at start. On Node the configuration file is read again when it changes (`emi publisher close`).
   */
  closedAt?: (publisher: Publisher) => Promise<number | null>;
  /**
   * Sales are settled by the development facilitator (test money on an in-memory ledger): they still consume a
   * credit, as in production, but are recorded with network `development` rather than the settlement's (which
   * names mainnet), so that the statement does not count them as paid to the publisher.
   */
  development?: boolean;
}

/**
 * Sale hooks backed by a credit ledger. `delivered` never throws: the buyer has paid and the body is on its way,
 * so a ledger failure is logged (with the transaction, for the statement to be corrected) and the body served.
 */
export function creditHooks(
  publishers: readonly Publisher[],
  ledger: CreditLedger,
  log: (entry: PaywallLogEntry) => void,
  options: CreditHooksOptions = {},
): SaleHooks {
  const now = options.now ?? Date.now;
  const closedAtOf = options.closedAt ?? ((publisher: Publisher) => Promise.resolve(publisher.closedAt));
  const byPath = new Map<string, SaleFacts>();
  for (const publisher of publishers) {
    for (const product of publisher.products) {
      byPath.set(publisherPath(publisher.id, product), { publisher, product });
    }
  }

  async function refusal({ publisher, product }: SaleFacts): Promise<SellerRefusal | null> {
    const closedAt = await closedAtOf(publisher);
    if (isClosed(closedAt, now())) {
      return {
        status: 410,
        error: 'seller_closed',
        message:
          `${publisher.brand.name} closed this storefront on ${new Date(closedAt).toISOString()}: ` +
          'it sells nothing new, and nothing was charged (a payment sent with this request was not settled). A ' +
          'payment made here before is still delivered ' +
          'when sent again. The same report is sold by the service itself at ' +
          `${product.resource.path}.`,
      };
    }
    const { available } = await ledger.balance(publisher.id);
    return available > 0
      ? null
      : {
          status: 503,
          error: 'not_available_from_seller',
          message:
            `${publisher.brand.name} has no shared-intelligence credit left, so this report cannot be sold ` +
            'here right now. No payment was requested. Try again later, or buy it from the service itself at ' +
            `${product.resource.path}.`,
        };
  }

  return {
    async unavailable(point): Promise<SellerRefusal | null> {
      const sale = byPath.get(point.path);
      return sale ? refusal(sale) : null;
    },
    async reserve(point, txid) {
      const sale = byPath.get(point.path);
      return sale ? ledger.reserve(sale.publisher.id, txid) : true;
    },
    async delivered(point, txid, settlement: SettleResponse) {
      const sale = byPath.get(point.path);
      if (!sale) return;
      try {
        await ledger.consume({
          at: new Date(now()).toISOString(),
          publisherId: sale.publisher.id,
          product: sale.product.slug,
          path: point.path,
          priceUsd: sale.product.priceUsd,
          amountAtomic: sale.product.amountAtomic,
          payTo: sale.publisher.payTo,
          payer: settlement.payer ?? '',
          transaction: txid,
          network: options.development ? DEVELOPMENT_NETWORK : settlement.network,
          credits: 1,
        });
      } catch (error) {
        log({
          level: 'error',
          event: 'publisher_sale_not_recorded',
          path: point.path,
          txid,
          detail: (error as Error).message,
        });
      }
    },
    async release(point, txid) {
      const sale = byPath.get(point.path);
      if (sale) await ledger.release(sale.publisher.id, txid);
    },
  };
}
