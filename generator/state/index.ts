// The arena store's public surface for the pipeline and the CLI.
export { openArenaStore, DEFAULT_STORE_PATH, type ArenaStore } from './store.ts';
export { withRunLock, runOwner, ArenaStoreBusyError, DEFAULT_LOCK_TTL_MS } from './lock.ts';
export { runArenaStep, type ArenaStepInput } from './step.ts';
export { backfill, MAX_BACKFILL_DAYS, type BackfillOptions, type BackfillResult } from './backfill.ts';
export { addHumanVotes, importVotesJsonl, VoteValidationError, type RawVote } from './votes.ts';
export type { ArenaBodies } from '../engines/arena/bodies.ts';
export type { BrainCall } from '../engines/arena/types.ts';
