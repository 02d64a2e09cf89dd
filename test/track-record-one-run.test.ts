// One run publishes one track record: the main brain (free and paid) carries the one the run's statistics and
// teacher lessons carry, counted after the run resolved the round that had just ended, not one round behind.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backfillSimulated } from '../generator/backfill-command.ts';
import { runPipeline } from '../generator/pipeline.ts';
import type { MainBrainResponse } from '../schemas/main-brain.ts';
import type { PaidMainBrain } from '../schemas/paid/paid-main-brain.ts';
import type { StatisticsResponse } from '../schemas/statistics.ts';
import type { TeacherLessonsResponse } from '../schemas/teacher-lessons.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

const HOUR = 3_600_000;
const T = Date.parse('2026-11-20T10:00:00Z');

const readJson = async <B>(file: string): Promise<B> => JSON.parse(await readFile(file, 'utf8')) as B;

/** The track record each published file of the run at `asOf` states. */
async function trackRecordsAfterRun(dir: string, asOf: number) {
  const report = await runPipeline(simulatedRun(dir, asOf));
  expect(report.status).toBe('ok');
  const site = join(dir, 'site');
  const [brain, paid, statistics, lessons] = await Promise.all([
    readJson<MainBrainResponse>(join(site, 'api/main-brain.php')),
    readJson<PaidMainBrain>(join(dir, 'paid/x402-main-brain.json')),
    readJson<StatisticsResponse>(join(site, 'api/statistics.php')),
    readJson<TeacherLessonsResponse>(join(site, 'api/teacher-lessons.php')),
  ]);
  return {
    brain: brain.public_performance,
    paid: paid.public_performance,
    statistics: statistics.main_brain.public_performance,
    teacherCount: lessons.teacher_brain.metrics.resolved_rounds,
  };
}

describe('the track record of one run', () => {
  it('is the same in the main brain, the paid main brain, the statistics and the teacher lessons', async () => {
    const dir = await tempDir('emi-track-record-');
    await backfillSimulated({ stateDir: join(dir, 'var'), days: 1, seed: 42, asOf: T });

    const first = await trackRecordsAfterRun(dir, T);
    // The run an hour later resolves the round the first one opened: the count moves in every file at once.
    const next = await trackRecordsAfterRun(dir, T + HOUR);
    expect(next.statistics.resolved_rounds).toBe(first.statistics.resolved_rounds + 1);

    for (const run of [first, next]) {
      expect(run.brain).toEqual(run.statistics);
      expect(run.paid).toEqual(run.brain);
      expect(run.brain.resolved_rounds).toBe(run.teacherCount);
    }
  });
});
