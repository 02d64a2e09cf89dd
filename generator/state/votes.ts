// Human votes: validated one by one against the round rules (rules.ts), written all together or not at all.
// Voter ids are normalised (NFKC, case-folded) and hashed with the store's salt before they touch the database,
// and are never echoed back.
import { ARENA_PREDICTIONS, TRACKED_ASSETS, type ArenaPrediction } from '../../schemas/common.ts';
import { roundFromId, voteWindowProblem, votingRoundFor } from '../engines/arena/rules.ts';
import type { Round } from '../engines/arena/rounds.ts';
import { iso } from '../engines/clock.ts';
import { ensureRound, hasVoted, insertVote } from './repo.ts';
import { hashVoter, voterSalt, type ArenaStore } from './store.ts';

/** At most this many problems are listed; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 20;

export class VoteValidationError extends Error {
  constructor(readonly problems: string[]) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const more = problems.length - listed.length;
    super(
      problems.length === 1
        ? problems[0]!
        : `${problems.length} invalid votes: ${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
    );
    this.name = 'VoteValidationError';
  }
  /** The problems as shown: the first MAX_LISTED_PROBLEMS, then one line counting the rest. */
  get shown(): string[] {
    const more = this.problems.length - MAX_LISTED_PROBLEMS;
    return more > 0
      ? [...this.problems.slice(0, MAX_LISTED_PROBLEMS), `and ${more} more problems`]
      : this.problems;
  }
}

/** One vote as it arrives: from a JSON Lines record, the vote command's options or the vote endpoint's export. */
export interface RawVote {
  asset?: unknown;
  prediction?: unknown;
  voter?: unknown;
  at?: unknown; // RFC 3339, the voter's own claim: checked for form, never used to count the vote
  round_id?: unknown; // the round voted for; default the asset's round open to votes at arrival
}

interface ValidVote {
  round: Round;
  voterHash: string;
  prediction: ArenaPrediction;
  receivedAt: number;
}

const MAX_VOTER_LENGTH = 200;
/** RFC 3339 date-time: full date, 'T', full time with optional fraction, 'Z' or a numeric offset. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Look-alike voter ids are one voter: NFKC folds compatibility forms (full-width letters), then case folding. */
export const normaliseVoter = (voter: string): string =>
  voter.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').trim();

/** A value quoted for an error line, cut short so that one bad line can never make a huge message. */
const quote = (value: unknown): string => {
  const text = JSON.stringify(value ?? null) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
};

export const parseRfc3339 = (value: string): number => (RFC3339.test(value) ? Date.parse(value) : NaN);

/** Checks one vote against the rules and the store; returns the problem as one sentence, or the vote. */
const checkVote = (
  store: ArenaStore,
  salt: string,
  raw: RawVote,
  receivedAt: number,
  now: number,
): ValidVote | string => {
  if (raw.asset === undefined) return `asset is missing; expected one of ${TRACKED_ASSETS.join(', ')}`;
  const asset = typeof raw.asset === 'string' ? raw.asset.trim().toUpperCase() : '';
  if (!(TRACKED_ASSETS as readonly string[]).includes(asset)) {
    return `unknown asset ${quote(raw.asset)}; expected one of ${TRACKED_ASSETS.join(', ')}`;
  }
  if (raw.prediction === undefined) {
    return `prediction is missing; expected one of ${ARENA_PREDICTIONS.join(', ')}`;
  }
  const prediction = typeof raw.prediction === 'string' ? raw.prediction.trim().toUpperCase() : '';
  if (!(ARENA_PREDICTIONS as readonly string[]).includes(prediction)) {
    return `prediction ${quote(raw.prediction)} is not one of ${ARENA_PREDICTIONS.join(', ')}`;
  }
  const voter = typeof raw.voter === 'string' ? normaliseVoter(raw.voter) : '';
  if (voter === '' || voter.length > MAX_VOTER_LENGTH) {
    return `voter must be a non-empty string of at most ${MAX_VOTER_LENGTH} characters`;
  }
  if (raw.at !== undefined && raw.at !== null) {
    const at = typeof raw.at === 'string' ? parseRfc3339(raw.at) : NaN;
    if (!Number.isFinite(at)) {
      return `time ${quote(raw.at)} is not an RFC 3339 timestamp (e.g. 2025-01-01T09:55:00Z)`;
    }
    if (at > now) return `vote time ${iso(at)} is in the future`;
  }
  let round: Round | null;
  if (raw.round_id !== undefined && raw.round_id !== null) {
    round = typeof raw.round_id === 'string' ? roundFromId(raw.round_id) : null;
    if (!round) return `round_id ${quote(raw.round_id)} is not a round of the schedule`;
    if (round.asset !== asset) return `round ${round.id} plays ${round.asset}, not ${asset}`;
  } else {
    round = votingRoundFor(asset, receivedAt);
    if (!round) return `no ${asset} round takes votes at ${iso(receivedAt)}`;
  }
  const closed = voteWindowProblem(round, receivedAt);
  if (closed) return `vote received at ${iso(receivedAt)} does not count: ${closed}`;
  if (store.db.prepare('SELECT 1 FROM outcomes WHERE round_id = ?').get(round.id)) {
    return `round ${round.id} is already resolved and takes no more votes`;
  }
  const voterHash = hashVoter(salt, voter);
  if (hasVoted(store.db, round.id, voterHash)) return `this voter has already voted in round ${round.id}`;
  return { round, voterHash, prediction: prediction as ArenaPrediction, receivedAt };
};

