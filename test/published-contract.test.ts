// The published contract as a reader sees it, kept in review: every OpenAPI operation with its answers, and every
// field of every published schema with its type, its allowed values and whether it may be absent or null. A change
// to it fails here until the outline file is updated (`npx vitest run test/published-contract.test.ts -u`) and,
// when a reader could notice it (a removed or renamed field, a new enum value, a field that may now be null),
// CHANGELOG.md lists it under "Breaking for readers" (README: "Versioning and change notice").
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A schema's type in a few words: `string|null`, `integer`, `enum(a|b)`, `array<object>`, `ref(Name)`, `anyOf(…)`. */
function typeOf(schema: Node): string {
  if (typeof schema.$ref === 'string') return `ref(${schema.$ref.split('/').at(-1)})`;
  if ('const' in schema) return `const(${JSON.stringify(schema.const)})`;
  if (Array.isArray(schema.enum)) return `enum(${schema.enum.map((v) => JSON.stringify(v)).join('|')})`;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(schema[key])) return `${key}(${(schema[key] as Node[]).map(typeOf).join(', ')})`;
  const type = Array.isArray(schema.type) ? schema.type.join('|') : String(schema.type ?? 'any');
  if (type.startsWith('array') && isNode(schema.items))
    return type.replace('array', `array<${typeOf(schema.items)}>`);
  return type;
}

/** One line per field: `Component.path.to.field: type [optional]`, nested objects and array items walked. */
function fieldLines(name: string, schema: Node, lines: string[] = []): string[] {
  const walk = (node: Node, path: string): void => {
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    if (isNode(node.properties))
      for (const [field, child] of Object.entries(node.properties)) {
        if (!isNode(child)) continue;
        lines.push(`${path}.${field}: ${typeOf(child)}${required.has(field) ? '' : ' [optional]'}`);
        walk(child, `${path}.${field}`);
      }
    if (isNode(node.items)) walk(node.items, `${path}[]`);
    if (isNode(node.additionalProperties)) walk(node.additionalProperties, `${path}{}`);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(node[key]))
        (node[key] as Node[]).forEach((branch, i) => walk(branch, `${path}<${i}>`));
  };
  walk(schema, name);
  return lines;
}

function contractOutline(document: Node): string {
  const lines: string[] = [];
  for (const [path, item] of Object.entries(document.paths as Node))
    for (const [method, operation] of Object.entries(item as Node)) {
      if (!isNode(operation) || !isNode(operation.responses)) continue;
      const answers = Object.entries(operation.responses).map(([status, response]) => {
        const schema = (
          ((response as Node).content as Node | undefined)?.['application/json'] as Node | undefined
        )?.schema;
        return isNode(schema) ? `${status} ${typeOf(schema)}` : status;
      });
      lines.push(`${method.toUpperCase()} ${path} (${String(operation.operationId)}): ${answers.join('; ')}`);
    }
  const components = (document.components as Node).schemas as Node;
  for (const [name, schema] of Object.entries(components))
    if (isNode(schema)) {
      lines.push(`${name}: ${typeOf(schema)}`);
      fieldLines(name, schema, lines);
    }
  return `${lines.join('\n')}\n`;
}

describe('the published contract', () => {
  it('matches the reviewed outline (update it together with a CHANGELOG line)', async () => {
    const document = buildOpenApiDocument({ baseUrl: 'https://emi.test' }) as Node;
    await expect(contractOutline(document)).toMatchFileSnapshot('./contract/published-contract.txt');
  });
});
