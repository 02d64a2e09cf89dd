// The JSON body of every error the hosts and the preview server answer (400, 404): a small, stable shape so
// that a client can handle failures without parsing HTML error pages.
import * as z from 'zod';
import { DISCLAIMER, TRACKED_ASSETS } from './common.ts';

export const ErrorResponse = z.object({
  success: z.literal(false).describe('always false on an error'),
  error: z.string().describe('machine-readable error code, e.g. "invalid_asset" or "not_found"'),
  message: z.string().describe('human-readable explanation'),
  allowed_values: z
    .array(z.string())
    .optional()
    .describe('the values the rejected parameter accepts, when the error is about a parameter'),
  disclaimer: z
    .string()
    .describe('the educational notice every answer of this service carries, errors included'),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;

/** Any other error body (e.g. 405, 503 of the preview server), with the disclaimer every answer carries. */
export const errorResponse = (error: string, message: string): ErrorResponse => ({
  success: false,
  error,
  message,
  disclaimer: DISCLAIMER,
});

export const invalidAssetError = (): ErrorResponse => ({
  success: false,
  error: 'invalid_asset',
  message: `Unknown asset. Use one of ${TRACKED_ASSETS.join(', ')} (case-insensitive); without the parameter the default is BTC.`,
  allowed_values: [...TRACKED_ASSETS],
  disclaimer: DISCLAIMER,
});

export const notFoundError = (): ErrorResponse => ({
  success: false,
  error: 'not_found',
  message: 'No resource at this path. The list of endpoints is at /openapi.json and /llms.txt.',
  disclaimer: DISCLAIMER,
});