export interface IncomingVote {
  label: string | null;
  raw: RawVote;
  /** When the server received it, by the server's clock; default the import time. */
  receivedAt?: number;
  /** Why the record is not a vote at all (a line that is not a vote object): listed in order with the others. */
  problem?: string;
}

/**
 * Validates every vote and writes them in one transaction; any problem rejects the whole batch with every
 * problem listed (prefixed with its label, e.g. "line 3"). Returns the votes written, each with its round.
 */
export const addHumanVotes = (
  store: ArenaStore,
  votes: IncomingVote[],
  now: number,
): Array<{ roundId: string }> => {
  const salt = voterSalt(store);
  const write = store.db.transaction(() => {
    const problems: string[] = [];
    const valid: ValidVote[] = [];
    const seen = new Map<string, string>(); // round + voter hash -> label of the first vote in this batch
    for (const { label, raw, receivedAt, problem } of votes) {
      const prefix = label ? `${label}: ` : '';
      if (problem !== undefined) {
        problems.push(prefix + problem);
        continue;
      }
      const arrival = receivedAt ?? now;
      if (arrival > now) {
        problems.push(`${prefix}received time ${iso(arrival)} is in the future`);
        continue;
      }
      const checked = checkVote(store, salt, raw, arrival, now);
      if (typeof checked === 'string') {
        problems.push(prefix + checked);
        continue;
      }
      const key = `${checked.round.id}/${checked.voterHash}`;
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        problems.push(`${prefix}this voter already voted in round ${checked.round.id} (${earlier})`);
        continue;
      }
      seen.set(key, label ?? 'earlier vote');
      valid.push(checked);
    }
    if (problems.length > 0) throw new VoteValidationError(problems);
    for (const v of valid) {
      ensureRound(store.db, v.round);
      insertVote(store.db, {
        roundId: v.round.id,
        voterHash: v.voterHash,
        prediction: v.prediction,
        at: v.receivedAt,
        source: 'human',
        replayed: false,
      });
    }
    return valid.map((v) => ({ roundId: v.round.id }));
  });
  return write.immediate();
};

/** The keys a vote record may have: a misspelt one (`round` for `round_id`) would otherwise be dropped silently. */
const VOTE_KEYS: readonly string[] = ['asset', 'prediction', 'voter', 'at', 'round_id'];

/** Why one JSON Lines record is not a vote object, or undefined when it is one. */
const recordProblem = (raw: unknown): string | undefined => {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'expected a JSON object';
  const unknown = Object.keys(raw).filter((key) => !VOTE_KEYS.includes(key));
  if (unknown.length === 0) return undefined;
  return (
    `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map(quote).join(', ')} ` +
    `(a vote has ${VOTE_KEYS.join(', ')})`
  );
};

/**
 * Parses JSON Lines (UTF-8 BOM accepted, blank lines skipped) and imports every vote, or none. Lines that are not
 * votes and votes the rules refuse are listed together, in line order.
 */
