// Tool results: structured content with the same JSON as text (for clients that read text only), and errors.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export function structuredResult(
  content: Record<string, unknown>,
  meta?: Record<string, unknown>,
): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(content) }],
    structuredContent: content,
    ...(meta ? { _meta: meta } : {}),
  };
}

/** A tool error a person or an agent can act on: what went wrong and what to do. */
export function toolError(message: string, details?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: message }],
    ...(details ? { structuredContent: details } : {}),
  };
}

/** An input value cut short for an error message: an agent's huge string is not echoed back whole. */
export function clipped(value: string, max = 40): string {
  return value.length > max ? `${value.slice(0, max)}...` : value;
}

/**
 * The first `max` of `values` (each through `show`, clipped by default) joined by commas, then "and N more": an
 * agent's 100 000 names are not all echoed back.
 */
export function firstOf(
  values: readonly string[],
  max: number,
  show = (value: string) => clipped(value),
): string {
  const more = values.length - max;
  return `${values.slice(0, max).map(show).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
