// Publishers as configuration: the `publishers` list of the config file, checked once at start. A publisher resells
// the paid files under its own brand; the buyer pays the publisher's own address, never the operator's. A bad entry
// stops the worker with one line naming the publisher and the field, because a wrong address would send a buyer's
// money to the wrong place.
import algosdk from 'algosdk';
import * as z from 'zod';
import { PAID_RESOURCES } from '../../schemas/resources.ts';
import type { PaidResource } from '../../schemas/resources.ts';
import { atomicFromUsd } from '../../schemas/usdc.ts';
import { PUBLISHER_ID, PUBLISHER_ID_RULE } from './ids.ts';

/** The product slug of a paid path: `/api/x402-atlas.php` is `atlas`. */
export const productSlug = (resource: PaidResource): string =>
  resource.path.replace(/^\/api\/x402-/, '').replace(/\.php$/, '');

export const PRODUCTS: ReadonlyMap<string, PaidResource> = new Map(
  PAID_RESOURCES.map((resource) => [productSlug(resource), resource]),
);

/** Bidirectional controls and line separators, by name: what a refusal says it found. */
const INVISIBLE_CONTROLS: Readonly<Record<number, string>> = {
  0x061c: 'ARABIC LETTER MARK',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
};

/**
 * A character a brand text may not hold. Brand texts reach the operator's terminal (`emi publisher list`, where
 * U+009B is CSI and U+0085 a new line), every 402 and paid body, and the storefront, where a bidirectional control
 * makes `evil\u202Egnp.exe` read as `evilexe.png`. So: every control character (\p{Cc}: C0, DEL and C1), the
 * bidirectional embeddings, overrides, isolates and marks, and the line and paragraph separators. Other format
 * characters (the zero-width joiner of emoji and of many scripts) stay allowed.
 */
const UNSAFE_CHARACTER = /[\p{Cc}\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/** What the character is, for the refusal: `U+202E RIGHT-TO-LEFT OVERRIDE`, `U+009B (a C1 control character)`. */
function characterName(code: number): string {
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const named = INVISIBLE_CONTROLS[code];
  if (named) return `${hex} ${named}`;
  if (code < 0x20) return `${hex} (a C0 control character)`;
  return code === 0x7f ? `${hex} DELETE` : `${hex} (a C1 control character)`;
}

/**
 * The rule of every brand text, links included (a URL parser takes these characters too, and a link is shown as it
 * was written): the refusal names the first such character and where it is, never the text itself.
 */
const safeText = (text: z.ZodString): z.ZodString =>
  text.refine((value) => !UNSAFE_CHARACTER.test(value), {
    error: (issue) => {
      const value = String(issue.input);
      const index = value.search(UNSAFE_CHARACTER);
      return (
        'must not contain control characters or bidirectional controls: found ' +
        `${characterName(value.codePointAt(index) ?? 0)} at character ${[...value.slice(0, index)].length + 1}`
      );
    },
  });

/** https links only: a brand link can never be `javascript:` or plain http on a payment page. */
const HttpsUrl = safeText(z.string().max(500)).refine(
  (value) => URL.canParse(value) && new URL(value).protocol === 'https:',
  'must be an https:// URL',
);
const ContactLink = safeText(z.string().max(500)).refine(
  (value) => URL.canParse(value) && ['https:', 'mailto:'].includes(new URL(value).protocol),
  'must be an https:// or mailto: URL',
);

export const PublisherBrandSchema = z.strictObject({
  /**
   * Shown on the storefront and named in every 402 and paid body; checked once trimmed, as it was before (a blank or
   * line break at either end is dropped, not refused).
   */
  name: safeText(z.string().trim()).min(1, 'must not be empty').max(80, 'must be at most 80 characters'),
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

/** The one exact price conversion (schemas/usdc.ts), also the catalogue's. */
export { atomicFromUsd };

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
