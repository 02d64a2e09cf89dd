// Where each resource states its freshness, read from its published JSON Schema, so that the OpenAPI document,
// llms.txt and the docs name the real field paths per endpoint instead of one claim that fits only some.
import type { PublishedResource } from '../../schemas/resources.ts';
import { toJsonSchema } from './json-schema.ts';
import type { JsonSchema } from './json-schema.ts';

/** Field names that say when a body was made, what market time it describes, or when it is replaced. */
const FRESHNESS_NAMES = new Set([
  'generated_at',
  'next_update_due',
  'as_of',
  'updated_utc',
  'last_successful_run_at',
]);

const isObject = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Dotted paths (e.g. "source.generated_at") of every freshness field the schema declares, in document order. */
export function freshnessFieldPaths(schema: JsonSchema): string[] {
  const defs = isObject(schema.$defs) ? schema.$defs : {};
  const found = new Set<string>();
  const walk = (node: unknown, prefix: string, depth: number): void => {
    if (!isObject(node) || depth > 6) return;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/$defs/'))
      walk(defs[node.$ref.slice('#/$defs/'.length)], prefix, depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(node[key])) for (const branch of node[key]) walk(branch, prefix, depth);
    if (isObject(node.properties))
      for (const [name, child] of Object.entries(node.properties)) {
        if (FRESHNESS_NAMES.has(name)) found.add(`${prefix}${name}`);
        walk(child, `${prefix}${name}.`, depth + 1);
      }
  };
  walk(schema, '', 0);
  return [...found];
}

export const freshnessFieldsOf = (resource: PublishedResource): string[] =>
  freshnessFieldPaths(toJsonSchema(resource.schema));

/**
 * The freshness rule as /docs/freshness/ and the README state it, in one sentence for every discovery file: past
 * `next_update_due` a response is late, and only one more interval later stale (the free files are cached for a
 * minute, so a copy a little past its due time is ordinary).
 */
export const FRESHNESS_RULE =
  'A response is fresh until its `next_update_due`; past it, late (a run may be in progress: fetch again ' +
  'shortly); more than one update interval past it (the interval being `next_update_due` minus the time the ' +
  'response was generated), stale: runs have stopped or are failing, so read it as history, not as the current ' +
  'market.';

/** One sentence for docs: "Freshness: `source.generated_at`, `source.next_update_due`." */
export function freshnessSentence(resource: PublishedResource): string {
  const fields = freshnessFieldsOf(resource);
  return fields.length === 0
    ? 'Freshness: this body carries no timestamp of its own; the response headers and the payment say when it was sold.'
    : `Freshness fields: ${fields.map((f) => `\`${f}\``).join(', ')}.`;
}
