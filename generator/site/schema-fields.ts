// Flattens a resource's JSON Schema into the rows of the docs' field table: dotted name, type in words,
// whether it is required and its description. Nested objects, maps and arrays of objects get their own rows.
import type { JsonSchema } from '../discovery/json-schema.ts';

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
  depth: number;
}

const MAX_DEPTH = 4;

const isObject = (value: unknown): value is JsonSchema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function resolve(node: JsonSchema, root: JsonSchema): JsonSchema {
  const ref = node.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/$defs/')) return node;
  const target = (root.$defs as Record<string, JsonSchema> | undefined)?.[ref.slice('#/$defs/'.length)];
  // Keywords next to a $ref (e.g. a description) win over the target's.
  const { $ref: _ref, ...siblings } = node;
  return target ? { ...resolve(target, root), ...siblings } : node;
}

/** Splits `T | null` into T and nullability. */
function unwrapNullable(node: JsonSchema, root: JsonSchema): { inner: JsonSchema; nullable: boolean } {
  if (Array.isArray(node.type) && node.type.includes('null')) {
    const rest = (node.type as string[]).filter((type) => type !== 'null');
    return { inner: { ...node, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  const options = Array.isArray(node.anyOf) ? (node.anyOf as JsonSchema[]) : null;
  if (!options) return { inner: node, nullable: false };
  const nonNull = options.filter((option) => option.type !== 'null');
  if (nonNull.length === 1 && nonNull.length < options.length) {
    const { anyOf: _anyOf, ...siblings } = node;
    return { inner: { ...resolve(nonNull[0] as JsonSchema, root), ...siblings }, nullable: true };
  }
  return { inner: node, nullable: false };
}

/** " 0-100", " ≥ 0" or "": zod's safe-integer bounds say nothing a reader needs. */
function rangeOf(node: JsonSchema): string {
  const bound = (value: unknown) =>
    typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;
  const min = bound(node.minimum);
  const max = bound(node.maximum);
  if (min !== undefined && max !== undefined) return ` ${min}-${max}`;
  if (min !== undefined) return ` ≥ ${min}`;
  if (max !== undefined) return ` ≤ ${max}`;
  return '';
}

function typeInWords(node: JsonSchema, root: JsonSchema): string {
  if ('const' in node) {
    const text = JSON.stringify(node.const);
    return text.length > 40 ? `${typeof node.const} (fixed text)` : text;
  }
  if (Array.isArray(node.enum))
    return `one of ${(node.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  if (Array.isArray(node.anyOf))
    return (node.anyOf as JsonSchema[]).map((o) => typeInWords(resolve(o, root), root)).join(' | ');
  if (node.type === 'array') {
    const items = isObject(node.items) ? resolve(node.items, root) : {};
    return `array of ${typeInWords(items, root)}`;
  }
  if (node.type === 'object' && isObject(node.additionalProperties) && !node.properties) return 'map';
  if (node.format === 'date-time') return 'string (ISO 8601 time)';
  if (node.type === 'integer' || node.type === 'number') return `${node.type}${rangeOf(node)}`;
  if (Array.isArray(node.type)) return node.type.join(' | ');
  return typeof node.type === 'string' ? node.type : 'any';
}

function walk(node: JsonSchema, root: JsonSchema, prefix: string, depth: number, rows: FieldRow[]): void {
  if (depth > MAX_DEPTH) return;
  const properties = isObject(node.properties) ? (node.properties as Record<string, JsonSchema>) : {};
  const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
  for (const [key, raw] of Object.entries(properties)) {
    const { inner, nullable } = unwrapNullable(resolve(raw, root), root);
    const name = prefix ? `${prefix}.${key}` : key;
    rows.push({
      name,
      type: `${typeInWords(inner, root)}${nullable ? ' | null' : ''}`,
      required: required.has(key),
      description: typeof inner.description === 'string' ? inner.description : '',
      depth,
    });
    walkChildren(inner, root, name, depth + 1, rows);
  }
}

function walkChildren(
  node: JsonSchema,
  root: JsonSchema,
  name: string,
  depth: number,
  rows: FieldRow[],
): void {
  if (isObject(node.properties)) walk(node, root, name, depth, rows);
  else if (node.type === 'object' && isObject(node.additionalProperties)) {
    walkChildren(
      unwrapNullable(resolve(node.additionalProperties, root), root).inner,
      root,
      `${name}.{key}`,
      depth,
      rows,
    );
  } else if (node.type === 'array' && isObject(node.items)) {
    walkChildren(unwrapNullable(resolve(node.items, root), root).inner, root, `${name}[]`, depth, rows);
  }
}

export function fieldRows(schema: JsonSchema): FieldRow[] {
  const rows: FieldRow[] = [];
  walk(resolve(schema, schema), schema, '', 0, rows);
  return rows;
}
