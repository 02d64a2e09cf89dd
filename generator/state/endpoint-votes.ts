// Each run imports the votes that the vote endpoint (POST /arena/vote) accepted since the last run: from its SQLite
// file on Node, or from a Worker's export route (GET /arena/votes/export, bearer token) on Cloudflare. A vote that
// fails the checks is reported and skipped (it would fail on every run); it never stops the run's publishing.
//
// Each vote store numbers its votes from 1, so a new store (the file deleted or moved, a new machine) numbers again
// what an older one numbered already. The import keeps a position per source (the file, the export URL) with the
// vote it was saved after; when the store no longer holds that vote at that number, the store is read again from
// its first vote, the run says so, and the votes already imported are skipped (never counted twice).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { openSqliteVoteStore } from '../../paywall-worker/arena-vote/store-sqlite.ts';
import type { VoteStore } from '../../paywall-worker/arena-vote/store.ts';
import type { ArenaStore } from './store.ts';
import { importPosition, importSignedVotes, positionHolds, resetImportPosition } from './votes.ts';

type Warn = (line: string) => void;
const toStderr: Warn = (line) => console.error(line);

/** Votes read from a store in one run; the rest wait for the next runs (a Worker's export gives 1000 at most). */
const PAGE = 10_000;

async function importFrom(
  store: ArenaStore,
  source: string,
  votes: Pick<VoteStore, 'since'>,
  now: number,
  warn: Warn,
) {
  const position = importPosition(store, source);
  let from = position?.seq ?? 0;
  // The page from the position's own vote on: it shows whether the store is still the one read last time.
  let page = await votes.since(Math.max(0, from - 1), PAGE);
  if (
    position &&
    !positionHolds(
      store,
      position,
      page.find((v) => v.seq === from),
    )
  ) {
    warn(
      `emi generate: the vote store ${source} does not hold the vote imported at its position ${from} ` +
        '(a new or replaced store, or another vote source numbering from 1): reading it again from its first ' +
        'vote; votes already imported are not counted twice',
    );
    resetImportPosition(store, source);
    from = 0;
    page = await votes.since(0, PAGE);
  }
  return importSignedVotes(
    store,
    page,
    now,
    (problems) =>
      warn(`emi generate: signed votes refused by the arena rules and skipped: ${problems.join('; ')}`),
    { source, from },
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
    return await importFrom(store, resolve(voteFile), votes, now, warn);
  } finally {
    votes.close();
  }
};

/** The export route of the Worker at `workerUrl`. */
const exportUrl = (workerUrl: string): URL => new URL('/arena/votes/export', workerUrl);

/** The Worker's accepted votes, read from its export route. */
export const exportedVotes = (workerUrl: string, token: string): Pick<VoteStore, 'since'> => ({
  async since(after) {
    const url = exportUrl(workerUrl);
    url.searchParams.set('after', String(after));
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
    return await importFrom(store, exportUrl(workerUrl).href, exportedVotes(workerUrl, token), now, warn);
  } catch (error) {
    warn(`emi generate: signed votes not imported from ${workerUrl}: ${(error as Error).message}`);
    return 0;
  }
}
