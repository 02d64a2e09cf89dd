// JSON Schema (draft 2020-12) for every published resource, emitted from the same zod schemas that validate
// the generator's output: once as standalone files under /schemas/, once as OpenAPI components.
import * as z from 'zod';
import { ErrorResponse } from '../../schemas/error.ts';
import { meaningOf, valuesSentence } from '../../schemas/field-meanings.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../../schemas/resources.ts';
import type { PublishedResource } from '../../schemas/resources.ts';
import { PaymentRequiredBody, PaywallErrorBody } from '../../schemas/paid/payment-required.ts';
import { resourceSlug } from './docs-paths.ts';
import { absoluteUrl } from './urls.ts';
import { historySchemaEntries } from './history-entries.ts';
import { statusSchemaEntry } from './status-entries.ts';

export type JsonSchema = Record<string, unknown>;

export interface SchemaEntry {
  /** OpenAPI component name, e.g. "MarketRegimeResponse". */
  name: string;
  /** Published file name under /schemas/, e.g. "market-regime.json". */
  fileName: string;
  title: string;
  schema: z.ZodType;
}

const pascal = (id: string): string => id.charAt(0).toUpperCase() + id.slice(1);

export const componentNameOf = (resource: PublishedResource): string => `${pascal(resource.id)}Response`;
export const schemaFileOf = (resource: PublishedResource): string => `${resourceSlug(resource)}.json`;

/** Every schema the site publishes: one per resource, plus the 402 challenge, the error body and the run status. */
export function schemaEntries(): SchemaEntry[] {
  const resources: SchemaEntry[] = [...FREE_RESOURCES, ...PAID_RESOURCES].map((r) => ({
    name: componentNameOf(r),
    fileName: schemaFileOf(r),
    title: r.title,
    schema: r.schema,
  }));
  return [
    ...resources,
    {
      name: 'PaymentRequiredBody',
      fileName: 'payment-required.json',
      title: 'Payment required (HTTP 402)',
      schema: PaymentRequiredBody,
    },
    { name: 'ErrorResponse', fileName: 'error.json', title: 'Error (HTTP 400, 404)', schema: ErrorResponse },
    ...historySchemaEntries(),
    {
      name: 'PaywallErrorBody',
      fileName: 'paywall-error.json',
      title: 'Paid-path error (HTTP 404, 405, 502, 503, 504)',
      schema: PaywallErrorBody,
    },
    statusSchemaEntry(),
  ];
}

const emitted = new WeakMap<z.ZodType, JsonSchema>();

/**
 * The raw zod emission: the response as published (output side), with nested ids kept in `$defs`. Emitted once
 * per schema and frozen (a build asks for each schema several times; callers copy what they change).
 */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  let json = emitted.get(schema);
  if (json === undefined) {
    json = deepFreeze(
      withMeanings(
        forClients(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' })),
        '',
      ),
    ) as JsonSchema;
    emitted.set(schema, json);
  }
  return json;
}

/**
 * The emissions of `entries` by entry name, for a cache that outlives the process (see site/derived-cache.ts);
 * `keepEmitted` takes them back, so a later process emits none of them again.
 */
export function emittedSchemas(entries: readonly SchemaEntry[]): Record<string, JsonSchema> {
  const byName = new Map<string, z.ZodType | null>();
  for (const { name, schema } of entries)
    byName.set(name, byName.has(name) && byName.get(name) !== schema ? null : schema);
  // A name shared by two different schemas is left out: it could not say which one it was emitted from.
  return Object.fromEntries(
    [...byName].flatMap(([name, schema]) => (schema === null ? [] : [[name, toJsonSchema(schema)]])),
  );
}

/** Takes emissions saved by `emittedSchemas` (from the same code) instead of emitting them again. */
export function keepEmitted(entries: readonly SchemaEntry[], saved: Readonly<Record<string, JsonSchema>>) {
  for (const entry of entries) {
    const json = saved[entry.name];
    if (json !== undefined && !emitted.has(entry.schema)) emitted.set(entry.schema, deepFreeze(json));
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const branchesOf = (schema: Record<string, unknown>): Record<string, unknown>[] =>
  Array.isArray(schema.anyOf) ? (schema.anyOf as Record<string, unknown>[]) : [];

/** The enum of a field, also when it is nullable (`anyOf: [{ enum }, { type: null }]`). */
function enumOf(schema: Record<string, unknown>): unknown[] {
  if (Array.isArray(schema.enum)) return schema.enum;
  return branchesOf(schema).flatMap((b) => (Array.isArray(b.enum) ? b.enum : []));
}

/** The JSON type of a field, null aside ("object", "integer", ...); undefined when it states none. */
function typeOf(schema: Record<string, unknown>): string | undefined {
  return [schema, ...branchesOf(schema)]
    .flatMap((s) => [s.type].flat())
    .find((type): type is string => typeof type === 'string' && type !== 'null');
}

/**
 * Gives every property without a `.describe()` of its own its meaning from `schemas/field-meanings.ts` (by its
 * name, its parent's name and its type), so that every published field says what it is (a test lists any that
 * does not, and any whose description names values the field cannot take).
 */
function withMeanings(node: unknown, parent: string): unknown {
  if (Array.isArray(node)) return node.map((item) => withMeanings(item, parent));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && value !== null && typeof value === 'object') {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([field, child]) => {
          const described = withMeanings(child, field) as Record<string, unknown>;
          const description =
            (described.description as string | undefined) ?? meaningOf(parent, field, typeOf(described));
          if (description === undefined) return [field, described];
          return [
            field,
            { ...described, description: description + valuesSentence(description, enumOf(described)) },
          ];
        }),
      );
    } else out[key] = withMeanings(value, key === '$defs' ? '' : parent);
  }
  return out;
}

