import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import os from 'node:os';
import {
  acquireRunLock,
  ArenaStoreBusyError,
  DEFAULT_LOCK_TTL_MS,
  releaseRunLock,
  renewRunLock,
  withRunLock,
} from '../generator/state/lock.ts';
import { MIGRATIONS } from '../generator/state/migrations.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import { publishedTrackRecord } from './helpers/track-record.ts';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { brainCallFor } from '../generator/state/repo.ts';
import { settleRound } from '../generator/state/settle.ts';
import { HumanConsensusResponse, SharedIntelligenceResponse } from '../schemas/arena.ts';
import { StatisticsResponse } from '../schemas/statistics.ts';
import { TeacherLessonsResponse } from '../schemas/teacher-lessons.ts';
import { HOUR, MINUTE, step, T0, tempStore, tempStorePath } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const n = (s: ArenaStore, sql: string) => (s.db.prepare(sql).get() as { n: number }).n;
const outcomes = (s: ArenaStore) =>
  s.db.prepare('SELECT * FROM outcomes').all() as Array<Record<string, unknown>>;

describe('arena store', () => {
  it('creates folders, uses WAL and migrates once', () => {
    const file = tempStorePath();
    const s = track(openArenaStore(file));
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(n(s, 'SELECT COUNT(*) AS n FROM schema_migrations')).toBe(MIGRATIONS.length);
    s.close();
    const again = track(openArenaStore(file));
    expect(n(again, 'SELECT COUNT(*) AS n FROM schema_migrations')).toBe(MIGRATIONS.length);
  });

  it('publishes honest, schema-valid bodies from a fresh store', () => {
    const s = track(tempStore());
    const at = T0 + 20 * MINUTE; // past the entry window: nothing gets recorded
    const bodies = step(s, at, { mode: 'live', seed: null });
    expect(HumanConsensusResponse.parse(bodies.humanConsensus).human_consensus).toMatchObject({
      total: 0,
      consensus: 'NONE',
      disagreement_score: 0,
    });
    expect(bodies.humanConsensus.vote_sources).toMatchObject({ human_votes: 0, synthetic_votes: 0 });
    expect(TeacherLessonsResponse.parse(bodies.teacherLessons).latest_lessons).toEqual([]);
    expect(bodies.teacherLessons.teacher_brain.status).toBe('no_history');
    expect(bodies.teacherLessons.teacher_brain.metrics.brain.n).toBe(0);
    expect(bodies.teacherLessons.teacher_brain.metrics.crowd.n).toBe(0);
    const stats = StatisticsResponse.parse(bodies.statistics);
    expect(stats.main_brain.public_performance.status).toBe('no_history');
    expect(stats.main_brain.recorded_calls).toBe(0);
    expect(stats.core_learning.lessons_total).toBe(0);
    expect(stats.api_ecosystem.generator_runs).toMatchObject({ total: 1, ok: 1, failed: 0 });
    const shared = SharedIntelligenceResponse.parse(bodies.sharedIntelligence);
    expect(shared.my_prediction).toBeNull();
    expect(shared.round.brain_call_recorded).toBe(false);
    expect(shared.brain_snapshot.source).toBe('latest_run');
    expect(publishedTrackRecord(s, at).status).toBe('no_history');
  });

  it('records the brain call once, at the first run inside the round', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { price: 100 });
    step(s, T0 + 2 * MINUTE, { price: 150, brainCalls: [] });
    const calls = s.db.prepare('SELECT * FROM brain_predictions').all() as Array<Record<string, unknown>>;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ start_price: 100, prediction: 'BULLISH', recorded_at_ms: T0 + MINUTE });
  });

  it('resolves a round exactly once, however often runs repeat', () => {
    const file = tempStorePath();
    const a = track(openArenaStore(file));
    const b = track(openArenaStore(file)); // a second connection, as an overlapping process would have
    step(a, T0 + MINUTE, { price: 100 });
    const first = step(a, T0 + HOUR + MINUTE, { price: 101 });
    step(b, T0 + HOUR + MINUTE, { price: 90 });
    step(a, T0 + HOUR + 2 * MINUTE, { price: 80 });
    expect(outcomes(a)).toHaveLength(1);
    expect(outcomes(a)[0]).toMatchObject({ status: 'resolved', outcome: 'BULLISH', end_price: 101 });
    expect(n(a, 'SELECT COUNT(*) AS n FROM lessons')).toBe(1);
    const lesson = first.teacherLessons.latest_lessons[0]!;
    expect(lesson).toMatchObject({ round_id: roundAt(T0).id, actual_outcome: 'BULLISH', brain_correct: 1 });
    // The synthetic crowd voted in full before the counts were frozen.
    expect(lesson.provenance.synthetic_votes).toBeGreaterThanOrEqual(8);
    expect(lesson.provenance.human_votes).toBe(0);
  });

  it('writes one outcome and one lesson even when settlement itself is attempted twice', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { price: 100 });
    const round = roundAt(T0);
    const call = brainCallFor(s.db, round.id)!;
    const settle = (endPrice: number) =>
      settleRound(s.db, { round, call, endPrice, resolvedAt: T0 + HOUR, replayed: false });
    expect(settle(101)).toBe('resolved');
    expect(settle(90)).toBe('already_settled');
    expect(outcomes(s)).toEqual([expect.objectContaining({ outcome: 'BULLISH', end_price: 101 })]);
    expect(n(s, 'SELECT COUNT(*) AS n FROM lessons')).toBe(1);
  });

  it('voids a round whose first later run comes after the resolution window', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { price: 100 });
    const bodies = step(s, T0 + HOUR + 40 * MINUTE, { price: 120 });
    expect(outcomes(s)[0]).toMatchObject({ status: 'voided', outcome: null });
    expect(bodies.teacherLessons.latest_lessons).toEqual([]);
    expect(bodies.statistics.core_learning.voided_rounds).toBe(1);
    expect(bodies.sharedIntelligence.events.recent[0]).toMatchObject({ kind: 'round_voided' });
  });

  it('keeps the store consistent when a run fails inside the transaction, and the next run completes it', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { price: 100 });
    const votesBefore = n(s, 'SELECT COUNT(*) AS n FROM votes');
    const crash = () => {
      throw new Error('simulated crash before publishing');
    };
    expect(() => step(s, T0 + HOUR + MINUTE, { price: 99, onBeforeCommit: crash })).toThrow(
      'simulated crash',
    );
    expect(outcomes(s)).toHaveLength(0);
    expect(n(s, 'SELECT COUNT(*) AS n FROM lessons')).toBe(0);
    expect(n(s, 'SELECT COUNT(*) AS n FROM votes')).toBe(votesBefore);
    expect(n(s, 'SELECT COUNT(*) AS n FROM brain_predictions')).toBe(1); // the next round's call was not kept
    expect(n(s, "SELECT COUNT(*) AS n FROM run_log WHERE status = 'failed'")).toBe(1);

    const bodies = step(s, T0 + HOUR + 2 * MINUTE, { price: 99 });
    expect(outcomes(s)).toEqual([expect.objectContaining({ status: 'resolved', outcome: 'BEARISH' })]);
    expect(bodies.teacherLessons.latest_lessons).toHaveLength(1);
    expect(n(s, 'SELECT COUNT(*) AS n FROM brain_predictions')).toBe(2);
    expect(bodies.statistics.api_ecosystem.generator_runs).toMatchObject({ ok: 2, failed: 1 });
  });
});

