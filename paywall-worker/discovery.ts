// The Bazaar discovery extension of a paid path's 402: how to call it (GET, no parameters), what it returns (JSON,
// with a small example) and a JSON Schema (2020-12) of that `info`. Clients echo the whole extension back in the
// PAYMENT-SIGNATURE header, so it is kept small enough for both headers to stay under 4 KB, the default of common
// proxies: the example is a preview (the body's top-level scalar fields, long texts cut), and its schema names
// those fields and their types. The full body schema lives in /openapi.json and /schemas/.
import * as z from 'zod';

type JsonSchema = Record<string, unknown>;

// Six fields (was eight) leave room for the payment-identifier extension, which clients echo too, with an id of up
// to its 128 characters.
const MAX_PREVIEW_FIELDS = 6;
const MAX_PREVIEW_TEXT = 60;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first top-level scalar fields of an example body, long strings shortened. */
export function previewOf(example: unknown): Record<string, string | number | boolean> {
  if (!isRecord(example)) return {};
  const preview: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(example)) {
    if (Object.keys(preview).length >= MAX_PREVIEW_FIELDS) break;
    if (typeof value === 'number' || typeof value === 'boolean') preview[key] = value;
    else if (typeof value === 'string') {
      preview[key] = value.length > MAX_PREVIEW_TEXT ? `${value.slice(0, MAX_PREVIEW_TEXT - 1)}…` : value;
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
    seller?: { id: string; name: string };
  };
  schema: JsonSchema;
}

export function bazaarExtension(
  schema: z.ZodType,
  example: unknown,
  seller?: { id: string; name: string },
): BazaarExtension {
  const preview = previewOf(example);
  return {
    info: {
      input: { type: 'http', method: 'GET' },
      output: { type: 'json', example: preview },
      ...(seller ? { seller: { id: seller.id, name: seller.name } } : {}),
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
          properties: { id: { type: 'string' }, name: { type: 'string' } },
          required: ['id', 'name'],
        },
      },
      required: ['input'],
    },
  };
}