export const importVotesJsonl = (store: ArenaStore, text: string, now: number): number => {
  const body = text.replace(/^\uFEFF/, '');
  const votes: IncomingVote[] = [];
  let unparsed = 0;
  body.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const label = `line ${i + 1}`;
    try {
      const raw: unknown = JSON.parse(line);
      votes.push({ label, raw: raw as RawVote, problem: recordProblem(raw) });
    } catch {
      unparsed += 1;
      votes.push({ label, raw: {}, problem: 'not valid JSON' });
    }
  });
  if (votes.length === 0) throw new VoteValidationError(['the file holds no votes']);
  // A pretty-printed JSON document fails line by line; one sentence says what the file is instead.
  if (unparsed > 0 && isJson(body)) {
    throw new VoteValidationError([
      'the file is one JSON document, not JSON Lines: put each vote on a line of its own',
    ]);
  }
  return addHumanVotes(store, votes, now).length;
};

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** A vote accepted by the vote endpoint (paywall-worker/arena-vote), as its store exports it. */
export interface SignedVoteRecord {
  /** Its number in the store it came from: increasing in acceptance order, from 1 in a new store. */
  seq: number;
  address: string;
  asset: string;
  prediction: string;
  roundId: string;
  receivedAt: number;
  /** The voter's signature (unique per vote in a store); both vote stores export it. */
  signature?: string;
}

/**
 * Where the import of one vote store stands: the number of the last vote read from it, and what that vote was (its
 * `anchor`), so that a store whose numbering started again (a new file, a new machine) is told from the same store.
 */
export interface ImportPosition {
  seq: number;
  /** null: a position kept by an older version, which kept the number only. */
  anchor: string | null;
}

/** The source of the votes imported without naming one (tests, direct callers). */
export const DEFAULT_VOTE_SOURCE = 'default';
const POSITION_KEY = 'signed_votes_position:';
/** The one number an older version kept for every source; read once as the position of whichever source comes. */
const LEGACY_CURSOR_KEY = 'signed_votes_imported_seq';

const metaValue = (store: ArenaStore, key: string): string | undefined =>
  (store.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;

const setMeta = (store: ArenaStore, key: string, value: string): void => {
  store.db
    .prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    )
    .run(key, value);
};

/** What one vote is, whatever store it sits in or number it has there. */
const anchorOf = (v: SignedVoteRecord): string =>
  v.signature ? `signature:${v.signature}` : `vote:${v.roundId}/${v.address}/${v.receivedAt}`;

/** The position of `source`'s import; null when nothing was ever imported from it. */
export const importPosition = (
  store: ArenaStore,
  source: string = DEFAULT_VOTE_SOURCE,
): ImportPosition | null => {
  const kept = metaValue(store, POSITION_KEY + source);
  if (kept !== undefined) return JSON.parse(kept) as ImportPosition;
  const legacy = metaValue(store, LEGACY_CURSOR_KEY);
  return legacy === undefined ? null : { seq: Number(legacy), anchor: null };
};

export const signedVotesCursor = (store: ArenaStore, source: string = DEFAULT_VOTE_SOURCE): number =>
  importPosition(store, source)?.seq ?? 0;

/** Starts `source`'s import again from its first vote (its numbering started again). */
export const resetImportPosition = (store: ArenaStore, source: string = DEFAULT_VOTE_SOURCE): void => {
  store.db
    .transaction(() => {
      setMeta(
        store,
        POSITION_KEY + source,
        JSON.stringify({ seq: 0, anchor: null } satisfies ImportPosition),
      );
      store.db.prepare('DELETE FROM meta WHERE key = ?').run(LEGACY_CURSOR_KEY);
    })
    .immediate();
};

/**
 * Whether this very vote is already among the human votes (same round, voter, prediction and receipt time): read
 * again from a store whose numbering started again, it is skipped, neither counted twice nor reported as refused.
 */
const alreadyImported = (store: ArenaStore, salt: string, v: SignedVoteRecord): boolean =>
  typeof v.address === 'string' &&
  typeof v.prediction === 'string' &&
  store.db
    .prepare(
      `SELECT 1 FROM votes WHERE source = 'human' AND round_id = ? AND voter_hash = ? AND prediction = ?
       AND voted_at_ms = ?`,
    )
    .get(
      v.roundId,
      hashVoter(salt, normaliseVoter(v.address)),
      v.prediction.trim().toUpperCase(),
      v.receivedAt,
    ) !== undefined;

/**
 * Whether the store still holds, at the position's number, the vote the position was saved after: `atPosition` is
 * the vote the store gives for that number (undefined when it has none). When it does not (a deleted or replaced
 * store, another vote source), its votes must be read again from the first: every number up to the position may be
 * a vote never seen. A position kept by an older version has no anchor: it holds when that vote was imported.
 */
