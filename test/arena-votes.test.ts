import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { registerArenaCommands } from '../generator/state/cli.ts';
import { hashVoter, openArenaStore, voterSalt, type ArenaStore } from '../generator/state/store.ts';
import { addHumanVotes, importVotesJsonl, VoteValidationError } from '../generator/state/votes.ts';
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
const AT = new Date(T0 + 5 * MINUTE).toISOString();
const NOW = T0 + 10 * MINUTE;
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
    const body = step(s, NOW, { mode: 'live', seed: null }).humanConsensus;
    expect(body.human_consensus).toMatchObject({ total: 3, bullish: 2, bearish: 1, consensus: 'BULLISH' });
    expect(body.vote_sources).toMatchObject({ human_votes: 3, synthetic_votes: 0 });
  });

  it('reports every invalid line by number and writes nothing', () => {
    const s = track(tempStore());
    const lines = [
      vote({ voter: 'ok-1' }),
      vote({ asset: 'DOGE' }),
      vote({ voter: 'p', prediction: 'UP' }),
      vote({ voter: 'w', asset: OTHER.asset }), // OTHER's asset has no round open at AT
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
      expect.stringMatching(new RegExp(`^line 4: vote at .* is outside every ${OTHER.asset} round window`)),
      expect.stringMatching(/^line 5: vote time .* is in the future/),
      expect.stringMatching(/^line 6: this voter already voted in round .* \(line 1\)/),
      expect.stringMatching(/^line 7: voter must be a non-empty string/),
      expect.stringMatching(/^line 8: time "yesterday" is not an ISO 8601 timestamp/),
      expect.stringMatching(new RegExp(`^line 9: vote at .* is outside the window of round "${OTHER.id}"`)),
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
    expect(problemsOf(() => importVotesJsonl(s, vote({ voter: 'late' }), T0 + HOUR + 2 * MINUTE))).toEqual([
      `line 1: round ${ROUND.id} is already resolved and takes no more votes`,
    ]);
    expect(votesIn(s)).toBe(1);
  });

  it('stores only salted hashes of voter ids', () => {
    const s = track(tempStore());
    importVotesJsonl(s, vote({ voter: 'alice@example.com' }), NOW);
    const row = s.db.prepare('SELECT voter_hash FROM votes').get() as { voter_hash: string };
    expect(row.voter_hash).toBe(hashVoter(voterSalt(s), 'alice@example.com'));
    expect(row.voter_hash).not.toContain('alice');
    expect(voterSalt(s, { EMI_VOTER_SALT: 'pepper' })).toBe('pepper');
    expect(hashVoter('a', 'alice')).not.toBe(hashVoter('b', 'alice'));
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

  it('adds a vote, imports a file and shows the status', async () => {
    const file = tempStorePath();
    const one = await run(file, [
      'arena',
      'vote',
      '--asset',
      ROUND.asset,
      '--prediction',
      'BULLISH',
      '--voter',
      'zed',
      '--at',
      AT,
    ]);
    expect(one).toMatchObject({ out: [`vote recorded for ${ROUND.id}`], err: [] });
    const jsonl = path.join(path.dirname(file), 'votes.jsonl');
    fs.writeFileSync(jsonl, `${vote({ voter: 'y' })}\n${vote({ voter: 'x' })}\n`);
    expect((await run(file, ['arena', 'import', jsonl])).out).toEqual([`imported 2 votes from ${jsonl}`]);
    const status = await run(file, ['arena', 'status']);
    expect(status.out).toContain('votes in this round: 3 human, 0 synthetic');
    expect(status.out).toContain('run lock: free');
    const s = track(openArenaStore(file));
    expect(votesIn(s)).toBe(3);
  });

  it('prints one line and exits non-zero on invalid input', async () => {
    const file = tempStorePath();
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
    expect(bad.exitCode).toBe(1);
    expect(bad.out).toEqual([]);
    expect(bad.err).toHaveLength(1);
    expect(bad.err[0]).toMatch(/^emi arena: nothing was written: unknown asset "DOGE"/);
    expect(bad.err[0]).not.toContain('\n');
    const missing = await run(file, ['arena', 'import', path.join(path.dirname(file), 'nope.jsonl')]);
    expect(missing.exitCode).toBe(1);
    expect(missing.err[0]).toMatch(/^emi arena: ENOENT/);
  });
});
