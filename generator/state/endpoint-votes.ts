// Each run imports the votes that the vote endpoint (POST /arena/vote) accepted since the last run: from its SQLite
// file on Node, or from a Worker's export route (GET /arena/votes/export, bearer token) on Cloudflare. A vote that
// fails the checks is reported and skipped (it would fail on every run); it never stops the run's publishing.
//
// Each vote store numbers its votes from 1, so a new store (the file deleted or moved, a new machine) numbers again
// what an older one numbered already. The import keeps a position per source (the file, the export URL) with the
// vote it was saved after; when the store no longer holds that vote at that number, the store is read again from
// its first vote, the run says so, and the votes already imported are skipped (never counted twice).
//
// A vote store that is set up but cannot be read (the Worker unreachable or refusing the token; the file missing
// after runs read it, or unreadable) is no reason to stop publishing, but its votes were promised to count: the
// import says so (`unread`) with the time through which the store was last read whole, and the arena step holds
// the rounds whose votes may be waiting there (step.ts).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { openSqliteVoteStore } from '../../paywall-worker/arena-vote/store-sqlite.ts';
import type { SqliteVoteStore } from '../../paywall-worker/arena-vote/store-sqlite.ts';
import type { StoredVote, VoteStore } from '../../paywall-worker/arena-vote/store.ts';
import { VOTE_STORE_FILE } from '../defaults.ts';
import { RESOLVE_WINDOW_MINUTES } from '../engines/arena/rounds.ts';
import { iso } from '../engines/clock.ts';
import type { ArenaStore } from './store.ts';
import {
  importPosition,
  importSignedVotes,
  positionHolds,
  resetImportPosition,
  setVotesReadThrough,
  votesDue,
  votesReadThrough,
} from './votes.ts';

type Warn = (line: string) => void;
const toStderr: Warn = (line) => console.error(line);

/** Votes asked for at once: the most a Worker's export answers with. The backlog is read whole, page by page. */
const PAGE = 1000;

/** A vote store that is set up but could not be read by this run: the votes it holds may be waiting. */
export interface UnreadVotes {
  /** One line: which store, why, and what it means for the rounds (stderr and the run report). */
  problem: string;
  /** The time through which it was last read whole (votesReadThrough); null when no run read it yet. */
  readThrough: number | null;
}

export interface VoteImport {
  /** Votes written to the arena store by this run. */
  imported: number;
  /** Set when a vote store that is set up could not be read; null when it was read, or none is set up. */
  unread: UnreadVotes | null;
}

/** The vote store itself failed (unreachable, refused, unreadable), as opposed to the arena store. */
class VoteStoreUnreadable extends Error {}

const unreadable = (error: unknown): VoteStoreUnreadable =>
  error instanceof VoteStoreUnreadable
    ? error
    : new VoteStoreUnreadable(error instanceof Error ? error.message : String(error));

/** Every vote of `votes` numbered after `after`, page by page. */
async function votesAfter(votes: Pick<VoteStore, 'since'>, after: number): Promise<StoredVote[]> {
  const all: StoredVote[] = [];
  let page: StoredVote[];
  do {
    const from = all.at(-1)?.seq ?? after;
    page = await votes.since(from, PAGE).catch((error: unknown) => {
      throw unreadable(error);
    });
    all.push(...page);
    // A Worker's export answers at most PAGE votes whatever is asked: a short page is the last one.
  } while (page.length === PAGE);
  return all;
}

async function importFrom(
  store: ArenaStore,
  source: string,
  votes: Pick<VoteStore, 'since'>,
  now: number,
  warn: Warn,
): Promise<number> {
  const position = importPosition(store, source);
  let from = position?.seq ?? 0;
  // The votes from the position's own one on: it shows whether the store is still the one read last time.
  let read = await votesAfter(votes, Math.max(0, from - 1));
  if (
    position &&
    !positionHolds(
      store,
      position,
      read.find((v) => v.seq === from),
    )
  ) {
    warn(
      `emi generate: the vote store ${source} does not hold the vote imported at its position ${from} ` +
        '(a new or replaced store, or another vote source numbering from 1): reading it again from its first ' +
        'vote; votes already imported are not counted twice',
    );
    resetImportPosition(store, source);
    from = 0;
    read = await votesAfter(votes, 0);
  }
  const imported = importSignedVotes(
    store,
    read,
    now,
    (problems) =>
      warn(`emi generate: signed votes refused by the arena rules and skipped: ${problems.join('; ')}`),
    { source, from },
  );
  // Read whole through the run's time (by this machine's clock too: a simulated run may describe a later time
  // than the votes that are still to come), short of the first vote left waiting for a later run.
  const { waiting } = votesDue(read, from, now);
  const through = waiting.reduce((t, v) => Math.min(t, v.receivedAt - 1), Math.min(now, Date.now()));
  setVotesReadThrough(store, source, through);
  return imported;
}

