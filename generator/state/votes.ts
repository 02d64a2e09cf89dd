// Human votes: validated one by one, written all together or not at all. Voter ids are hashed with the store's
// salt before they touch the database and are never echoed back.
import { ARENA_PREDICTIONS, TRACKED_ASSETS, type ArenaPrediction } from '../../schemas/common.ts';
import { openRoundFor, roundAt, type Round } from '../engines/arena/rounds.ts';
import { iso } from '../engines/clock.ts';
import { ensureRound, hasVoted, insertVote } from './repo.ts';
import { hashVoter, voterSalt, type ArenaStore } from './store.ts';

export class VoteValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? problems[0]! : `${problems.length} invalid votes: ${problems.join('; ')}`);
    this.name = 'VoteValidationError';
  }
}

/** One vote as it arrives: from a JSON Lines record or from the vote command's options. */
export interface RawVote {
  asset?: unknown;
  prediction?: unknown;
  voter?: unknown;
  at?: unknown; // ISO 8601; defaults to now
  round_id?: unknown; // optional cross-check
}

interface ValidVote {
  round: Round;
  voterHash: string;
  prediction: ArenaPrediction;
  at: number;
}

const MAX_VOTER_LENGTH = 200;

const describeRound = (r: Round) => `${r.id} (${iso(r.start)} to ${iso(r.end)})`;

/** Checks one vote against the schedule and the store; returns the problem as one sentence, or the vote. */
const checkVote = (store: ArenaStore, salt: string, raw: RawVote, now: number): ValidVote | string => {
  const asset = typeof raw.asset === 'string' ? raw.asset.trim().toUpperCase() : '';
  if (!(TRACKED_ASSETS as readonly string[]).includes(asset)) {
    return `unknown asset ${JSON.stringify(raw.asset ?? null)}; expected one of ${TRACKED_ASSETS.join(', ')}`;
  }
  const prediction = typeof raw.prediction === 'string' ? raw.prediction.trim().toUpperCase() : '';
  if (!(ARENA_PREDICTIONS as readonly string[]).includes(prediction)) {
    return `prediction ${JSON.stringify(raw.prediction ?? null)} is not one of ${ARENA_PREDICTIONS.join(', ')}`;
  }
  if (typeof raw.voter !== 'string' || raw.voter.trim() === '' || raw.voter.length > MAX_VOTER_LENGTH) {
    return `voter must be a non-empty string of at most ${MAX_VOTER_LENGTH} characters`;
  }
  const at =
    raw.at === undefined || raw.at === null ? now : typeof raw.at === 'string' ? Date.parse(raw.at) : NaN;
  if (!Number.isFinite(at)) return `time ${JSON.stringify(raw.at)} is not an ISO 8601 timestamp`;
  if (at > now) return `vote time ${iso(at)} is in the future`;
  const round = openRoundFor(asset, at);
  if (!round) {
    return `vote at ${iso(at)} is outside every ${asset} round window; the round open then is ${describeRound(roundAt(at))}`;
  }
  if (raw.round_id !== undefined && raw.round_id !== round.id) {
    return `vote at ${iso(at)} is outside the window of round ${JSON.stringify(raw.round_id)}; it falls in ${describeRound(round)}`;
  }
  if (store.db.prepare('SELECT 1 FROM outcomes WHERE round_id = ?').get(round.id)) {
    return `round ${round.id} is already resolved and takes no more votes`;
  }
  const voterHash = hashVoter(salt, raw.voter.trim());
  if (hasVoted(store.db, round.id, voterHash)) return `this voter has already voted in round ${round.id}`;
  return { round, voterHash, prediction: prediction as ArenaPrediction, at };
};

/**
 * Validates every vote and writes them in one transaction; any problem rejects the whole batch with every
 * problem listed (prefixed with its label, e.g. "line 3"). Returns the number of votes written.
 */
export const addHumanVotes = (
  store: ArenaStore,
  votes: Array<{ label: string | null; raw: RawVote }>,
  now: number,
): number => {
  const salt = voterSalt(store);
  const write = store.db.transaction(() => {
    const problems: string[] = [];
    const valid: ValidVote[] = [];
    const seen = new Map<string, string>(); // round + voter hash -> label of the first vote in this batch
    for (const { label, raw } of votes) {
      const prefix = label ? `${label}: ` : '';
      const checked = checkVote(store, salt, raw, now);
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
        at: v.at,
        source: 'human',
        replayed: false,
      });
    }
    return valid.length;
  });
  return write.immediate();
};

/** Parses JSON Lines (blank lines skipped) and imports every vote, or none. */
export const importVotesJsonl = (store: ArenaStore, text: string, now: number): number => {
  const votes: Array<{ label: string; raw: RawVote }> = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const label = `line ${i + 1}`;
    try {
      const raw: unknown = JSON.parse(line);
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
        problems.push(`${label}: expected a JSON object`);
      else votes.push({ label, raw: raw as RawVote });
    } catch {
      problems.push(`${label}: not valid JSON`);
    }
  });
  if (problems.length > 0) throw new VoteValidationError(problems);
  if (votes.length === 0) throw new VoteValidationError(['the file holds no votes']);
  return addHumanVotes(store, votes, now);
};
