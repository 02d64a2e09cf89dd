// Tool inputs are strict: an argument the tool does not take is an invalid-params error naming it, never ignored
// (an agent sending {symbol: 'ETH'} to `reasoning` must not get BTC). The published inputSchema says the same
// (additionalProperties: false).
import * as z from 'zod';
import { clipped, firstOf } from './results.ts';

/** At most this many unknown argument names are listed in the error. */
const MAX_LISTED = 5;

/** A strict object of `shape` for the inputs of `tool`, whose error for unknown keys names them and the known ones. */
export function strictInput<Shape extends z.ZodRawShape>(tool: string, shape: Shape): z.ZodObject<Shape> {
  const known = Object.keys(shape);
  const takes = known.length ? `takes only ${known.join(', ')}` : 'takes no arguments';
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const keys = firstOf(issue.keys, MAX_LISTED, (key) => JSON.stringify(clipped(key)));
      return `unknown argument${issue.keys.length === 1 ? '' : 's'} ${keys}: ${tool} ${takes}`;
    },
  });
}
