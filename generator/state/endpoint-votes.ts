// Each run imports the votes that the vote endpoint (POST /arena/vote) accepted since the last run: from its SQLite
// file on Node, or from a Worker's export route (GET /arena/votes/export, bearer token) on Cloudflare. A vote that
// fails the checks is reported and skipped (it would fail on every run); it never stops the run's publishing.
import { existsSync } from 'node:fs';
import { openSqliteVoteStore } from '../../paywall-worker/arena-vote/store-sqlite.ts';
import type { VoteStore } from '../../paywall-worker/arena-vote/store.ts';
import type { ArenaStore } from './store.ts';
import { importSignedVotes, signedVotesCursor } from './votes.ts';

type Warn = (line: string) => void;
const toStderr: Warn = (line) => console.error(line);

async function importFrom(store: ArenaStore, source: Pick<VoteStore, 'since'>, now: number, warn: Warn) {
  const fresh = await source.since(signedVotesCursor(store), 10_000);
  return importSignedVotes(store, fresh, now, (problems) =>
    warn(`emi generate: signed votes refused by the arena rules and skipped: ${problems.join('; ')}`),
  );
}

export const importEndpointVotes = async (
  store: ArenaStore,
  voteFile: string,
  now: number,
  warn: Warn = toStderr,
): Promise<number> => {
  if (!existsSync(voteFile)) return 0;
  const votes = openSqliteVoteStore(voteFile);
  try {
    return await importFrom(store, votes, now, warn);
  } finally {
    votes.close();
  }
};

/** The Worker's accepted votes, read from its export route. */
export const exportedVotes = (workerUrl: string, token: string): Pick<VoteStore, 'since'> => ({
  async since(after) {
    const url = new URL(`/arena/votes/export?after=${after}`, workerUrl);
    const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) throw new Error(`${url.origin}/arena/votes/export answered ${response.status}`);
    return ((await response.json()) as { votes: Awaited<ReturnType<VoteStore['since']>> }).votes;
  },
});

/** Votes taken by a Worker (EMI_VOTE_EXPORT_URL, EMI_VOTE_EXPORT_TOKEN); an unreachable Worker is reported, not fatal. */
export async function importWorkerVotes(
  store: ArenaStore,
  workerUrl: string,
  token: string,
  now: number,
  warn: Warn = toStderr,
): Promise<number> {
  try {
    return await importFrom(store, exportedVotes(workerUrl, token), now, warn);
  } catch (error) {
    warn(`emi generate: signed votes not imported from ${workerUrl}: ${(error as Error).message}`);
    return 0;
  }
}
