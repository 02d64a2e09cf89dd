// The JSON Schemas the tools publish (tools/list `outputSchema`) hold only JSON Schema's own `format` values. zod
// writes some checks as formats of its own (`z.string().startsWith('/')` becomes `format: "starts_with"`) beside
// the `pattern` that says the same; a validator that does not know such a format ignores it with a warning, or
// refuses the schema in strict mode. Here those formats are left out where a pattern already states the rule.
import * as z from 'zod';
import { onlyWholeNumbers, STANDARD_FORMATS } from '../generator/discovery/json-schema.ts';

type JsonSchemaNode = Record<string, unknown>;

/** Whether a node states its string rule as a pattern (zod writes one, or several under allOf). */
const hasPattern = (node: JsonSchemaNode): boolean =>
  typeof node.pattern === 'string' ||
  (Array.isArray(node.allOf) &&
    node.allOf.some((part) => typeof (part as JsonSchemaNode | null)?.pattern === 'string'));

/**
 * Leaves a non-standard format out of one node when a pattern states the same rule. A non-standard format without
 * a pattern is kept, so that the rule is never silently lost (the tests list every format a tool publishes).
 */
export function withoutNonStandardFormat(node: JsonSchemaNode): void {
  const { format } = node;
  if (typeof format === 'string' && !STANDARD_FORMATS.has(format) && hasPattern(node)) delete node.format;
}

/** The JSON Schema the MCP SDK publishes for a tool's output (draft-07, output side), with standard formats. */
export function publishedJsonSchema(schema: z.ZodType): JsonSchemaNode {
  return z.toJSONSchema(schema, {
    target: 'draft-7',
    io: 'output',
    override: ({ jsonSchema }) => {
      withoutNonStandardFormat(jsonSchema as JsonSchemaNode);
      // As in the published documents: a whole-number constant (x402Version) is an integer.
      if (onlyWholeNumbers(jsonSchema)) jsonSchema.type = 'integer';
    },
  }) as JsonSchemaNode;
}

/**
 * `z.object(shape)` whose JSON Schema (what tools/list publishes) has only standard formats; parsing is unchanged.
 * zod's per-schema `toJSONSchema` override answers the schema of a twin object built from the same shape (asking
 * for the object's own would call the override again).
 */
export function publishedObject<Shape extends z.ZodRawShape>(shape: Shape): z.ZodObject<Shape> {
  const twin = z.object(shape);
  const object = z.object(shape);
  let published: JsonSchemaNode | null = null;
  object._zod.toJSONSchema = () => structuredClone((published ??= publishedJsonSchema(twin)));
  return object;
}

/**
 * `build(body)` made once per body schema: the MCP route builds a server per request (stateless), and a fresh
 * object would convert its whole JSON Schema again on every tools/list (about 20 ms of CPU for the 14 tools).
 */
export function oncePerBody<Result>(build: (body: z.ZodType) => Result): (body: z.ZodType) => Result {
  const made = new WeakMap<z.ZodType, Result>();
  return (body) => {
    let result = made.get(body);
    if (result === undefined) made.set(body, (result = build(body)));
    return result;
  };
}
