// Strict building blocks shared by the free market endpoints. Every object here rejects unknown keys, so that no
// internal value (a weight, a raw score) can slip into a published file by accident.
import * as z from 'zod';
import {
  AgentGuidance,
  CACHE_SECONDS,
  DataMode,
  DISCLAIMER,
  FREE_ACCESS,
  IsoTimestamp,
  PROJECT,
  ResourceLink,
  SCHEMA_VERSION,
  SNAPSHOT_VERSION,
  SnapshotStatus,
  SourceInfo,
} from './common.ts';

/** Named links to related resources (key: a short id such as "reasoning"). */
export const RelatedLinks = z
  .record(z.string().regex(/^[a-z0-9_]+$/), ResourceLink)
  .describe('named links to related resources, relative to the base URL');

/** A premium resource that extends a free one (the upgrade path). */
export const PaidLink = z.strictObject({
  path: z.string().startsWith('/'),
  product_id: z.string(),
  price_usd: z.string().describe('price per request in the US-dollar stablecoin, e.g. "0.01"'),
  description: z.string(),
});
export type PaidLink = z.infer<typeof PaidLink>;

export const EndpointRole = z
  .strictObject({
    role: z.string().describe('what this endpoint is for within the catalogue'),
    product_id: z.string(),
    tier: z.literal('free'),
    integration_order: z
      .number()
      .int()
      .min(1)
      .describe('position in the recommended integration order (market regime first)'),
  })
  .describe('where this endpoint sits in the catalogue');

export const FreeUsageCharacteristics = z.strictObject({
  machine_readable: z.literal(true),
  stable_schema: z.literal(true),
  cache_seconds: z.literal(CACHE_SECONDS),
  authentication: z.literal('none'),
  payment_required: z.literal(false),
  response_format: z.literal('application/json'),
});

export const CapabilityBoundary = z
  .strictObject({
    provides: z.array(z.string()),
    does_not_provide: z.array(z.string()),
  })
  .describe('what this endpoint does and, as plainly, what it does not do');

export const DeveloperResources = z
  .strictObject({
    openapi_json: z.literal('/openapi.json'),
    openapi_yaml: z.literal('/openapi.yaml'),
    llms_txt: z.literal('/llms.txt'),
    schema_version: z.literal(SCHEMA_VERSION),
  })
  .describe('machine-readable descriptions of the catalogue');

export const ExpandedAccess = z
  .strictObject({
    protocol: z.literal('x402 v2'),
    description: z.string(),
    endpoints: z.array(PaidLink),
  })
  .describe('premium resources that extend this one, paid per request over x402');

/** Fields of the common envelope of the market regime and main brain responses (spec 2.1). */
export const freeSnapshotEnvelope = {
  success: z.boolean(),
  project: z.literal(PROJECT),
  endpoint: z.string(),
  name: z.string().optional(),
  version: z.literal(SNAPSHOT_VERSION),
  schema_version: z.literal(SCHEMA_VERSION),
  access: z.literal(FREE_ACCESS),
  status: SnapshotStatus,
  purpose: z.string(),
  endpoint_role: EndpointRole.optional(),
  agent_guidance: AgentGuidance.optional(),
  usage_characteristics: FreeUsageCharacteristics.optional(),
  source: SourceInfo,
  summary: z.string(),
  capability_boundary: CapabilityBoundary.optional(),
  developer_resources: DeveloperResources.optional(),
  expanded_access: ExpandedAccess.optional(),
  related_resources: RelatedLinks.optional(),
  truth_statement: z.string().optional(),
  disclaimer: z.literal(DISCLAIMER).optional(),
  // Shown by the published examples rather than the formal table.
  updated: IsoTimestamp.describe('when this snapshot was generated'),
  educational_only: z.literal(true),
  // Honest labelling: simulated, live or replayed numbers.
  source_mode: DataMode.describe('simulated, live or replay: where the numbers came from'),
};
