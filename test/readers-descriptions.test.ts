// Every published field says what it means: the JSON Schemas and the OpenAPI document are walked and any property
// without a description is listed (the list must be empty); enum fields name each of their values; the readings
// that could pass for trading cues say what they are not.
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { historyRowSchemaEntries } from '../generator/discovery/history-entries.ts';
import { schemaEntries, toJsonSchema } from '../generator/discovery/json-schema.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { FIELD_MEANINGS } from '../schemas/field-meanings.ts';
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

/** Every field of every published schema file, the history rows' included, with its file. */
const everyField = [...schemaEntries(), ...historyRowSchemaEntries()].flatMap((e) =>
  fieldsOf(toJsonSchema(e.schema), '').map((f) => ({
    ...f,
    file: e.fileName,
    where: `${e.fileName}: ${f.path}`,
  })),
);

/** A field's own schema and, for `anyOf` (nullable, unions), every branch of it, however deep. */
const branchesOf = (schema: JsonSchema): JsonSchema[] => [
  schema,
  ...((schema.anyOf as JsonSchema[] | undefined) ?? []).flatMap(branchesOf),
];
/** Every value a field can take when it is an enum or a constant, in any branch; [] when it is neither. */
const valuesOf = (schema: JsonSchema): unknown[] =>
  branchesOf(schema).flatMap((b) => [
    ...((b.enum as unknown[] | undefined) ?? []),
    ...('const' in b ? [b.const] : []),
  ]);
/** The kind of value a field holds, null aside; an integer is a number. */
const kindOf = (schema: JsonSchema): string | undefined =>
  branchesOf(schema)
    .flatMap((b) => [b.type].flat())
    .map((type) => (type === 'integer' ? 'number' : type))
    .find((type): type is string => typeof type === 'string' && type !== 'null');
/** The words a description quotes as code: `value` or `field`. */
const quoted = (description: unknown): string[] =>
  [...String(description ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

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

  it('names no value a field cannot take (fields that share a name keep their own values)', () => {
    // A quoted word names a value when some published field can take it, or when it names no field at all
    // (`source.mode`, `limitations` name fields; `calm`, `available`, `round_resolved` are values).
    const values = new Set(everyField.flatMap((f) => valuesOf(f.schema)));
    const names = new Set(everyField.map((f) => f.path.split('.').at(-1)));
    const namesValue = (word: string) =>
      values.has(word) || !word.split('.').every((part) => names.has(part));
    /** The values of the fields of `file` that `word` names ("`level` is `extreme_high`" quotes another field's). */
    const valuesNamedBy = (file: string, word: string) =>
      everyField
        .filter((g) => g.file === file && (g.path === word || g.path.endsWith(`.${word}`)))
        .flatMap((g) => valuesOf(g.schema));
    const wrong = everyField.flatMap((f) => {
      const words = quoted(f.schema.description);
      const own = valuesOf(f.schema);
      // Free text may quote anything, and objects and arrays their own fields; a number or a boolean without an
      // enum can take no quoted value.
      if (own.length === 0 && !['number', 'boolean'].includes(kindOf(f.schema) ?? '')) return [];
      const allowed = [...own, ...words.flatMap((word) => valuesNamedBy(f.file, word))];
      return words
        .filter((word) => namesValue(word) && !allowed.includes(word))
        .map((word) => `${f.where} says \`${word}\``);
    });
    expect(wrong).toEqual([]);
  });

  it('gives a meaning looked up by name alone to one kind of value, and calls only integers counts', () => {
    // name -> kind of value -> one field of that kind with the name's meaning
    const kindsByName = new Map<string, Map<string | undefined, string>>();
    for (const f of everyField) {
      const name = f.path.split('.').at(-1) ?? '';
      const meaning = FIELD_MEANINGS[name];
      if (meaning === undefined || !String(f.schema.description).startsWith(meaning)) continue;
      const kinds = kindsByName.get(name) ?? new Map();
      kinds.set(kindOf(f.schema), f.where);
      kindsByName.set(name, kinds);
    }
    const mixed = [...kindsByName]
      .filter(([, kinds]) => kinds.size > 1)
      .map(
        ([name, kinds]) => `${name}: ${[...kinds].map(([kind, where]) => `${kind} at ${where}`).join(', ')}`,
      );
    expect(mixed).toEqual([]);
    const notCounts = everyField
      .filter((f) => /^(count|number of)\b/.test(String(f.schema.description)))
      .filter((f) => !branchesOf(f.schema).some((b) => b.type === 'integer'))
      .map((f) => f.where);
    expect(notCounts).toEqual([]);
  });

  it('describes funding history_points as the count behind the z-score it feeds, not a percentile', () => {
    const funding = everyField.filter((f) => f.path.endsWith('.funding.history_points'));
    expect(funding.length).toBeGreaterThan(0);
    for (const f of funding) {
      expect(String(f.schema.description), f.where).toMatch(/z[-_]score/);
      expect(String(f.schema.description), f.where).not.toMatch(/percentile/);
    }
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
