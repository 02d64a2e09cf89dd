// The arena store records the data mode of every round's call, and no published figure built from rounds mixes
// modes: a replay or live file never presents simulated rounds as its record (the audit: 13 simulated runs, then a
// replay run into the same state folder, published "Scored over 13 resolved arena rounds" with mode "replay").
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import type { RecordedCall } from '../generator/engines/arena/types.ts';
import type { DataMode } from '../schemas/common.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { collectSimulatedMarket } from '../generator/sources/collect.ts';
import { backfill } from '../generator/state/backfill.ts';
import { ensureRound } from '../generator/state/repo.ts';
import { settleRound } from '../generator/state/settle.ts';
import { publishedTrackRecord } from './helpers/track-record.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import type { SharedIntelligenceResponse } from '../schemas/arena.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import type { MainBrainResponse } from '../schemas/main-brain.ts';
import type { StatisticsResponse } from '../schemas/statistics.ts';
import type { TeacherLessonsResponse } from '../schemas/teacher-lessons.ts';
import { HOUR, MINUTE, schemaOneStore, step, T0, tempStore } from './arena-fixtures.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

/** The simulated market of the hour, as if it had come from a recording (replay) or the venues (live). */
const relabelled = (snapshot: MarketSnapshot, mode: DataMode): MarketSnapshot => ({
  ...snapshot,
  mode,
  seed: null,
  provider: mode === 'live' ? 'public venues' : 'recorded responses of public venues',
  assets: snapshot.assets.map((a) => {
    const section = <T extends { provenance: { mode: DataMode } }>(x: T | null): T | null =>
      x && { ...x, provenance: { ...x.provenance, mode } };
    return {
      ...a,
      candles: section(a.candles),
      ticker: section(a.ticker),
      book: section(a.book),
      funding: section(a.funding),
      openInterest: section(a.openInterest),
      liquidations: section(a.liquidations),
    };
  }),
});

/** A published file, typed by the schema it must pass. */
const readJson = async <T>(dir: string, file: string): Promise<T> =>
  JSON.parse(await readFile(join(dir, 'site', file), 'utf8')) as T;

describe('a state folder that ran simulated, then replay and live', () => {
  it('publishes no simulated round in the replay and live files, and says how many were left out', async () => {
    const dir = await tempDir('emi-data-mode-');
    const first = Date.parse('2026-03-09T22:05:00Z');
    // Four hourly simulated runs: three rounds resolve with simulated prices.
    for (let i = 0; i < 4; i++) {
      expect((await runPipeline(simulatedRun(dir, first + i * HOUR))).status).not.toBe('failed');
    }
    const simulated = await readJson<StatisticsResponse>(dir, 'api/statistics.php');
    expect(simulated.main_brain.public_performance.resolved_rounds).toBe(3);

    const otherRun = async (mode: DataMode, asOf: number) => {
      const report = await runPipeline({
        ...simulatedRun(dir, asOf),
        now: () => asOf,
        collector: async (request) => relabelled(await collectSimulatedMarket(request), mode),
      });
      expect(report.mode).toBe(mode);
      return {
        brain: await readJson<MainBrainResponse>(dir, 'api/main-brain.php'),
        lessons: await readJson<TeacherLessonsResponse>(dir, 'api/teacher-lessons.php'),
        statistics: await readJson<StatisticsResponse>(dir, 'api/statistics.php'),
        shared: await readJson<SharedIntelligenceResponse>(dir, 'arena/get_shared_intelligence.php'),
      };
    };

    const replay = await otherRun('replay', first + 4 * HOUR);
    // Before: "Scored over 3 resolved arena rounds ..." in a replay file.
    expect(replay.brain.public_performance).toMatchObject({
      status: 'no_history',
      resolved_rounds: 0,
      other_mode_rounds: 3,
    });
    expect(replay.brain.public_performance.note).toMatch(/3 resolved rounds .* simulated mode are left out/);
    expect(replay.lessons.mode).toBe('replay');
    expect(replay.lessons.latest_lessons).toEqual([]); // before: three simulated lessons, untagged
    expect(replay.lessons.teacher_brain.metrics).toMatchObject({ resolved_rounds: 0, other_mode_rounds: 3 });
    expect(replay.statistics.main_brain.public_performance.resolved_rounds).toBe(0);
    expect(replay.statistics.main_brain.recorded_calls).toBe(1); // its own call only
    expect(replay.statistics.core_learning.lessons_total).toBe(0);
    // The round the simulator called and the replay run ended is voided, not scored with prices of two modes;
    // it is a simulated round, so only simulated files count it.
    expect(replay.statistics.core_learning.voided_rounds).toBe(0);
    expect(replay.shared.system_integrity.notes.join(' ')).toMatch(/another data mode .*simulated/);
    expect(replay.shared.events.recent.every((e) => e.round_id.endsWith('T02Z'))).toBe(true);

    const live = await otherRun('live', first + 5 * HOUR);
    // The replay round that the live run ended is voided as well: three resolved rounds, all simulated.
    expect(live.brain.public_performance).toMatchObject({ resolved_rounds: 0, other_mode_rounds: 3 });
    expect(live.lessons.latest_lessons).toEqual([]);
    expect(live.lessons.teacher_brain.metrics.other_mode_rounds).toBe(3);

    // Back on the simulator: its own rounds only, each lesson saying its mode.
    await runPipeline(simulatedRun(dir, first + 6 * HOUR));
    const lessons = await readJson<TeacherLessonsResponse>(dir, 'api/teacher-lessons.php');
    expect(lessons.teacher_brain.metrics).toMatchObject({
      resolved_rounds: 3,
      other_mode_rounds: 0,
      voided_rounds: 1, // the simulated round the replay run ended
    });
    expect(lessons.latest_lessons.map((l) => l.provenance.data_mode)).toEqual([
      'simulated',
      'simulated',
      'simulated',
    ]);
  }, 120_000);
});

