import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { registerArenaCommands } from '../generator/state/cli.ts';
import { hashVoter, openArenaStore, voterSalt, type ArenaStore } from '../generator/state/store.ts';
import {
  addHumanVotes,
  importVotesJsonl,
  MAX_LISTED_PROBLEMS,
  normaliseVoter,
  VoteValidationError,
} from '../generator/state/votes.ts';
import { VOTE_GRACE_SECONDS } from '../generator/engines/arena/rules.ts';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import { backfill } from '../generator/state/backfill.ts';
import { callsFor, HOUR, MINUTE, step, T0, tempStore, tempStorePath } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
  process.exitCode = undefined;
});

const ROUND = roundAt(T0);
const OTHER = roundByIndex(ROUND.index + 1); // a different asset's round
// Issue 17: a vote counts only if the server receives it before the round starts (or within the grace period),
// so these tests import 10 minutes before ROUND starts; `at` is only the voter's claim.
const AT = new Date(T0 - 15 * MINUTE).toISOString();
const NOW = T0 - 10 * MINUTE;
const line = (v: Record<string, unknown>) => JSON.stringify(v);
const vote = (over: Record<string, unknown> = {}) =>
  line({ asset: ROUND.asset, prediction: 'BULLISH', voter: 'alice', at: AT, ...over });
const votesIn = (s: ArenaStore) => (s.db.prepare('SELECT COUNT(*) AS n FROM votes').get() as { n: number }).n;

const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (e) {
    if (e instanceof VoteValidationError) return e.problems;
    throw e;
  }
  throw new Error('expected a VoteValidationError');
};

describe('vote import', () => {
  it('imports valid JSON Lines and counts them as human votes', () => {
    const s = track(tempStore());
    const text = [vote(), '', vote({ voter: 'bob', prediction: 'bearish' }), vote({ voter: 'carol' })].join(
      '\n',
    );
    expect(importVotesJsonl(s, text, NOW)).toBe(3);
    const body = step(s, T0 + MINUTE, { mode: 'live', seed: null }).humanConsensus;
    expect(body.human_consensus).toMatchObject({ total: 3, bullish: 2, bearish: 1, consensus: 'BULLISH' });
    expect(body.vote_sources).toMatchObject({ human_votes: 3, synthetic_votes: 0 });
  });

  it('reports every invalid line by number and writes nothing', () => {
    const s = track(tempStore());
    const lines = [
      vote({ voter: 'ok-1' }),
      vote({ asset: 'DOGE' }),
      vote({ voter: 'p', prediction: 'UP' }),
      vote({ voter: 'w', round_id: 'BTC-20250101T10:00Z' }),
      vote({ voter: 'f', at: new Date(NOW + MINUTE).toISOString() }),
      vote({ voter: 'ok-1' }), // same voter twice in one round
      vote({ voter: '' }),
      vote({ voter: 't', at: 'yesterday' }),
      vote({ voter: 'r', round_id: OTHER.id }),
      vote({ voter: 'ok-2' }),
    ];
    const problems = problemsOf(() => importVotesJsonl(s, lines.join('\n'), NOW));
    expect(problems).toEqual([
      expect.stringMatching(/^line 2: unknown asset "DOGE"/),
      expect.stringMatching(/^line 3: prediction "UP" is not one of BULLISH, BEARISH, NEUTRAL/),
      expect.stringMatching(/^line 4: round_id "BTC-20250101T10:00Z" is not a round of the schedule/),
      expect.stringMatching(/^line 5: vote time .* is in the future/),
      expect.stringMatching(/^line 6: this voter already voted in round .* \(line 1\)/),
      expect.stringMatching(/^line 7: voter must be a non-empty string/),
      expect.stringMatching(/^line 8: time "yesterday" is not an RFC 3339 timestamp/),
      `line 9: round ${OTHER.id} plays ${OTHER.asset}, not ${ROUND.asset}`,
    ]);
    expect(votesIn(s)).toBe(0);
    expect(problemsOf(() => importVotesJsonl(s, `${vote()}\n{not json\n[1]`, NOW))).toEqual([
      'line 2: not valid JSON',
      'line 3: expected a JSON object',
    ]);
    expect(problemsOf(() => importVotesJsonl(s, '\n\n', NOW))).toEqual(['the file holds no votes']);
    expect(votesIn(s)).toBe(0);
  });

  it('refuses a voter who already voted in the round, and votes for a resolved round', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'live', seed: null, price: 100 });
    addHumanVotes(
      s,
      [{ label: null, raw: { asset: ROUND.asset, prediction: 'NEUTRAL', voter: 'alice', at: AT } }],
      NOW,
    );
    expect(problemsOf(() => importVotesJsonl(s, vote(), NOW))).toEqual([
      `line 1: this voter has already voted in round ${ROUND.id}`,
    ]);
    step(s, T0 + HOUR + MINUTE, { mode: 'live', seed: null, price: 100 });
    expect(
      problemsOf(() =>
        importVotesJsonl(s, vote({ voter: 'late', round_id: ROUND.id }), T0 + HOUR + 2 * MINUTE),
      ),
    ).toEqual([
      expect.stringMatching(
        new RegExp(`^line 1: vote received at .* does not count: round ${ROUND.id} started at .* and closed`),
      ),
    ]);
    expect(votesIn(s)).toBe(1);
  });

  it('stores only salted hashes of voter ids', () => {
    const s = track(tempStore());
    importVotesJsonl(s, vote({ voter: 'alice@example.com' }), NOW);
    const row = s.db.prepare('SELECT voter_hash FROM votes').get() as { voter_hash: string };
    expect(row.voter_hash).toBe(hashVoter(voterSalt(s), normaliseVoter('alice@example.com')));
    expect(row.voter_hash).not.toContain('alice');
    expect(voterSalt(s, { EMI_VOTER_SALT: 'pepper' })).toBe('pepper');
    expect(hashVoter('a', 'alice')).not.toBe(hashVoter('b', 'alice'));
  });
});

