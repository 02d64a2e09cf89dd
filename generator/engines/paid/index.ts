// Entry point of the paid engines: the free bodies of one run in, the four paid bodies out (keyed like the
// registry's PAID_RESOURCES ids). Pure and deterministic; the generator writes them to the private paid/ folder.
import type { Atlas } from '../../../schemas/paid/atlas.ts';
import type { AtlasHumanReport } from '../../../schemas/paid/atlas-human-report.ts';
import type { PaidMainBrain } from '../../../schemas/paid/paid-main-brain.ts';
import type { PaidMarketRegime } from '../../../schemas/paid/paid-market-regime.ts';
import type { RunClock } from '../clock.ts';
import type { FreeSnapshots } from '../index.ts';
import { atlasBody } from './atlas.ts';
import { atlasHumanReportBody } from './human-report.ts';
import { joinAssets } from './join.ts';
import { paidMainBrainBody } from './main-brain.ts';
import { paidMarketRegimeBody } from './market-regime.ts';

export interface PaidBodies {
  paidMarketRegime: PaidMarketRegime;
  paidMainBrain: PaidMainBrain;
  atlas: Atlas;
  atlasHumanReport: AtlasHumanReport;
}

export function buildPaidBodies(free: FreeSnapshots, clock: RunClock): PaidBodies {
  const views = joinAssets(free);
  const atlas = atlasBody(free, views, clock);
  return {
    paidMarketRegime: paidMarketRegimeBody(free, views, clock),
    paidMainBrain: paidMainBrainBody(free, views, clock),
    atlas,
    atlasHumanReport: atlasHumanReportBody(free, atlas, views),
  };
}
