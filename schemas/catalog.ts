// The product catalogue as plain data: paths, files, product ids, prices and cache terms. It imports no schema,
// so response bodies can link to other products without a circular import; `resources.ts` adds the schemas.
import { atomicFromUsd } from './usdc.ts';

export interface CatalogEntry {
  title: string;
  productId: string | null;
  /** URL path relative to the base URL. */
  path: string;
  /** File under the public site root (free) or the private paid root (paid). */
  file: string;
  cacheSeconds: number;
  stability: 'stable' | 'evolving';
}

export interface PaidCatalogEntry extends CatalogEntry {
  /** Price in USDC atomic units (6 decimals). */
  amountAtomic: string;
  priceUsd: string;
}

// The product id keeps its literal type (`'SVC-X402-002'`): the bodies' schemas and the engines read it from here.
const free = <Id extends string | null>(
  title: string,
  productId: Id,
  path: string,
): CatalogEntry & { productId: Id } => ({
  title,
  productId,
  path,
  file: path.slice(1),
  cacheSeconds: 60,
  stability: 'stable',
});

export const FREE_CATALOG = {
  marketRegime: free('Market regime', 'SVC-API-002', '/api/market-regime.php'),
  mainBrain: free('Main brain snapshot', 'SVC-API-001', '/api/main-brain.php'),
  liquidityLite: free('Liquidity lite', 'SVC-API-003', '/api/liquidity-lite.php'),
  derivatives: free('Derivatives intelligence', 'SVC-API-004', '/api/derivatives.php'),
  humanConsensus: free('Human consensus (active round)', null, '/api/human-consensus.php'),
  teacherLessons: free('Teacher lessons', null, '/api/teacher-lessons.php'),
  reasoning: free('Reasoning (default asset BTC)', null, '/api/reasoning.php'),
  statistics: free('Statistics', null, '/api/statistics.php'),
  sharedIntelligence: free('Shared intelligence', null, '/arena/get_shared_intelligence.php'),
} as const satisfies Record<string, CatalogEntry>;

const paid = <Id extends string | null>(
  title: string,
  productId: Id,
  path: string,
  priceUsd: string,
  cacheSeconds: number,
): PaidCatalogEntry & { productId: Id } => ({
  title,
  productId,
  path,
  file: `${path.slice('/api/'.length, -'.php'.length)}.json`,
  cacheSeconds,
  // The spec gives the atlas cache 0 and "evolving"; the human report, a report per purchase, follows it.
  stability: cacheSeconds === 0 ? 'evolving' : 'stable',
  amountAtomic: atomicFromUsd(priceUsd).toString(),
  priceUsd,
});

export const PAID_CATALOG = {
  paidMarketRegime: paid('Paid market regime', 'SVC-X402-001', '/api/x402-market-regime.php', '0.01', 60),
  paidMainBrain: paid('Paid main brain', 'SVC-X402-003', '/api/x402-main-brain.php', '0.01', 60),
  atlas: paid('Paid atlas (developer / AI)', 'SVC-X402-002', '/api/x402-atlas.php', '0.02', 0),
  atlasHumanReport: paid(
    'Atlas human report (people, browser)',
    null,
    '/api/x402-atlas-human-report.php',
    '0.10',
    0,
  ),
} as const satisfies Record<string, PaidCatalogEntry>;