describe('a round is scored only with prices of the mode its call was recorded in', () => {
  const ROUND = roundAt(T0);

  it('voids a simulated round that a live run ends, and shows no simulated call in the live snapshot', () => {
    const s = track(tempStore());
    step(s, T0 + MINUTE, { mode: 'simulated', price: 100 });
    const live = step(s, T0 + 2 * MINUTE, { mode: 'live', seed: null, price: 200 });
    // Before: the simulator's call and price shown as recorded for the round in a live file.
    expect(live.sharedIntelligence.brain_snapshot.source).toBe('latest_run');
    expect(live.sharedIntelligence.round.brain_call_recorded).toBe(false);
    expect(live.sharedIntelligence.price.at_round_start).toBeNull();
    expect(live.statistics.main_brain.latest_call).toBeNull();

    step(s, ROUND.end + MINUTE, { mode: 'live', seed: null, price: 202 });
    const outcome = s.db
      .prepare('SELECT status, void_reason FROM outcomes WHERE round_id = ?')
      .get(ROUND.id) as {
      status: string;
      void_reason: string;
    };
    // Before: resolved from a simulated start price (100) to a live end price (202).
    expect(outcome.status).toBe('voided');
    expect(outcome.void_reason).toMatch(/recorded in simulated mode .* ran in live mode/);
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM lessons').get()).toEqual({ n: 0 });
  });

  it('keeps a backfill of the simulated market out of a live record, and in a simulated one', async () => {
    const s = track(tempStore());
    const priceAt = async (_asset: string, ms: number) => 100 * (1 + [0, 0.005, -0.004][(ms / HOUR) % 3]!);
    const brainCallAt = async () =>
      TRACKED_ASSETS.map((asset) => ({ asset, bias: 'bullish' as const, confidence: 60, price: null }));
    await backfill(s, { days: 1, asOf: T0, seed: 3, brainCallAt, priceAt });
    // Before: the 24 replayed simulated rounds were the live brain's track record.
    expect(publishedTrackRecord(s, T0, 'live')).toMatchObject({ resolved_rounds: 0, other_mode_rounds: 24 });
    expect(publishedTrackRecord(s, T0, 'simulated')).toMatchObject({
      resolved_rounds: 24,
      replayed_rounds: 24,
    });
    const live = step(s, T0 + MINUTE, { mode: 'live', seed: null });
    expect(live.teacherLessons.latest_lessons).toEqual([]);
    expect(live.statistics.main_brain).toMatchObject({ recorded_calls: 1, replayed_calls: 0 });
    expect(live.statistics.core_learning.lessons_total).toBe(0);
    expect(live.sharedIntelligence.system_integrity.replayed_records_present).toBe(false);
    expect(live.sharedIntelligence.events.recent.every((e) => !e.replayed)).toBe(true);
    const sim = step(s, T0 + 2 * MINUTE, { mode: 'simulated' });
    expect(sim.teacherLessons.latest_lessons).toHaveLength(20);
    expect(sim.teacherLessons.latest_lessons.every((l) => l.provenance.data_mode === 'simulated')).toBe(true);
  });
});

