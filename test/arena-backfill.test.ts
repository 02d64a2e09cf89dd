import { afterEach, describe, expect, it } from 'vitest';
import { backfill } from '../generator/state/backfill.ts';
import { publishedTrackRecord } from './helpers/track-record.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import type { BrainCall } from '../generator/engines/arena/types.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { HOUR, MINUTE, step, T0, tempStore } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

// A price path cycling through four hourly levels, and a brain that always says bullish.
const priceAt = async (_asset: string, ms: number) =>
  100 * (1 + [0, 0.005, 0.004, -0.002][Math.floor(ms / HOUR) % 4]!);
const brainCallAt = async (): Promise<BrainCall[]> =>
  TRACKED_ASSETS.map((asset) => ({ asset, bias: 'bullish', confidence: 65, price: null }));

describe('backfill', () => {
  it('replays past rounds into calls, synthetic votes, outcomes and lessons, all marked replayed', async () => {
    const s = tempStore();
    open.push(s);
    const result = await backfill(s, { days: 2, asOf: T0, seed: 11, brainCallAt, priceAt });
    expect(result).toEqual({ rounds: 48, resolved: 48, voided: 0, skipped: 0 });

    const votes = s.db
      .prepare('SELECT source, replayed, COUNT(*) AS n FROM votes GROUP BY source, replayed')
      .all();
    expect(votes).toEqual([{ source: 'synthetic', replayed: 1, n: expect.any(Number) }]);
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM lessons WHERE replayed = 0').get()).toEqual({ n: 0 });

    const perf = publishedTrackRecord(s, T0);
    expect(perf).toMatchObject({ status: 'available', resolved_rounds: 48, replayed_rounds: 48 });
    expect(perf.note).toContain('backfill replay');

    const bodies = step(s, T0 + MINUTE);
    const lessons = bodies.teacherLessons.latest_lessons;
    expect(lessons).toHaveLength(20);
    for (const l of lessons) {
      expect(l.provenance.replayed).toBe(true);
      expect(l.provenance.human_votes).toBe(0);
      expect(l.summary.startsWith('[replayed]')).toBe(true);
    }
    // Hourly moves +0.5% BULLISH, -0.0995% NEUTRAL, -0.598% BEARISH, +0.2004% NEUTRAL, twelve times each.
    expect(bodies.statistics.core_learning.outcome_distribution).toEqual({
      bullish: 12,
      bearish: 12,
      neutral: 24,
    });
    expect(bodies.statistics.core_learning.lessons_replayed).toBe(48);
    expect(bodies.statistics.main_brain.replayed_calls).toBe(48);
    expect(bodies.statistics.arena.vote_sources.replayed_votes).toBeGreaterThan(0);
    expect(bodies.teacherLessons.teacher_brain.status).toBe('active');
    expect(bodies.teacherLessons.teacher_brain.metrics.brain.hit_rate).toMatchObject({ value: 0.25, n: 48 });
    expect(bodies.sharedIntelligence.system_integrity.replayed_records_present).toBe(true);
    expect(bodies.sharedIntelligence.events.recent.some((e) => e.replayed)).toBe(true);

    // Running it again changes nothing.
    expect(await backfill(s, { days: 2, asOf: T0, seed: 11, brainCallAt, priceAt })).toMatchObject({
      rounds: 48,
      skipped: 48,
      resolved: 0,
    });
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM outcomes').get()).toEqual({ n: 48 });
  });

  it('leaves live rounds alone and voids rounds without prices', async () => {
    const s = tempStore();
    open.push(s);
    step(s, T0 - 2 * HOUR + MINUTE, { mode: 'live', seed: null }); // a live call two rounds back
    const result = await backfill(s, {
      days: 1,
      asOf: T0,
      seed: 1,
      brainCallAt,
      priceAt: async (asset, ms) => (ms === T0 - 5 * HOUR ? null : priceAt(asset, ms)),
    });
    expect(result.skipped).toBe(1);
    expect(result.voided).toBe(2); // the round ending and the round starting at T0 - 5h
    expect(
      s.db
        .prepare('SELECT replayed FROM brain_predictions WHERE recorded_at_ms = ?')
        .get(T0 - 2 * HOUR + MINUTE),
    ).toEqual({
      replayed: 0,
    });
    await expect(backfill(s, { days: 0, asOf: T0, seed: 1, brainCallAt, priceAt })).rejects.toThrow(
      RangeError,
    );
  });
});
