// Publishers as configuration: the `publishers` list of the config file, checked once at start. A publisher resells
// the paid files under its own brand; the buyer pays the publisher's own address, never the operator's. A bad entry
// stops the worker with one line naming the publisher and the field, because a wrong address would send a buyer's
// money to the wrong place.
import algosdk from 'algosdk';
import * as z from 'zod';
import { PAID_RESOURCES } from '../../schemas/resources.ts';
import type { PaidResource } from '../../schemas/resources.ts';
import { USDC_DECIMALS } from '../../schemas/paid/terms.ts';
import { PUBLISHER_ID, PUBLISHER_ID_RULE } from './ids.ts';

/** The product slug of a paid path: `/api/x402-atlas.php` is `atlas`. */
export const productSlug = (resource: PaidResource): string =>
  resource.path.replace(/^\/api\/x402-/, '').replace(/\.php$/, '');

export const PRODUCTS: ReadonlyMap<string, PaidResource> = new Map(
  PAID_RESOURCES.map((resource) => [productSlug(resource), resource]),
);

/** https links only: a brand link can never be `javascript:` or plain http on a payment page. */
const HttpsUrl = z
  .string()
  .max(500)
  .refine((value) => URL.canParse(value) && new URL(value).protocol === 'https:', 'must be an https:// URL');
const ContactLink = z
  .string()
  .max(500)
  .refine(
    (value) => URL.canParse(value) && ['https:', 'mailto:'].includes(new URL(value).protocol),
    'must be an https:// or mailto: URL',
  );

export const PublisherBrandSchema = z.strictObject({
  /** Shown on the storefront and named in every 402 and paid body. */
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(80, 'must be at most 80 characters')
    .refine(
      (value) => [...value].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f),
      'must not contain control characters',
    ),
  logoUrl: HttpsUrl.optional(),
  /** A CSS hex colour, `#rrggbb`. */
  accentColor: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'must be a hex colour like #1a73e8')
    .default('#1a5fb4'),
  contactUrl: ContactLink,
  termsUrl: HttpsUrl,
});

/** USD with at most six decimals (USDC's), e.g. "0.15". */
const PriceUsd = z.string().regex(/^(0|[1-9][0-9]{0,5})(\.[0-9]{1,6})?$/, 'must be a USD amount like "0.15"');

export const PublisherSchema = z.strictObject({
  /** The slug in `/p/<id>/`. */
  id: z.string().regex(PUBLISHER_ID, `must be ${PUBLISHER_ID_RULE}`),
  brand: PublisherBrandSchema,
  /** The Algorand address that receives the buyers' USDC (opted in to the USDC asset). */
  payTo: z.string().refine((value) => algosdk.isValidAddress(value), 'must be a valid Algorand address'),
  /** Product slug (`market-regime`, `main-brain`, `atlas`, `atlas-human-report`) to the publisher's price. */
  products: z
    .record(z.string(), z.strictObject({ priceUsd: PriceUsd }))
    .refine((products) => Object.keys(products).length > 0, 'must name at least one product'),
  /**
   * From this time on the storefront sells nothing new (410 `seller_closed`), while payments already made are still
   * delivered: removing the entry at once would strand a buyer whose settle answer was lost (`emi publisher close`).
   */
  closedAt: z.iso.datetime({ offset: true }).optional(),
});

/** The `publishers` entry of the config file; plugged into the whole file's schema by the config loader. */
export const PublishersConfigSchema = z.array(PublisherSchema).default([]);

export type PublisherInput = z.input<typeof PublisherSchema>;

export interface PublisherProduct {
  resource: PaidResource;
  slug: string;
  priceUsd: string;
  amountAtomic: string;
}

export interface Publisher {
  id: string;
  brand: z.output<typeof PublisherBrandSchema>;
  payTo: string;
  products: PublisherProduct[];
  /** When the storefront stops selling (ms since the epoch); null while it is open for good. */
  closedAt: number | null;
}

export class PublisherConfigError extends Error {
  override name = 'PublisherConfigError';
}

/** "0.15" to 150000 atomic units of USDC. */
export function atomicFromUsd(price: string): bigint {
  const [whole = '0', fraction = ''] = price.split('.');
  return BigInt(whole) * 10n ** BigInt(USDC_DECIMALS) + BigInt(fraction.padEnd(USDC_DECIMALS, '0'));
}

const label = (raw: unknown, index: number): string => {
  const id = (raw as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id ? `publisher "${id}"` : `publisher #${index + 1}`;
};

const fieldPath = (path: readonly PropertyKey[]): string => path.map(String).join('.') || '(entry)';

function resolveProducts(id: string, products: Record<string, { priceUsd: string }>): PublisherProduct[] {
  return Object.entries(products).map(([slug, { priceUsd }]) => {
    const resource = PRODUCTS.get(slug);
    if (!resource) {
      throw new PublisherConfigError(
        `publisher "${id}": products.${slug}: unknown product (one of ${[...PRODUCTS.keys()].join(', ')})`,
      );
    }
    const amount = atomicFromUsd(priceUsd);
    if (amount < BigInt(resource.amountAtomic)) {
      throw new PublisherConfigError(
        `publisher "${id}": products.${slug}.priceUsd: ${priceUsd} is below the base price ${resource.priceUsd}`,
      );
    }
    return { resource, slug, priceUsd, amountAtomic: amount.toString() };
  });
}

/**
 * Checks the `publishers` list; throws PublisherConfigError with one line naming the publisher and the field.
 * `operatorPayTo` is refused as a publisher's address: a publisher sale must pay the publisher, and the books
 * could not tell the two apart.
 */
export function parsePublishers(raw: unknown, operatorPayTo?: string): Publisher[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new PublisherConfigError('publishers: must be a list');
  const seen = new Set<string>();
  return raw.map((entry, index) => {
    const parsed = PublisherSchema.safeParse(entry);
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      throw new PublisherConfigError(
        `${label(entry, index)}: ${fieldPath(issue?.path ?? [])}: ${issue?.message ?? 'invalid'}`,
      );
    }
    const { id, brand, payTo, products, closedAt } = parsed.data;
    if (seen.has(id)) throw new PublisherConfigError(`publisher "${id}": id: used twice`);
    seen.add(id);
    if (operatorPayTo && payTo === operatorPayTo) {
      throw new PublisherConfigError(`publisher "${id}": payTo: is the operator's own payee address`);
    }
    return {
      id,
      brand,
      payTo,
      products: resolveProducts(id, products),
      closedAt: closedAt === undefined ? null : Date.parse(closedAt),
    };
  });
}
