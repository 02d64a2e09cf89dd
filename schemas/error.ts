// The JSON body of every error the hosts and the preview server answer (400, 404): a small, stable shape so
// that a client can handle failures without parsing HTML error pages.
import { z } from 'zod';
import { TRACKED_ASSETS } from './common.ts';

export const ErrorResponse = z.object({
  success: z.literal(false),
  error: z.string().describe('machine-readable error code, e.g. "invalid_asset" or "not_found"'),
  message: z.string().describe('human-readable explanation'),
  allowed_values: z
    .array(z.string())
    .optional()
    .describe('the values the rejected parameter accepts, when the error is about a parameter'),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const invalidAssetError = (): ErrorResponse => ({
  success: false,
  error: 'invalid_asset',
  message: `Unknown asset. Use one of ${TRACKED_ASSETS.join(', ')}; without the parameter the default is BTC.`,
  allowed_values: [...TRACKED_ASSETS],
});

export const notFoundError = (): ErrorResponse => ({
  success: false,
  error: 'not_found',
  message: 'No resource at this path. The list of endpoints is at /openapi.json and /llms.txt.',
});
