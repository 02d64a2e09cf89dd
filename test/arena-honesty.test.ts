// Honesty rules of the arena's published figures: a round where only the synthetic crowd voted is not counted as
// human participation, and a tie at the top of the combined forecast, or a brain call at confidence 0 (uniform
// probabilities), is no call, never scored as a hit or miss.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { schemaEntries, toJsonSchema, type JsonSchema } from '../generator/discovery/json-schema.ts';
import type { ResolvedRound } from '../generator/engines/arena/lessons.ts';
import {
  leanOf,
  MIN_SAMPLE,
  publicPerformanceFrom,
  teacherBrain,
} from '../generator/engines/arena/metrics.ts';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import {
  averageProbs,
  brainProbs,
  crowdProbs,
  SCORE_DEFINITIONS,
} from '../generator/engines/arena/scoring.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { importVotesJsonl } from '../generator/state/votes.ts';
import { HISTORY_RESOURCES } from '../schemas/history.ts';
import { callsFor, HOUR, MINUTE, step, T0, tempStore } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const ROUND = roundAt(T0);
const RULES_PAGE = readFileSync(new URL('../site/docs/arena-rules.njk', import.meta.url), 'utf8');

/** The published JSON Schema of a resource's body (as /schemas/ and OpenAPI carry it), by its file name. */
const publishedSchema = (fileName: string): JsonSchema => {
  const entry = schemaEntries().find((e) => e.fileName === fileName);
  if (!entry) throw new Error(`no published schema ${fileName}`);
  return toJsonSchema(entry.schema);
};
const propertyOf = (schema: JsonSchema, ...path: string[]): JsonSchema =>
  path.reduce((node, key) => (node.properties as Record<string, JsonSchema>)[key]!, schema);

const resolved = (i: number, over: Partial<ResolvedRound> = {}): ResolvedRound => ({
  roundId: roundByIndex(ROUND.index + i).id,
  asset: roundByIndex(ROUND.index + i).asset,
  brainCall: 'BULLISH',
  brainConfidence: 50,
  counts: { bullish: 2, bearish: 1, neutral: 0 },
  humanVotes: 3,
  syntheticVotes: 0,
  outcome: 'BULLISH',
  returnFraction: 0.01,
  resolvedAt: T0 + i * HOUR,
  replayed: false,
  ...over,
});
// No brain call and no human vote: both forecasts are uniform, so the combined one is an exact three-way tie.
const uninformed = (i: number, outcome: ResolvedRound['outcome']) =>
  resolved(i, {
    brainCall: 'NONE',
    brainConfidence: null,
    counts: { bullish: 0, bearish: 0, neutral: 0 },
    humanVotes: 0,
    syntheticVotes: 12,
    outcome,
  });
// Brain BULLISH at 100 against 7 human BEARISH votes: 0.45 / 0.1 / 0.45 as published, a tie BEARISH-BULLISH.
const SPLIT_COUNTS = { bullish: 0, bearish: 7, neutral: 0 };
const split = (i: number, outcome: ResolvedRound['outcome']) =>
  resolved(i, { brainConfidence: 100, counts: SPLIT_COUNTS, humanVotes: 7, outcome });

/** A store holding one person's vote in the round of T0 (the simulated run adds the synthetic crowd's). */
function storeWithOneHumanVote(): ArenaStore {
  const s = track(tempStore());
  const vote = { asset: ROUND.asset, prediction: 'BEARISH', voter: 'v1', round_id: ROUND.id };
  importVotesJsonl(s, JSON.stringify(vote), T0 - MINUTE);
  return s;
}

