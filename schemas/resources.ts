// The registry of every published resource: its URL path, where its file lives, its schema and its terms.
// Publishing, validation, the preview server, the paywall and the OpenAPI document all read this one list.
import type * as z from 'zod';
import { TRACKED_ASSETS } from './common.ts';
import { FREE_CATALOG, PAID_CATALOG } from './catalog.ts';
import type { CatalogEntry, PaidCatalogEntry } from './catalog.ts';
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

export interface FreeResource extends CatalogEntry {
  access: 'free';
  id: FreeId;
  schema: z.ZodType;
}

export interface PaidResource extends PaidCatalogEntry {
  access: 'paid';
  id: PaidId;
  schema: z.ZodType;
}

export type PublishedResource = FreeResource | PaidResource;
type FreeId = keyof typeof FREE_CATALOG;
type PaidId = keyof typeof PAID_CATALOG;

const FREE_SCHEMAS: Record<FreeId, z.ZodType> = {
  marketRegime: MarketRegimeResponse,
  mainBrain: MainBrainResponse,
  liquidityLite: LiquidityLiteResponse,
  derivatives: DerivativesResponse,
  humanConsensus: HumanConsensusResponse,
  teacherLessons: TeacherLessonsResponse,
  reasoning: ReasoningResponse,
  statistics: StatisticsResponse,
  sharedIntelligence: SharedIntelligenceResponse,
};

const PAID_SCHEMAS: Record<PaidId, z.ZodType> = {
  paidMarketRegime: PaidMarketRegime,
  paidMainBrain: PaidMainBrain,
  atlas: Atlas,
  atlasHumanReport: AtlasHumanReport,
};

export const FREE_RESOURCES: readonly FreeResource[] = (Object.keys(FREE_CATALOG) as FreeId[]).map((id) => ({
  access: 'free',
  id,
  ...FREE_CATALOG[id],
  schema: FREE_SCHEMAS[id],
}));

/** `reasoning.php?asset=X` is served from one file per asset; hosts map the query to this file. */
export const reasoningFileFor = (asset: string): string => `api/reasoning/${asset}.json`;
export const REASONING_FILES = TRACKED_ASSETS.map((asset) => ({ asset, file: reasoningFileFor(asset) }));

export const PAID_RESOURCES: readonly PaidResource[] = (Object.keys(PAID_CATALOG) as PaidId[]).map((id) => ({
  access: 'paid',
  id,
  ...PAID_CATALOG[id],
  schema: PAID_SCHEMAS[id],
}));
