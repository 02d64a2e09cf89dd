// The Bazaar discovery extension of a paid path's 402: how to call it (GET, no parameters), what it returns (JSON,
// with an example) and a JSON Schema (2020-12) of that `info`. The output schema is the top level of the paid
// body's JSON Schema, generated from the same zod schema as the OpenAPI document: field names, types and
// required fields. Nested shapes are left to /openapi.json because clients echo the extension back in the
// PAYMENT-SIGNATURE header, and the full schemas would push that header past common 16 KiB limits.
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keeps a property's own constraints (const, enum, scalar types) and stops at nested objects and arrays. */
function shallow(property: unknown): JsonSchema {
  if (!isRecord(property)) return {};
  if (Array.isArray(property.anyOf)) return { anyOf: property.anyOf.map(shallow) };
  const kept: JsonSchema = {};
  for (const key of ['type', 'const', 'enum', 'format', 'pattern', 'minimum', 'maximum']) {
    if (property[key] !== undefined) kept[key] = property[key];
  }
  return kept;
}

export function topLevelJsonSchema(schema: z.ZodType): JsonSchema {
  const full = z.toJSONSchema(schema, { io: 'output' }) as JsonSchema;
  const properties = isRecord(full.properties) ? full.properties : {};
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, shallow(p)])),
    required: full.required ?? [],
    additionalProperties: full.additionalProperties ?? true,
  };
}

export interface BazaarExtension {
  info: { input: { type: 'http'; method: 'GET' }; output: { type: 'json'; example: unknown } };
  schema: JsonSchema;
}

export function bazaarExtension(schema: z.ZodType, example: unknown): BazaarExtension {
  return {
    info: { input: { type: 'http', method: 'GET' }, output: { type: 'json', example } },
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
          properties: { type: { type: 'string', const: 'json' }, example: topLevelJsonSchema(schema) },
          required: ['type'],
        },
      },
      required: ['input'],
    },
  };
}