/** What an unread store means for the rounds, after why it was not read. */
const unread = (store: ArenaStore, source: string, cause: string): VoteImport => ({
  imported: 0,
  unread: {
    problem:
      `the vote store ${source} could not be read (${cause}): ended rounds whose votes may be in it are not ` +
      `resolved until a run reads it, and are voided if none does within ${RESOLVE_WINDOW_MINUTES} minutes of ` +
      'their end',
    readThrough: votesReadThrough(store, source),
  },
});

/** Imports from `source`, or says it could not be read; a failure of the arena store itself is thrown. */
async function importOrUnread(
  store: ArenaStore,
  source: string,
  open: () => Pick<VoteStore, 'since'> & { close?: () => void },
  now: number,
  warn: Warn,
): Promise<VoteImport> {
  let votes: ReturnType<typeof open> | undefined;
  try {
    votes = open();
    return { imported: await importFrom(store, source, votes, now, warn), unread: null };
  } catch (error) {
    if (!(error instanceof VoteStoreUnreadable)) throw error;
    return unread(store, source, error.message);
  } finally {
    votes?.close?.();
  }
}

/**
 * The votes of the Node vote endpoint's store file. A missing file is no vote store when no run ever read one
 * there; once one was read, its absence is a store that cannot be read.
 */
export async function importFromVoteFile(
  store: ArenaStore,
  voteFile: string,
  now: number,
  warn: Warn = toStderr,
): Promise<VoteImport> {
  const source = resolve(voteFile);
  if (!existsSync(voteFile)) {
    const readThrough = votesReadThrough(store, source);
    if (readThrough === null) return { imported: 0, unread: null };
    return unread(
      store,
      source,
      `the file is missing, last read whole at ${iso(readThrough)}; restore it, or, if its vote endpoint was ` +
        `retired, \`touch ${source}\` ends the wait`,
    );
  }
  const open = (): SqliteVoteStore => {
    try {
      return openSqliteVoteStore(voteFile);
    } catch (error) {
      throw unreadable(error);
    }
  };
  return importOrUnread(store, source, open, now, warn);
}

/** The export route of the Worker at `workerUrl`. */
const exportUrl = (workerUrl: string): URL => new URL('/arena/votes/export', workerUrl);

/** The Worker's accepted votes, read from its export route. */
export const exportedVotes = (workerUrl: string, token: string): Pick<VoteStore, 'since'> => ({
  async since(after) {
    const url = exportUrl(workerUrl);
    url.searchParams.set('after', String(after));
    const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) {
      const refused = response.status === 401 ? ': EMI_VOTE_EXPORT_TOKEN does not match its token' : '';
      throw new Error(`${url.origin}/arena/votes/export answered ${response.status}${refused}`);
    }
    const body = (await response.json()) as { votes?: unknown };
    if (!Array.isArray(body.votes)) throw new Error(`${url.origin}/arena/votes/export answered no vote list`);
    return body.votes as StoredVote[];
  },
});

/** The votes taken by a Worker (EMI_VOTE_EXPORT_URL, EMI_VOTE_EXPORT_TOKEN), read from its export route. */
export async function importFromWorker(
  store: ArenaStore,
  workerUrl: string,
  token: string,
  now: number,
  warn: Warn = toStderr,
): Promise<VoteImport> {
  const source = exportUrl(workerUrl).href;
  return importOrUnread(store, source, () => exportedVotes(workerUrl, token), now, warn);
}

/**
 * A run's import: from the Worker's export when EMI_VOTE_EXPORT_URL is set, else from the state folder's vote store
 * file (`emi paywall`'s, `emi up`'s).
 */
export const importRunVotes = (
  store: ArenaStore,
  stateDir: string,
  now: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<VoteImport> => {
  const { EMI_VOTE_EXPORT_URL: workerUrl, EMI_VOTE_EXPORT_TOKEN: token = '' } = env;
  return workerUrl
    ? importFromWorker(store, workerUrl, token, now)
    : importFromVoteFile(store, resolve(stateDir, VOTE_STORE_FILE), now);
};

/** The number of votes imported from a vote store file; one that cannot be read is said through `warn`. */
export const importEndpointVotes = async (
  store: ArenaStore,
  voteFile: string,
  now: number,
  warn: Warn = toStderr,
): Promise<number> => countImported(await importFromVoteFile(store, voteFile, now, warn), warn);

/** The number of votes imported from a Worker; one that cannot be read is said through `warn`, not thrown. */
export const importWorkerVotes = async (
  store: ArenaStore,
  workerUrl: string,
  token: string,
  now: number,
  warn: Warn = toStderr,
): Promise<number> => countImported(await importFromWorker(store, workerUrl, token, now, warn), warn);

const countImported = (result: VoteImport, warn: Warn): number => {
  if (result.unread) warn(`emi generate: ${result.unread.problem}`);
  return result.imported;
};
