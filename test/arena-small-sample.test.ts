// A consensus of one vote is not a firm call: the files say "1 human vote" (not "1 human votes") and flag a consensus
// from fewer than SMALL_CROWD_VOTES votes as a small sample where a reader looks (human_status, the lesson summary),
// with the rule in the developer note. Scoring is unchanged (README: the most votes wins).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { humanStatus } from '../generator/engines/arena/bodies.ts';
import { NO_VOTES } from '../generator/engines/arena/consensus.ts';
import { SMALL_CROWD_VOTES } from '../generator/engines/arena/lessons.ts';
import type { HumanConsensusResponse } from '../schemas/arena.ts';
import type { TeacherLessonsResponse } from '../schemas/teacher-lessons.ts';
import { MINUTE } from './arena-fixtures.ts';
import { expectOk as ok, generateArgs, runEmi, voteAndOpenRound } from './ops-cli.ts';

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('one human vote, through the real emi', () => {
  it('reads "1 human vote", flagged as a small sample, in the open round and in the lesson', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-small-sample-'));
    const round = await voteAndOpenRound(dir);
    const open = JSON.parse(
      await readFile(join(dir, 'site/api/human-consensus.php'), 'utf8'),
    ) as HumanConsensusResponse;
    expect(open.round.round_id).toBe(round.id);
    // The counting rule is unchanged: one vote is a call, unanimous.
    expect(open.human_consensus).toMatchObject({ total: 1, consensus: 'BULLISH', call_status: 'called' });
    // Before: "1 human votes."
    expect(open.human_status).toBe(
      `1 human vote: a small sample (fewer than ${SMALL_CROWD_VOTES} votes), weak evidence of what the crowd thinks.`,
    );
    expect(open.developer_note).toContain(
      `A consensus of fewer than ${SMALL_CROWD_VOTES} human votes is a small sample`,
    );

    ok(await runEmi(dir, generateArgs(new Date(round.end + MINUTE).toISOString())));
    const lessons = JSON.parse(
      await readFile(join(dir, 'site/api/teacher-lessons.php'), 'utf8'),
    ) as TeacherLessonsResponse;
    const lesson = lessons.latest_lessons.find((l) => l.round_id === round.id)!;
    // Before: "human crowd BULLISH (1 votes) (24 synthetic votes kept apart)".
    expect(lesson.summary).toContain(
      `human crowd BULLISH (1 vote, a small sample: fewer than ${SMALL_CROWD_VOTES})`,
    );
    expect(lesson.summary).not.toMatch(/\b1 votes\b/);
    expect(lessons.developer_note).toContain(`fewer than ${SMALL_CROWD_VOTES} human votes`);
  }, 60_000);
});

describe('the small-sample rule', () => {
  const tally = (bullish: number, bearish = 0) => ({
    counts: { ...NO_VOTES, bullish, bearish },
    simulated: NO_VOTES,
    human: bullish + bearish,
    synthetic: 0,
    replayed: 0,
  });

  it('flags a consensus below the threshold only, and says no more of a tie or of no votes', () => {
    expect(humanStatus(tally(SMALL_CROWD_VOTES - 1))).toMatch(/votes: a small sample/);
    expect(humanStatus(tally(SMALL_CROWD_VOTES))).toBe(`${SMALL_CROWD_VOTES} human votes.`);
    expect(humanStatus(tally(1, 1))).toBe('2 human votes, tied at the top: the crowd makes no call.');
    expect(humanStatus(tally(0))).toBe('No human votes yet in this round.');
  });
});