describe('rounds with votes: synthetic votes are not human participation', () => {
  it('counts a round where only the synthetic crowd voted as a round with votes, but not with human votes', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'simulated' });
    const b = step(s, ROUND.end + MINUTE, { mode: 'simulated', price: 102 });
    const arena = b.statistics.arena;
    expect(arena.vote_sources.human_votes).toBe(0);
    expect(arena.vote_sources.synthetic_votes).toBeGreaterThan(0);
    expect(arena.rounds_with_votes).toBeGreaterThan(0);
    // Before: only rounds_with_votes was published, read as "rounds that received at least one vote".
    expect(arena.rounds_with_human_votes).toBe(0);
  });

  it('counts a round where a person voted beside the synthetic crowd as a round with human votes', () => {
    const s = storeWithOneHumanVote();
    step(s, T0 + MINUTE, { mode: 'simulated' });
    const arena = step(s, ROUND.end + MINUTE, { mode: 'simulated', price: 102 }).statistics.arena;
    expect(arena.vote_sources.human_votes).toBe(1);
    expect(arena.vote_sources.synthetic_votes).toBeGreaterThan(0);
    expect(arena.rounds_with_human_votes).toBe(1);
    expect(arena.rounds_with_votes).toBeGreaterThanOrEqual(1);
  });

  it("the history's human-consensus votes_total counts people only, and its column says so", () => {
    const s = storeWithOneHumanVote();
    const bodies = step(s, T0 + MINUTE, { mode: 'simulated' });
    expect(bodies.humanConsensus.vote_sources.synthetic_votes).toBeGreaterThan(0);
    // generator/history/rows.ts fills votes_total from human_consensus.total.
    expect(bodies.humanConsensus.human_consensus.total).toBe(1);
    const column = HISTORY_RESOURCES['human-consensus'].columns.find((c) => c.name === 'votes_total');
    // Before: "votes counted in the round so far (human and synthetic)".
    expect(column?.description).toMatch(/by people/);
    expect(column?.description).not.toMatch(/human and synthetic/);
  });

  it('says in the published schema that rounds_with_votes and votes_total include synthetic votes', () => {
    const statistics = publishedSchema('statistics.json');
    const withVotes = String(propertyOf(statistics, 'arena', 'rounds_with_votes').description);
    expect(withVotes).toMatch(/synthetic/);
    expect(withVotes).toMatch(/not a measure of human participation/i);
    expect(String(propertyOf(statistics, 'arena', 'votes_total').description)).toMatch(/synthetic included/);
    expect(String(propertyOf(statistics, 'arena', 'rounds_with_human_votes').description)).toMatch(
      /from a person/,
    );
    expect(RULES_PAGE).toContain('arena.rounds_with_human_votes');
  });
});

