// A number that can only be a whole number is published as "integer" (spec §2.1, §2.9), in the OpenAPI document
// and in the standalone JSON Schemas: zod emits `z.literal(2)` as `{ type: "number", const: 2 }`, which client
// generators type as a float.
import { describe, expect, it } from 'vitest';
import { forClients, schemaEntries, standaloneSchema } from '../generator/discovery/json-schema.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';

const BASE_URL = 'https://emi.test';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

const standalone = (fileName: string): Json => {
  const entry = schemaEntries().find((e) => e.fileName === fileName);
  if (entry === undefined) throw new Error(`no schema published as ${fileName}`);
  return standaloneSchema(entry, BASE_URL);
};

/** Every schema node, with its JSON pointer-like path. */
function* nodes(node: unknown, path = ''): Generator<[string, Json]> {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield [path, node as Json];
  for (const [key, child] of Object.entries(node)) yield* nodes(child, `${path}/${key}`);
}

const isWhole = (value: unknown) => Number.isInteger(value);

describe('whole-number constants', () => {
  const document = buildOpenApiDocument({ baseUrl: BASE_URL }) as Json;
  const components = document.components.schemas as Json;

  it('are integers in the OpenAPI document: x402Version, usage_characteristics.cache_seconds', () => {
    expect(components.PaymentRequiredBody.properties.x402Version).toMatchObject({
      type: 'integer',
      const: 2,
    });
    for (const name of ['MarketRegimeResponse', 'MainBrainResponse']) {
      expect(components[name].properties.usage_characteristics.properties.cache_seconds, name).toMatchObject({
        type: 'integer',
        const: 60,
      });
    }
  });

  it('are integers in the standalone schemas under /schemas/', () => {
    expect(standalone('payment-required.json').properties.x402Version).toMatchObject({
      type: 'integer',
      const: 2,
    });
    for (const file of ['market-regime.json', 'main-brain.json']) {
      expect(standalone(file).properties.usage_characteristics.properties.cache_seconds, file).toMatchObject({
        type: 'integer',
        const: 60,
      });
    }
  });

  it('leave no "number" whose const or every enum value is whole, anywhere in what is published', () => {
    const published: [string, unknown][] = [
      ['openapi', document],
      ...schemaEntries().map((e): [string, unknown] => [e.fileName, standaloneSchema(e, BASE_URL)]),
    ];
    const floats = published.flatMap(([name, root]) =>
      [...nodes(root)]
        .filter(
          ([, node]) =>
            node.type === 'number' &&
            (isWhole(node.const) || (Array.isArray(node.enum) && node.enum.every(isWhole))),
        )
        .map(([path]) => `${name}${path}`),
    );
    expect(floats).toEqual([]);
  });

  it('turns only whole-number constants and enums into integers', () => {
    expect(
      forClients({
        type: 'object',
        properties: {
          version: { type: 'number', const: 2 },
          ratio: { type: 'number', const: 2.5 },
          steps: { type: 'number', enum: [1, 5, 15] },
          mixed: { type: 'number', enum: [1, 1.5] },
          price: { type: 'number' },
          count: { type: 'integer', const: 3 },
          type: { type: 'string', const: 'number' },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        version: { type: 'integer', const: 2 },
        ratio: { type: 'number', const: 2.5 },
        steps: { type: 'integer', enum: [1, 5, 15] },
        mixed: { type: 'number', enum: [1, 1.5] },
        price: { type: 'number' },
        count: { type: 'integer', const: 3 },
        type: { type: 'string', const: 'number' },
      },
    });
  });
});