describe('run lock', () => {
  it('refuses a second concurrent run and frees the lock afterwards', async () => {
    const file = tempStorePath();
    const a = track(openArenaStore(file));
    const b = track(openArenaStore(file));
    let release!: () => void;
    const held = withRunLock(a, 'run-a', () => new Promise<void>((resolve) => (release = resolve)));
    await expect(withRunLock(b, 'run-b', () => 'ran')).rejects.toThrow(ArenaStoreBusyError);
    await expect(withRunLock(b, 'run-b', () => 'ran')).rejects.toThrow(/run-a/);
    release();
    await held;
    await expect(withRunLock(b, 'run-b', () => 'ran')).resolves.toBe('ran');
  });

  it('releases the lock when the run throws, and takes over an expired lock', async () => {
    const s = track(tempStore());
    await expect(withRunLock(s, 'x', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(withRunLock(s, 'y', () => 1)).resolves.toBe(1);
    acquireRunLock(s, 'crashed', { now: () => 1_000, ttlMs: 1_000 });
    expect(() => acquireRunLock(s, 'next', { now: () => 1_999 })).toThrow(ArenaStoreBusyError);
    acquireRunLock(s, 'next', { now: () => 2_000 });
    releaseRunLock(s, 'next');
  });

  it('takes over at once, with a one-line notice, a lock whose process is gone; refuses one whose process lives', () => {
    const s = track(tempStore());
    const host = os.hostname();
    const notices: string[] = [];
    acquireRunLock(s, `${host}:999999:0123abcd`, { now: () => 1_000 });
    acquireRunLock(s, 'next', { now: () => 2_000, isAlive: () => false, notice: (l) => notices.push(l) });
    expect(notices).toEqual([`took over the run lock of pid 999999 on ${host}: its process 999999 is gone`]);
    releaseRunLock(s, 'next');
    acquireRunLock(s, `${host}:${process.ppid}:0123abcd`, { now: () => 1_000 });
    expect(() => acquireRunLock(s, 'next', { now: () => 2_000 })).toThrow(
      /pid \d+ on .*heartbeat valid until/,
    );
    // A live holder whose heartbeat stopped (stuck, or on another host) is taken over once the heartbeat is old.
    acquireRunLock(s, 'next', { now: () => 1_000 + DEFAULT_LOCK_TTL_MS, notice: (l) => notices.push(l) });
    expect(notices.at(-1)).toMatch(/: its heartbeat stopped at /);
    releaseRunLock(s, 'next');
  });

  it('renews the heartbeat of the lock it holds, and only its own', () => {
    const s = track(tempStore());
    acquireRunLock(s, 'mine', { now: () => 1_000, ttlMs: 1_000 });
    expect(renewRunLock(s, 'mine', { now: () => 1_900, ttlMs: 1_000 })).toBe(true);
    expect(() => acquireRunLock(s, 'other', { now: () => 2_500 })).toThrow(ArenaStoreBusyError);
    expect(renewRunLock(s, 'other', { now: () => 2_500 })).toBe(false);
    releaseRunLock(s, 'mine');
  });

  it('refuses a run in another process while the lock is held', async () => {
    const file = tempStorePath();
    const s = track(openArenaStore(file));
    acquireRunLock(s, 'parent');
    const lockModule = path.resolve('generator/state/lock.ts');
    const storeModule = path.resolve('generator/state/store.ts');
    const script = `
      const { acquireRunLock } = await import(${JSON.stringify(lockModule)});
      const { openArenaStore } = await import(${JSON.stringify(storeModule)});
      const store = openArenaStore(${JSON.stringify(file)});
      try { acquireRunLock(store, 'child'); console.log('acquired'); }
      catch (e) { console.log(e.name + ': ' + e.message); }
      store.close();`;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ]);
    expect(stdout).toMatch(/^ArenaStoreBusyError: another generator run \(parent\)/);
    releaseRunLock(s, 'parent');
  });
});