describe('combined forecast: a tie at the top is no call', () => {
  it('leaves exact three-way ties out of the combined hit rate instead of scoring them as NEUTRAL calls', () => {
    const rounds = Array.from({ length: MIN_SAMPLE }, (_, i) => uninformed(i, 'NEUTRAL'));
    const combined = teacherBrain(rounds, 0).metrics.combined;
    // Before: hit_rate { value: 1, n: 10 }: ten ties read as ten right NEUTRAL calls.
    expect(combined.hit_rate).toBeNull();
    expect(combined.n).toBe(MIN_SAMPLE);
    expect(combined.brier_score).not.toBeNull(); // the probabilities are still scored
  });

  it('gives the combined hit rate the n of the rounds with a call', () => {
    const called = Array.from({ length: MIN_SAMPLE }, (_, i) => resolved(i, { outcome: 'BULLISH' }));
    const ties = [split(20, 'NEUTRAL'), split(21, 'BEARISH'), uninformed(22, 'NEUTRAL')];
    const combined = teacherBrain([...called, ...ties], 0).metrics.combined;
    expect(combined.n).toBe(13);
    // Before: 12 hits of 13: the 0.45 / 0.1 / 0.45 ties scored as BEARISH calls (float noise decided it), one
    // of them a hit, and the uniform tie as a right NEUTRAL call.
    expect(combined.hit_rate).toMatchObject({ value: 1, n: MIN_SAMPLE });
  });

  it('judges a tie on the published figures, so floating-point noise cannot make a call', () => {
    const p = averageProbs(brainProbs('BULLISH', 100), crowdProbs(SPLIT_COUNTS));
    expect(p[0]).not.toBe(p[2]); // 0.45 and 0.44999999999999996 in binary
    // Before: BEARISH, a call the published 0.45 / 0.1 / 0.45 does not support.
    expect(leanOf(p)).toBe('NEUTRAL');
  });

  it('publishes the tie beside combined_lean, counts it when scored, and leaves it out of the hit rate', () => {
    const s = track(tempStore());
    const votes = Array.from({ length: 7 }, (_, i) =>
      JSON.stringify({ asset: ROUND.asset, prediction: 'BEARISH', voter: `v${i}`, round_id: ROUND.id }),
    ).join('\n');
    importVotesJsonl(s, votes, T0 - MINUTE);
    const live = { mode: 'live', seed: null, brainCalls: callsFor('bullish', 100, 100) } as const;
    const open = step(s, T0 + MINUTE, { ...live, price: 100 }).sharedIntelligence.combined_intelligence;
    expect(open.combined_probabilities).toEqual({ bearish: 0.45, neutral: 0.1, bullish: 0.45 });
    // Before: combined_lean BEARISH and no status.
    expect(open.combined_call_status).toBe('tie');
    expect(open.combined_lean).toBe('NEUTRAL');
    const after = step(s, ROUND.end + MINUTE, { ...live, price: 100 });
    expect(after.teacherLessons.teacher_brain.metrics.combined_no_call_rounds).toBe(1);
    expect(after.statistics.teacher_brain.metrics.combined_no_call_rounds).toBe(1);
    expect(after.teacherLessons.teacher_brain.metrics.combined.n).toBe(1);
  });

  it('writes the rule where it is published: schema, score definitions and rules page', () => {
    const shared = publishedSchema('shared-intelligence.json');
    const combined = propertyOf(shared, 'combined_intelligence');
    expect(String(propertyOf(combined, 'combined_lean').description)).toMatch(/no call/);
    expect(propertyOf(combined, 'combined_call_status').enum).toEqual(['called', 'tie']);
    // The enum of combined_lean is unchanged for strict clients.
    expect(propertyOf(combined, 'combined_lean').enum).toEqual(['BULLISH', 'BEARISH', 'NEUTRAL']);
    expect(SCORE_DEFINITIONS).toMatch(/a tie at the top is no call: left out of the\s+combined hit rate/);
    expect(RULES_PAGE).toContain('combined_call_status');
    expect(RULES_PAGE).toMatch(/left out of the combined hit rate/);
  });
});

describe('a brain call at confidence 0 is no call for the brain hit rate', () => {
  // A NEUTRAL bias whose evidence has no strength: confidence 0, every class a third.
  const unsure = (i: number, outcome: ResolvedRound['outcome']) =>
    resolved(i, { brainCall: 'NEUTRAL', brainConfidence: 0, outcome });

  it('leaves it out of the hit rate and its n, and still scores its probabilities', () => {
    const called = Array.from({ length: MIN_SAMPLE }, (_, i) => resolved(i, { outcome: 'BULLISH' }));
    const unsureRounds = [unsure(20, 'NEUTRAL'), unsure(21, 'NEUTRAL'), unsure(22, 'BEARISH')];
    expect(brainProbs('NEUTRAL', 0)).toEqual(brainProbs('NONE', null)); // uniform: a three-way tie
    const brain = teacherBrain([...called, ...unsureRounds], 0).metrics.brain;
    expect(brain.n).toBe(13);
    // Before: 12 hits of 13, the two flat hours counted as right calls of a brain that leaned nowhere.
    expect(brain.hit_rate).toMatchObject({ value: 1, n: MIN_SAMPLE });
    const alone = teacherBrain([...called, ...unsureRounds].slice(0, MIN_SAMPLE), 0).metrics.brain;
    expect(teacherBrain([...called, ...unsureRounds], 0).metrics.brain.brier_score).not.toBe(
      alone.brier_score,
    );
    // The main brain's public track record counts the same way.
    expect(publicPerformanceFrom([...called, ...unsureRounds]).hit_rate).toMatchObject({
      value: 1,
      n: MIN_SAMPLE,
    });
  });

  it('is written in the published score definitions', () => {
    expect(SCORE_DEFINITIONS).toMatch(
      /a call at confidence 0 is uniform too, a three-way tie: left out of the brain\s+hit rate/,
    );
  });
});
