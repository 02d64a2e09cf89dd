// Catalogue links shared by the free bodies: related resources, the paid upgrade path and agent guidance.
// Paths and prices mirror schemas/resources.ts (which cannot be imported here: it imports these bodies' schemas).
import type { z } from 'zod';
import { SCHEMA_VERSION } from '../../schemas/common.ts';
import type {
  DeveloperResources,
  FreeUsageCharacteristics,
  PaidLink,
  RelatedLinks,
} from '../../schemas/envelope.ts';

export const PATHS = {
  marketRegime: '/api/market-regime.php',
  mainBrain: '/api/main-brain.php',
  liquidityLite: '/api/liquidity-lite.php',
  derivatives: '/api/derivatives.php',
  reasoning: '/api/reasoning.php',
  statistics: '/api/statistics.php',
  teacherLessons: '/api/teacher-lessons.php',
  humanConsensus: '/api/human-consensus.php',
} as const;

export const REASONING_TEMPLATE = `${PATHS.reasoning}?asset={asset}`;

export const PAID_MARKET_REGIME: PaidLink = {
  path: '/api/x402-market-regime.php',
  product_id: 'SVC-X402-001',
  price_usd: '0.01',
  description: 'Paid market regime: mode, state, risk score and confidence, settled per request over x402.',
};
export const PAID_MAIN_BRAIN: PaidLink = {
  path: '/api/x402-main-brain.php',
  product_id: 'SVC-X402-003',
  price_usd: '0.01',
  description: 'Paid main brain: the per-asset reading with its evidence, settled per request over x402.',
};
export const PAID_ATLAS: PaidLink = {
  path: '/api/x402-atlas.php',
  product_id: 'SVC-X402-002',
  price_usd: '0.02',
  description:
    'Paid atlas for developers and AI agents: regime, assets, positioning and liquidity in one body.',
};
export const UPGRADE_ENDPOINTS: readonly PaidLink[] = [PAID_MARKET_REGIME, PAID_MAIN_BRAIN, PAID_ATLAS];

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