describe('strict vote import (issue 15 item 7)', () => {
  it('counts a vote by the server clock: before the start or inside the grace period, never later', () => {
    const s = track(tempStore());
    const graceEnd = T0 + VOTE_GRACE_SECONDS * 1000;
    expect(importVotesJsonl(s, vote({ voter: 'on-time', round_id: ROUND.id }), graceEnd - 1)).toBe(1);
    // The voter's own (backdated) timestamp changes nothing: the import time decides.
    const late = vote({ voter: 'backdated', round_id: ROUND.id, at: new Date(T0 - HOUR).toISOString() });
    expect(problemsOf(() => importVotesJsonl(s, late, graceEnd))).toEqual([
      expect.stringMatching(/does not count: round .* closed to votes 60 s later/),
    ]);
    // Without a round id, a late vote goes to the asset's next round, never into the started one.
    importVotesJsonl(s, vote({ voter: 'next' }), T0 + 30 * MINUTE);
    const rounds = s.db.prepare('SELECT round_id FROM votes ORDER BY voted_at_ms').all() as Array<{
      round_id: string;
    }>;
    expect(rounds.map((r) => r.round_id)).toEqual([ROUND.id, roundByIndex(ROUND.index + 7).id]);
  });

  it('accepts RFC 3339 times only', () => {
    const s = track(tempStore());
    for (const bad of [
      '2025-01-01 09:50:00Z',
      '2025-01-01T09:50Z',
      '2025-01-01',
      'Jan 1 2025',
      '1735724400000',
    ]) {
      expect(problemsOf(() => importVotesJsonl(s, vote({ at: bad }), NOW))).toEqual([
        expect.stringMatching(/is not an RFC 3339 timestamp/),
      ]);
    }
    expect(importVotesJsonl(s, vote({ at: '2025-01-01T10:45:00.5+01:00' }), NOW)).toBe(1);
  });

  it('treats Unicode look-alike and case variants of a voter as one voter', () => {
    const s = track(tempStore());
    const text = [vote({ voter: 'Alice' }), vote({ voter: 'ＡＬＩＣＥ' }), vote({ voter: 'alice' })].join(
      '\n',
    );
    expect(problemsOf(() => importVotesJsonl(s, text, NOW))).toEqual([
      `line 2: this voter already voted in round ${ROUND.id} (line 1)`,
      `line 3: this voter already voted in round ${ROUND.id} (line 1)`,
    ]);
    importVotesJsonl(s, vote({ voter: 'ＡＬＩＣＥ' }), NOW);
    expect(problemsOf(() => importVotesJsonl(s, vote({ voter: 'aLiCe' }), NOW))).toEqual([
      `line 1: this voter has already voted in round ${ROUND.id}`,
    ]);
  });

  it('accepts a UTF-8 byte order mark', () => {
    const s = track(tempStore());
    expect(importVotesJsonl(s, `\uFEFF${vote()}\r\n${vote({ voter: 'bob' })}\r\n`, NOW)).toBe(2);
  });

  it('lists the first 20 problems, counts the rest, keeps the message short and writes nothing', () => {
    const s = track(tempStore());
    const lines = [
      vote({ voter: 'fine' }),
      ...Array.from({ length: 100_000 }, () => vote({ asset: 'X'.repeat(80) })),
    ];
    let error: VoteValidationError | undefined;
    try {
      importVotesJsonl(s, lines.join('\n'), NOW);
    } catch (e) {
      error = e as VoteValidationError;
    }
    expect(error).toBeInstanceOf(VoteValidationError);
    expect(error!.problems).toHaveLength(100_000);
    expect(error!.shown).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(error!.shown.at(-1)).toBe(`and ${100_000 - MAX_LISTED_PROBLEMS} more problems`);
    expect(error!.message).toMatch(/^100000 invalid votes: line 2: unknown asset "X{30,}\.\.\./);
    expect(error!.message).toMatch(/; and 99980 more$/);
    expect(error!.message.length).toBeLessThan(3000);
    expect(votesIn(s)).toBe(0);
  });
});

describe('published output never carries voter ids', () => {
  it('keeps ids and hashes out of all four bodies', async () => {
    const s = track(tempStore());
    await backfill(s, {
      days: 1,
      asOf: T0,
      seed: 3,
      brainCallAt: async () => callsFor('bearish', 70, 100),
      priceAt: async (_asset, ms) => 100 + ((ms / HOUR) % 3),
    });
    const voters = ['alice@example.com', 'bob-the-voter', 'carol-1234'];
    importVotesJsonl(s, voters.map((v) => vote({ voter: v })).join('\n'), NOW);
    step(s, T0 + MINUTE);
    const bodies = [step(s, NOW), step(s, T0 + HOUR + MINUTE)];
    const published = JSON.stringify(bodies);
    const salt = voterSalt(s);
    for (const v of voters) {
      expect(published).not.toContain(v);
      expect(published).not.toContain(hashVoter(salt, v));
    }
    expect(published).not.toContain(salt);
    expect(published).not.toMatch(/[0-9a-f]{64}/); // no hash at all, synthetic voters included
    expect(bodies[1]!.teacherLessons.latest_lessons[0]!.provenance.human_votes).toBe(3);
  });
});

describe('arena commands', () => {
  const run = async (file: string, args: string[], now = NOW) => {
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command().exitOverride();
    registerArenaCommands(program, {
      storePath: () => file,
      now: () => now,
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    await program.parseAsync(['node', 'emi', ...args]);
    return { out, err, exitCode: process.exitCode };
  };
  /** A store as a run leaves it: vote and import refuse a store no run has made (arena-vote-missing-store.test.ts). */
  const runsStorePath = (): string => {
    const file = tempStorePath();
    openArenaStore(file).close();
    return file;
  };

  it('adds a vote, imports a file and shows the status', async () => {
    const file = runsStorePath();
    const one = await run(file, [
      'arena',
      'vote',
      '--asset',
      ROUND.asset,
      '--prediction',
      'BULLISH',
      '--voter',
      'zed',
    ]);
    expect(one).toMatchObject({ out: [`vote recorded for ${ROUND.id}`], err: [] });
    const jsonl = path.join(path.dirname(file), 'votes.jsonl');
    fs.writeFileSync(jsonl, `${vote({ voter: 'y' })}\n${vote({ voter: 'x' })}\n`);
    expect((await run(file, ['arena', 'import', jsonl])).out).toEqual([`imported 2 votes from ${jsonl}`]);
    const status = await run(file, ['arena', 'status'], T0 + MINUTE);
    expect(status.out).toContain('votes in this round: 3 human, 0 synthetic');
    expect(status.out).toContain('run lock: free');
    const s = track(openArenaStore(file));
    expect(votesIn(s)).toBe(3);
  });

  it('prints one line and exits non-zero on invalid input', async () => {
    const file = runsStorePath();
    const bad = await run(file, [
      'arena',
      'vote',
      '--asset',
      'DOGE',
      '--prediction',
      'BULLISH',
      '--voter',
      'z',
    ]);
    expect(bad.exitCode).toBe(2); // a refused vote is bad input, as other usage mistakes
    expect(bad.out).toEqual([]);
    expect(bad.err).toHaveLength(1);
    expect(bad.err[0]).toMatch(/^emi arena: nothing was written: unknown asset "DOGE"/);
    expect(bad.err[0]).not.toContain('\n');
    const missing = await run(file, ['arena', 'import', path.join(path.dirname(file), 'nope.jsonl')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.err).toEqual([
      `emi arena: cannot read ${path.join(path.dirname(file), 'nope.jsonl')}: no such file; nothing was imported`,
    ]);
  });
});
