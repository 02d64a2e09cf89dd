// The Bazaar discovery extension of a paid path's 402: how to call it (GET, no parameters), what it returns (JSON,
// with a small example) and a JSON Schema (2020-12) of that `info`. Clients echo the whole extension back in the
// PAYMENT-SIGNATURE header, so it is kept small enough for both headers to stay under 4 KB, the default of common
// proxies: the example is a preview (the body's top-level scalar fields, long texts cut), and its schema names
// those fields and their types. The full body schema lives in /openapi.json and /schemas/.
import * as z from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * How much of the example body a preview keeps: its first `fields` scalar fields, texts cut at `text` characters.
 * Sized so that both headers stay under 4 KB with a payment identifier of its longest (128 characters), which
 * clients echo too (test/paywall-headers.test.ts, test/publishers-headers.test.ts).
 */
interface PreviewSize {
  fields: number;
  text: number;
}
const PREVIEW: PreviewSize = { fields: 6, text: 60 };
// A publisher's paths also carry its path and its name (up to 80 characters) in both headers.
const SELLER_PREVIEW: PreviewSize = { fields: 3, text: 40 };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first top-level scalar fields of an example body, long strings shortened. */
export function previewOf(
  example: unknown,
  { fields, text }: PreviewSize = PREVIEW,
): Record<string, string | number | boolean> {
  if (!isRecord(example)) return {};
  const preview: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(example)) {
    if (Object.keys(preview).length >= fields) break;
    if (typeof value === 'number' || typeof value === 'boolean') preview[key] = value;
    else if (typeof value === 'string') {
      preview[key] = value.length > text ? `${value.slice(0, text - 1)}…` : value;
    }
  }
  return preview;
}

/** The JSON types of the preview's fields, as the body's own JSON Schema declares them. */
function previewSchema(schema: z.ZodType, preview: Record<string, unknown>): JsonSchema {
  const full = z.toJSONSchema(schema, { io: 'output' }) as JsonSchema;
  const properties = isRecord(full.properties) ? full.properties : {};
  const typeOf = (name: string): JsonSchema => {
    const declared = properties[name];
    if (isRecord(declared) && typeof declared.type === 'string') return { type: declared.type };
    return { type: typeof preview[name] };
  };
  const names = Object.keys(preview);
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((name) => [name, typeOf(name)])),
    required: names,
  };
}

export interface BazaarExtension {
  info: {
    input: { type: 'http'; method: 'GET' };
    output: { type: 'json'; example: Record<string, string | number | boolean> };
    /** Who sells at this path when it is not the operator (a publisher's storefront). */
    seller?: { id: string };
  };
  schema: JsonSchema;
}

export function bazaarExtension(
  schema: z.ZodType,
  example: unknown,
  seller?: { id: string },
): BazaarExtension {
  const preview = previewOf(example, seller ? SELLER_PREVIEW : PREVIEW);
  return {
    info: {
      input: { type: 'http', method: 'GET' },
      output: { type: 'json', example: preview },
      // The seller's id only: its name (up to 80 characters, 240 bytes in some scripts) is in the resource
      // description already, and both headers carry the extension.
      ...(seller ? { seller: { id: seller.id } } : {}),
    },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: { type: { type: 'string', const: 'http' }, method: { type: 'string', enum: ['GET'] } },
          required: ['type', 'method'],
          additionalProperties: false,
        },
        output: {
          type: 'object',
          properties: { type: { type: 'string', const: 'json' }, example: previewSchema(schema, preview) },
          required: ['type'],
        },
        seller: {
          type: 'object',
          properties: { id: { type: 'string' } },
          required: ['id'],
        },
      },
      required: ['input'],
    },
  };
}
