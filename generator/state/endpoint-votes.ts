// Each run imports the votes that the vote endpoint (POST /arena/vote on Node) accepted since the last run. A
// batch that fails the checks is refused whole and reported; it never stops the run's publishing.
import { existsSync } from 'node:fs';
import { openSqliteVoteStore } from '../../paywall-worker/arena-vote/store-sqlite.ts';
import type { ArenaStore } from './store.ts';
import { importSignedVotes, signedVotesCursor, VoteValidationError } from './votes.ts';

export const importEndpointVotes = async (
  store: ArenaStore,
  voteFile: string,
  now: number,
  warn: (line: string) => void = (line) => console.error(line),
): Promise<number> => {
  if (!existsSync(voteFile)) return 0;
  const votes = openSqliteVoteStore(voteFile);
  try {
    const fresh = await votes.since(signedVotesCursor(store), 10_000);
    return importSignedVotes(store, fresh, now);
  } catch (error) {
    if (!(error instanceof VoteValidationError)) throw error;
    warn(`emi generate: signed votes not imported (nothing was written): ${error.message}`);
    return 0;
  } finally {
    votes.close();
  }
};
