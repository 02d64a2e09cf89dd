// The main brain's track record as a run publishes it (statistics.main_brain.public_performance, which the main
// brain, the paid main brain and the teacher lessons share), read from a store at `asOfMs` through the run's own
// view and bodies, for tests that check what a store's rounds add up to.
import type { DataMode } from '../../schemas/common.ts';
import type { PublicPerformance } from '../../schemas/performance.ts';
import { buildArenaBodies } from '../../generator/engines/arena/bodies.ts';
import type { ArenaStore } from '../../generator/state/store.ts';
import { readArenaView } from '../../generator/state/view.ts';

export const publishedTrackRecord = (
  store: ArenaStore,
  asOfMs: number,
  mode: DataMode = 'simulated',
): PublicPerformance =>
  buildArenaBodies(
    readArenaView(store, {
      mode,
      clock: { asOf: asOfMs, generatedAt: asOfMs, nextUpdateDue: asOfMs + 60_000 },
      brainCalls: [],
      prices: {},
    }),
  ).statistics.main_brain.public_performance;
