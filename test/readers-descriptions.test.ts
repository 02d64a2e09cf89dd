// Every published field says what it means: the JSON Schemas and the OpenAPI document are walked and any property
// without a description is listed (the list must be empty); enum fields name each of their values; the readings
// that could pass for trading cues say what they are not.
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { schemaEntries, toJsonSchema } from '../generator/discovery/json-schema.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import type { JsonSchema } from '../generator/discovery/json-schema.ts';

interface Field {
  path: string;
  schema: JsonSchema;
}

const isObject = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every property of every object in the schema, with a readable path (e.g. "regime.breadth.share_above_ema50"). */
function fieldsOf(node: unknown, path: string, out: Field[] = []): Field[] {
  if (Array.isArray(node)) {
    for (const item of node) fieldsOf(item, path, out);
    return out;
  }
  if (!isObject(node)) return out;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isObject(value)) {
      for (const [name, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${name}` : name;
        if (isObject(child)) out.push({ path: childPath, schema: child });
        fieldsOf(child, childPath, out);
      }
    } else if (key !== 'examples' && key !== 'example')
      fieldsOf(value, key === '$defs' ? `$defs` : path, out);
  }
  return out;
}

const enumOf = (schema: JsonSchema): unknown[] | undefined => {
  if (Array.isArray(schema.enum)) return schema.enum;
  const branch = [...((schema.anyOf as JsonSchema[] | undefined) ?? [])].find((b) => Array.isArray(b.enum));
  return branch?.enum as unknown[] | undefined;
};

const published = schemaEntries().map((e) => ({
  file: e.fileName,
  fields: fieldsOf(toJsonSchema(e.schema), ''),
}));

describe('field descriptions', () => {
  it('no published JSON Schema has a field without a description', () => {
    const missing = published.flatMap(({ file, fields }) =>
      fields
        .filter((f) => typeof f.schema.description !== 'string' || f.schema.description.trim() === '')
        .map((f) => `${file}: ${f.path}`),
    );
    expect(missing).toEqual([]);
    expect(published.reduce((n, p) => n + p.fields.length, 0)).toBeGreaterThan(500);
  });

  it('no OpenAPI component has a field without a description', () => {
    const doc = buildOpenApiDocument({ baseUrl: 'https://emi.test' });
    const components = (doc.components as { schemas: Record<string, unknown> }).schemas;
    const missing = Object.entries(components).flatMap(([name, schema]) =>
      fieldsOf(schema, name)
        .filter((f) => typeof f.schema.description !== 'string')
        .map((f) => f.path),
    );
    expect(missing).toEqual([]);
  });

  it('every enum field names each of its values in its description', () => {
    const unexplained = published.flatMap(({ file, fields }) =>
      fields.flatMap((f) => {
        const values = enumOf(f.schema);
        // Asset symbols name themselves.
        if (!values || values.length < 2 || values.every((v) => TRACKED_ASSETS.includes(v as never)))
          return [];
        const text = String(f.schema.description ?? '');
        return values
          .filter((v) => !text.includes(String(v)))
          .map((v) => `${file}: ${f.path} = ${String(v)}`);
      }),
    );
    expect(unexplained).toEqual([]);
  });

  it('defines the readings in plain words, with what they are not', () => {
    const regime = published.find((p) => p.file === 'market-regime.json');
    const described = (path: string) =>
      String(regime?.fields.find((f) => f.path === path)?.schema.description);
    for (const path of ['market_state', 'market_mode', 'confidence', 'regime.risk_score']) {
      expect(described(path), path).toMatch(/\bnot\b/);
    }
    expect(described('market_state')).toMatch(/`WAIT` \(/);
    expect(described('market_state')).toMatch(/not an instruction/);
    expect(described('confidence')).toMatch(/0-100/);
    expect(described('confidence')).toMatch(/not a probability/i);
  });
});
