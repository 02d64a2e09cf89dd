// The registry of every published resource: its URL path, where its file lives, its schema and its terms.
// Publishing, validation, the preview server, the paywall and the OpenAPI document all read this one list.
import type { z } from 'zod';
import { TRACKED_ASSETS } from './common.ts';
import { MarketRegimeResponse } from './market-regime.ts';
import { MainBrainResponse } from './main-brain.ts';
import { LiquidityLiteResponse } from './liquidity-lite.ts';
import { DerivativesResponse } from './derivatives.ts';
import { ReasoningResponse } from './reasoning.ts';
import { HumanConsensusResponse, SharedIntelligenceResponse } from './arena.ts';
import { TeacherLessonsResponse } from './teacher-lessons.ts';
import { StatisticsResponse } from './statistics.ts';
import { PaidMarketRegime } from './paid/paid-market-regime.ts';
import { PaidMainBrain } from './paid/paid-main-brain.ts';
import { Atlas } from './paid/atlas.ts';
import { AtlasHumanReport } from './paid/atlas-human-report.ts';

export interface FreeResource {
  access: 'free';
  id: string;
  title: string;
  productId: string | null;
  /** URL path relative to the base URL. */
  path: string;
  /** File under the public site root (`site/`). */
  file: string;
  schema: z.ZodType;
  cacheSeconds: number;
  stability: 'stable' | 'evolving';
}

export interface PaidResource {
  access: 'paid';
  id: string;
  title: string;
  productId: string | null;
  path: string;
  /** File under the private paid root (`paid/`), never under the public site. */
  file: string;
  schema: z.ZodType;
  cacheSeconds: number;
  stability: 'stable' | 'evolving';
  /** Price in USDC atomic units (6 decimals). */
  amountAtomic: string;
  priceUsd: string;
}

export type PublishedResource = FreeResource | PaidResource;

const free = (r: Omit<FreeResource, 'access' | 'cacheSeconds' | 'stability'>): FreeResource => ({
  access: 'free',
  cacheSeconds: 60,
  stability: 'stable',
  ...r,
});

export const FREE_RESOURCES: readonly FreeResource[] = [
  free({
    id: 'marketRegime',
    title: 'Market regime',
    productId: 'SVC-API-002',
    path: '/api/market-regime.php',
    file: 'api/market-regime.php',
    schema: MarketRegimeResponse,
  }),
  free({
    id: 'mainBrain',
    title: 'Main brain snapshot',
    productId: 'SVC-API-001',
    path: '/api/main-brain.php',
    file: 'api/main-brain.php',
    schema: MainBrainResponse,
  }),
  free({
    id: 'liquidityLite',
    title: 'Liquidity lite',
    productId: 'SVC-API-003',
    path: '/api/liquidity-lite.php',
    file: 'api/liquidity-lite.php',
    schema: LiquidityLiteResponse,
  }),
  free({
    id: 'derivatives',
    title: 'Derivatives intelligence',
    productId: 'SVC-API-004',
    path: '/api/derivatives.php',
    file: 'api/derivatives.php',
    schema: DerivativesResponse,
  }),
  free({
    id: 'humanConsensus',
    title: 'Human consensus (active round)',
    productId: null,
    path: '/api/human-consensus.php',
    file: 'api/human-consensus.php',
    schema: HumanConsensusResponse,
  }),
  free({
    id: 'teacherLessons',
    title: 'Teacher lessons',
    productId: null,
    path: '/api/teacher-lessons.php',
    file: 'api/teacher-lessons.php',
    schema: TeacherLessonsResponse,
  }),
  free({
    id: 'reasoning',
    title: 'Reasoning (default asset BTC)',
    productId: null,
    path: '/api/reasoning.php',
    file: 'api/reasoning.php',
    schema: ReasoningResponse,
  }),
  free({
    id: 'statistics',
    title: 'Statistics',
    productId: null,
    path: '/api/statistics.php',
    file: 'api/statistics.php',
    schema: StatisticsResponse,
  }),
  free({
    id: 'sharedIntelligence',
    title: 'Shared intelligence',
    productId: null,
    path: '/arena/get_shared_intelligence.php',
    file: 'arena/get_shared_intelligence.php',
    schema: SharedIntelligenceResponse,
  }),
];

/** `reasoning.php?asset=X` is served from one file per asset; hosts map the query to this file. */
export const reasoningFileFor = (asset: string): string => `api/reasoning/${asset}.json`;
export const REASONING_FILES = TRACKED_ASSETS.map((asset) => ({ asset, file: reasoningFileFor(asset) }));

export const PAID_RESOURCES: readonly PaidResource[] = [
  {
    access: 'paid',
    id: 'paidMarketRegime',
    title: 'Paid market regime',
    productId: 'SVC-X402-001',
    path: '/api/x402-market-regime.php',
    file: 'x402-market-regime.json',
    schema: PaidMarketRegime,
    cacheSeconds: 60,
    stability: 'stable',
    amountAtomic: '10000',
    priceUsd: '0.01',
  },
  {
    access: 'paid',
    id: 'paidMainBrain',
    title: 'Paid main brain',
    productId: 'SVC-X402-003',
    path: '/api/x402-main-brain.php',
    file: 'x402-main-brain.json',
    schema: PaidMainBrain,
    cacheSeconds: 60,
    stability: 'stable',
    amountAtomic: '10000',
    priceUsd: '0.01',
  },
  {
    access: 'paid',
    id: 'atlas',
    title: 'Paid atlas (developer / AI)',
    productId: 'SVC-X402-002',
    path: '/api/x402-atlas.php',
    file: 'x402-atlas.json',
    schema: Atlas,
    cacheSeconds: 0,
    stability: 'evolving',
    amountAtomic: '20000',
    priceUsd: '0.02',
  },
  {
    access: 'paid',
    id: 'atlasHumanReport',
    title: 'Atlas human report (people, browser)',
    productId: null,
    path: '/api/x402-atlas-human-report.php',
    file: 'x402-atlas-human-report.json',
    schema: AtlasHumanReport,
    cacheSeconds: 0,
    stability: 'evolving',
    amountAtomic: '100000',
    priceUsd: '0.10',
  },
];
