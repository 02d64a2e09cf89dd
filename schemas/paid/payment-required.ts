// The HTTP 402 body of every paid path (spec 2.9): the x402 v2 `PaymentRequired` object (the same one the
// PAYMENT-REQUIRED header carries, base64 encoded) plus the spec's explanatory fields for people and agents.
import * as z from 'zod';
import { DataMode, IsoTimestamp, ResourceLinks } from '../common.ts';
import { AlgorandAddress, AlgorandNetworkId, AtomicAmount } from './terms.ts';

/** One entry of `accepts`: what the client must pay, exactly (x402 v2 `PaymentRequirements`, scheme exact). */
export const X402PaymentRequirements = z.strictObject({
  scheme: z.literal('exact'),
  network: AlgorandNetworkId,
  amount: AtomicAmount.describe('price in atomic units of the asset (USDC has 6 decimals)'),
  asset: z
    .string()
    .regex(/^[0-9]+$/, 'an Algorand asset id')
    .describe('Algorand Standard Asset id'),
  payTo: AlgorandAddress,
  maxTimeoutSeconds: z.number().int().positive(),
  extra: z
    .record(z.string(), z.unknown())
    .describe('scheme extras; `feePayer` is the facilitator address that pays the group fee'),
});
export type X402PaymentRequirements = z.infer<typeof X402PaymentRequirements>;

/** x402 v2 `ResourceInfo`: which resource the payment is for. */
export const X402Resource = z.strictObject({
  url: z.url(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  serviceName: z.string().max(32).optional(),
  tags: z.array(z.string().max(32)).max(5).optional(),
});
export type X402Resource = z.infer<typeof X402Resource>;

export const PaymentRequiredBody = z.strictObject({
  error: z.string().describe('why the request was not served: no payment, or what was wrong with it'),
  project: z.string(),
  ecosystem: z.string(),
  endpoint: z.string(),
  type: z.literal('payment_required'),
  x402Version: z.literal(2),
  resource: X402Resource,
  accepts: z.array(X402PaymentRequirements).min(1),
  extensions: z.record(z.string(), z.unknown()).optional().describe('x402 extensions, e.g. Bazaar discovery'),
  data: z
    .strictObject({
      mode: DataMode,
      simulated: z
        .boolean()
        .describe(
          'true when no number in the report is a real market observation: data of the seeded market simulator ' +
            '(mode simulated). Replayed data (mode replay: recorded venue answers played back) is not simulated, ' +
            'though not current either: mode says which',
        ),
      generated_at: IsoTimestamp.describe('when the report on sale was generated; its age is now minus this'),
    })
    .describe(
      'what the payment buys, stated before payment: the data mode and when the report was generated',
    ),
  message: z.string(),
  what_this_is: z.string(),
  what_this_is_not: z.string(),
  related_pages: ResourceLinks,
  disclaimer: z.string(),
});
export type PaymentRequiredBody = z.infer<typeof PaymentRequiredBody>;

/** Body of the worker's other failures (503 paid file unavailable, 502/503/504 facilitator trouble, 404, 405). */
export const PaywallErrorBody = z.strictObject({
  success: z.literal(false),
  status: z.number().int(),
  error: z.string().describe('machine-readable code, e.g. facilitator_timeout or paid_resource_unavailable'),
  message: z.string(),
  project: z.string(),
  endpoint: z.string().nullable(),
  retry_after_seconds: z.number().int().positive().nullable(),
  transaction: z
    .string()
    .nullable()
    .describe(
      'the payment transaction id when the payment may have been settled despite this error (settlement timed ' +
        'out or the facilitator answered garbage): look it up on an explorer, and quote it if you were charged',
    ),
  disclaimer: z.string(),
});
export type PaywallErrorBody = z.infer<typeof PaywallErrorBody>;
