// Catalogue links shared by the free bodies: related resources, the paid upgrade path and agent guidance.
// Paths and prices come from the catalogue (schemas/catalog.ts), the same data the registry is built from.
import type * as z from 'zod';
import { SCHEMA_VERSION } from '../../schemas/common.ts';
import { FREE_CATALOG, PAID_CATALOG } from '../../schemas/catalog.ts';
import type { PaidCatalogEntry } from '../../schemas/catalog.ts';
import type {
  DeveloperResources,
  ExpandedAccess,
  FreeUsageCharacteristics,
  PaidLink,
  RelatedLinks,
} from '../../schemas/envelope.ts';

export const PATHS = {
  marketRegime: FREE_CATALOG.marketRegime.path,
  mainBrain: FREE_CATALOG.mainBrain.path,
  liquidityLite: FREE_CATALOG.liquidityLite.path,
  derivatives: FREE_CATALOG.derivatives.path,
  reasoning: FREE_CATALOG.reasoning.path,
  statistics: FREE_CATALOG.statistics.path,
  teacherLessons: FREE_CATALOG.teacherLessons.path,
  humanConsensus: FREE_CATALOG.humanConsensus.path,
} as const;

export const REASONING_TEMPLATE = `${PATHS.reasoning}?asset={asset}`;

const paidLink = (entry: PaidCatalogEntry, description: string): PaidLink => ({
  path: entry.path,
  product_id: entry.productId ?? '',
  price_usd: entry.priceUsd,
  description,
});

export const PAID_MARKET_REGIME = paidLink(
  PAID_CATALOG.paidMarketRegime,
  'Paid market regime: mode, state, risk score and confidence, settled per request over x402.',
);
export const PAID_MAIN_BRAIN = paidLink(
  PAID_CATALOG.paidMainBrain,
  'Paid main brain: the per-asset reading with its evidence, settled per request over x402.',
);
export const PAID_ATLAS = paidLink(
  PAID_CATALOG.atlas,
  'Paid atlas for developers and AI agents: regime, assets, positioning and liquidity in one body.',
);
/** The paid upgrade path a free body offers (its `expanded_access`). */
export const expandedAccess = (...endpoints: PaidLink[]): z.infer<typeof ExpandedAccess> => ({
  protocol: 'x402 v2',
  description: 'Paid resources extend this reading; each request is paid exactly, with no account.',
  endpoints,
});

export const USAGE: z.infer<typeof FreeUsageCharacteristics> = {
  machine_readable: true,
  stable_schema: true,
  cache_seconds: 60,
  authentication: 'none',
  payment_required: false,
  response_format: 'application/json',
};

export const DEVELOPER_RESOURCES: z.infer<typeof DeveloperResources> = {
  openapi_json: '/openapi.json',
  openapi_yaml: '/openapi.yaml',
  llms_txt: '/llms.txt',
  schema_version: SCHEMA_VERSION,
};

export const relatedResources = (defaultAsset: string): z.infer<typeof RelatedLinks> => ({
  market_regime: { path: PATHS.marketRegime, description: 'market-wide risk regime and its evidence' },
  main_brain: { path: PATHS.mainBrain, description: 'per-asset bias and confidence with market context' },
  liquidity_lite: { path: PATHS.liquidityLite, description: 'spreads, depth and market structure per asset' },
  derivatives: { path: PATHS.derivatives, description: 'funding, open interest and liquidations per asset' },
  reasoning: {
    path: `${PATHS.reasoning}?asset=${defaultAsset}`,
    description: 'the reading of one asset in plain language',
  },
  statistics: { path: PATHS.statistics, description: 'how the brain and the arena have fared so far' },
});