describe('a store from before data modes were recorded', () => {
  /** A store at schema version 1, as the generator left it before this change. */
  const oldStore = (): string => {
    const { file, db } = schemaOneStore('2025-01-01T00:00:00Z');
    // Rounds 0..4 before T0: called and resolved the old way, with the run log the old generator kept.
    const runs: Array<Array<[DataMode, 'ok' | 'failed']>> = [
      [
        ['live', 'failed'], // rolled back: says nothing of the call
        ['simulated', 'ok'],
      ], // a simulated run
      [['live', 'ok']], // a live run
      [], // a backfill (replayed): no run
      [], // no run on record: unknown
      [
        ['simulated', 'ok'],
        ['live', 'ok'],
      ], // two modes at one time: unknown
    ];
    runs.forEach((rows, i) => {
      const round = roundByIndex(roundAt(T0).index - 6 + i);
      const at = round.start + MINUTE;
      const replayed = i === 2;
      ensureRound(db, round);
      db.prepare(
        `INSERT INTO brain_predictions (round_id, asset, prediction, confidence, start_price, recorded_at_ms, replayed)
         VALUES (?, ?, 'BULLISH', 60, 100, ?, ?)`,
      ).run(round.id, round.asset, at, replayed ? 1 : 0);
      for (const [mode, status] of rows) {
        db.prepare(
          `INSERT INTO run_log (owner, mode, as_of_ms, finished_at_ms, status, detail) VALUES ('old', ?, ?, ?, ?, NULL)`,
        ).run(mode, at, at, status);
      }
      const call = { roundId: round.id, asset: round.asset, prediction: 'BULLISH' as const, confidence: 60 };
      const recorded: RecordedCall = { ...call, startPrice: 100, recordedAt: at, replayed, dataMode: null };
      settleRound(db, { round, call: recorded, endPrice: 101, resolvedAt: round.end + MINUTE, replayed });
    });
    db.close();
    return file;
  };

  it('infers the mode from the run log where it can, and counts an unknown one as simulated only', () => {
    const s = track(openArenaStore(oldStore()));
    const modes = s.db
      .prepare('SELECT data_mode FROM brain_predictions ORDER BY recorded_at_ms')
      .all()
      .map((r) => (r as { data_mode: string | null }).data_mode);
    expect(modes).toEqual(['simulated', 'live', 'simulated', null, null]);
    expect(publishedTrackRecord(s, T0, 'live')).toMatchObject({ resolved_rounds: 1, other_mode_rounds: 4 });
    expect(publishedTrackRecord(s, T0, 'replay')).toMatchObject({ resolved_rounds: 0, other_mode_rounds: 5 });
    const simulated = publishedTrackRecord(s, T0, 'simulated');
    expect(simulated).toMatchObject({ resolved_rounds: 4, other_mode_rounds: 1 });
    const live = step(s, T0 + MINUTE, { mode: 'live', seed: null });
    expect(live.teacherLessons.latest_lessons.map((l) => l.provenance.data_mode)).toEqual(['live']);
    expect(live.teacherLessons.teacher_brain.metrics.other_mode_rounds).toBe(4);
    const sim = step(s, T0 + 2 * MINUTE, { mode: 'simulated' });
    expect(sim.teacherLessons.latest_lessons.map((l) => l.provenance.data_mode)).toEqual([
      null,
      null,
      'simulated',
      'simulated',
    ]);
  });
});

describe('the rules page says which price a round starts from, as the code does', () => {
  const page = readFileSync(new URL('../site/docs/arena-rules.njk', import.meta.url), 'utf8');

  it('names the run’s own price, and closed candles only', () => {
    // Before: "that is the open of the first hourly candle opening at or after the start".
    expect(page).not.toMatch(/that is the open of the first hourly candle/);
    expect(page).toMatch(/closed hourly candle/);
    expect(page).toMatch(/first generator run within 15 minutes of the start records the brain call/);
    // A price older than the start is never the reference price (a candle close of an earlier hour).
    expect(page).toMatch(
      /first price the generator saw at or after the round start, by the price's own time/,
    );
  });
});