/**
 * The `format` values of JSON Schema itself (draft-07 and 2020-12 vocabularies), which every validator knows; zod
 * also emits its own (e.g. "starts_with"), which ajv rejects.
 */
export const STANDARD_FORMATS: ReadonlySet<string> = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);

/**
 * Whether a schema node of `"type": "number"` only allows whole numbers: its `const`, or every value of its `enum`,
 * is an integer (zod emits `z.literal(2)` as `{ "type": "number", "const": 2 }`).
 */
export function onlyWholeNumbers(node: Readonly<Record<string, unknown>>): boolean {
  if (node.type !== 'number') return false;
  if ('const' in node) return Number.isInteger(node.const);
  return Array.isArray(node.enum) && node.enum.length > 0 && node.enum.every((v) => Number.isInteger(v));
}

/**
 * The published contract, not the generator's own check: objects stay open (`additionalProperties: false`
 * dropped) because the docs promise that new fields may appear, and non-standard formats are dropped (a
 * `pattern` zod emits beside them keeps the rule). A number that can only be a whole number (a `const` or an
 * `enum` of integers, e.g. `x402Version: 2`) is published as `"type": "integer"`, as the spec types it, so that
 * client generators do not type it as a float. The generator still validates with the strict zod schemas.
 */
export function forClients(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forClients);
  if (node === null || typeof node !== 'object') return node;
  const whole = onlyWholeNumbers(node as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'format' && typeof value === 'string' && !STANDARD_FORMATS.has(value)) continue;
    if (key === 'type' && whole) {
      out[key] = 'integer';
      continue;
    }
    // Inside `properties` the keys are field names, not keywords: a field may be called "format".
    out[key] = key === 'properties' ? mapValues(value, forClients) : forClients(value);
  }
  return out;
}

const mapValues = (value: unknown, fn: (v: unknown) => unknown): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fn(v)]))
    : fn(value);

/** A standalone schema file, identified by the URL it is published at. */
export function standaloneSchema(entry: SchemaEntry, baseUrl: string): JsonSchema {
  const { $schema, ...rest } = toJsonSchema(entry.schema);
  return { $schema, $id: absoluteUrl(baseUrl, `/schemas/${entry.fileName}`), title: entry.title, ...rest };
}

/**
 * OpenAPI components: each schema without `$schema` (the document's dialect is 2020-12 already), and any
 * `$defs` a schema carries hoisted to sibling components, because `#/$defs/...` inside a component would
 * resolve against the OpenAPI document root.
 */
export function componentSchemas(entries: SchemaEntry[], baseUrl: string): Record<string, JsonSchema> {
  const components: Record<string, JsonSchema> = {};
  for (const entry of entries) {
    const { $schema: _dialect, $defs, ...schema } = toJsonSchema(entry.schema);
    for (const [defName, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      const hoisted = rewriteDefRefs(def) as JsonSchema;
      const taken = components[defName];
      // Two schemas may share a registered def; two different shapes under one name would clobber each other.
      if (taken !== undefined && JSON.stringify(taken) !== JSON.stringify(hoisted)) {
        throw new Error(`two different schemas are both named "${defName}" in the OpenAPI components`);
      }
      components[defName] = hoisted;
    }
    components[entry.name] = {
      ...(rewriteDefRefs(schema) as JsonSchema),
      title: entry.title,
      externalDocs: {
        description: 'The same schema as a standalone JSON Schema (draft 2020-12) file',
        url: absoluteUrl(baseUrl, `/schemas/${entry.fileName}`),
      },
    };
  }
  return components;
}

function rewriteDefRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteDefRefs);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) =>
      key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')
        ? [key, `#/components/schemas/${value.slice('#/$defs/'.length)}`]
        : [key, rewriteDefRefs(value)],
    ),
  );
}