export const positionHolds = (
  store: ArenaStore,
  position: ImportPosition,
  atPosition: SignedVoteRecord | undefined,
): boolean => {
  if (position.seq === 0) return true;
  if (atPosition === undefined || atPosition.seq !== position.seq) return false;
  return position.anchor !== null
    ? position.anchor === anchorOf(atPosition)
    : alreadyImported(store, voterSalt(store), atPosition);
};

export interface SignedImportOptions {
  /** Which vote store the votes come from (its file, its export URL); each has a position of its own. */
  source?: string;
  /** Read from after this number instead of the kept position (0: the store is read again from its first vote). */
  from?: number;
}

/**
 * The votes numbered after `cursor`, in order, split where an import at `now` stops: `ready` are imported, `waiting`
 * (from the first vote received after `now`, clocks apart) wait for a later run, the votes after it with them.
 */
export const votesDue = (
  votes: readonly SignedVoteRecord[],
  cursor: number,
  now: number,
): { ready: SignedVoteRecord[]; waiting: SignedVoteRecord[] } => {
  const fresh = votes.filter((v) => v.seq > cursor).sort((a, b) => a.seq - b.seq);
  const late = fresh.findIndex((v) => v.receivedAt > now);
  return late === -1
    ? { ready: fresh, waiting: [] }
    : { ready: fresh.slice(0, late), waiting: fresh.slice(late) };
};

const READ_THROUGH_KEY = 'signed_votes_read_through:';

/**
 * The time through which `source` was last read whole: every vote it had received by then is imported (or was
 * refused by the rules). Null when no run read it yet. Rounds whose votes could come in later than this may still
 * have votes waiting there while it cannot be read (step.ts holds them).
 */
export const votesReadThrough = (store: ArenaStore, source: string): number | null => {
  const kept = metaValue(store, READ_THROUGH_KEY + source);
  return kept === undefined ? null : Number(kept);
};

/** Records that `source` was read whole through `at`; never moves back (a run describing an earlier time). */
export const setVotesReadThrough = (store: ArenaStore, source: string, at: number): void => {
  const kept = votesReadThrough(store, source);
  if (kept === null || at > kept) setMeta(store, READ_THROUGH_KEY + source, String(at));
};

/**
 * Imports the endpoint's votes numbered after the source's position, each checked like a file import's vote, the
 * endpoint's receipt time standing as the server clock. A vote already imported (the same store read again after
 * its numbering started again) is skipped. A vote the rules refuse (second vote of a voter, round already resolved)
 * would be refused on every later run too, so it is reported through `onRefused` and skipped rather than holding
 * back every vote after it. A vote received after `now` (clocks apart) waits, with the votes after it, for a later
 * run. The position moves in the same transaction, to the last vote read and what it was.
 */
export const importSignedVotes = (
  store: ArenaStore,
  votes: SignedVoteRecord[],
  now: number,
  onRefused: (problems: string[]) => void = () => {},
  options: SignedImportOptions = {},
): number => {
  const source = options.source ?? DEFAULT_VOTE_SOURCE;
  const { ready } = votesDue(votes, options.from ?? signedVotesCursor(store, source), now);
  if (ready.length === 0) return 0;
  const salt = voterSalt(store);
  const refused: string[] = [];
  const run = store.db.transaction(() => {
    let written = 0;
    for (const v of ready) {
      if (alreadyImported(store, salt, v)) continue;
      try {
        const vote = { asset: v.asset, prediction: v.prediction, voter: v.address, round_id: v.roundId };
        written += addHumanVotes(
          store,
          [{ label: `signed vote ${v.seq}`, raw: vote, receivedAt: v.receivedAt }],
          now,
        ).length;
      } catch (error) {
        if (!(error instanceof VoteValidationError)) throw error;
        refused.push(...error.problems);
      }
    }
    const last = ready.at(-1)!;
    setMeta(
      store,
      POSITION_KEY + source,
      JSON.stringify({ seq: last.seq, anchor: anchorOf(last) } satisfies ImportPosition),
    );
    store.db.prepare('DELETE FROM meta WHERE key = ?').run(LEGACY_CURSOR_KEY);
    return written;
  });
  const written = run.immediate();
  if (refused.length > 0) onRefused(refused);
  return written;
};
