import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backfillSimulated } from '../generator/backfill-command.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

const AS_OF = Date.parse('2026-11-21T12:00:00Z');

describe('backfill over the simulated market', () => {
  it('replays a day of rounds once, and the next run publishes them as replayed history', async () => {
    const dir = await tempDir('emi-backfill-');
    const stateDir = join(dir, 'var');
    const first = await backfillSimulated({ stateDir, days: 1, seed: 42, asOf: AS_OF });
    expect(first.rounds).toBe(24);
    expect(first.resolved + first.voided).toBe(24);
    const again = await backfillSimulated({ stateDir, days: 1, seed: 42, asOf: AS_OF });
    expect(again.skipped).toBe(24);
    expect(again.resolved).toBe(0);

    await runPipeline(simulatedRun(dir, AS_OF, { stateDir }));
    const brain = JSON.parse(await readFile(join(dir, 'site/api/main-brain.php'), 'utf8')) as {
      public_performance: {
        resolved_rounds: number;
        replayed_rounds: number;
        hit_rate: { n: number } | null;
      };
    };
    expect(brain.public_performance.resolved_rounds).toBe(first.resolved);
    expect(brain.public_performance.replayed_rounds).toBe(first.resolved);
    expect(brain.public_performance.hit_rate?.n).toBe(first.resolved);
    const lessons = await readFile(join(dir, 'site/api/teacher-lessons.php'), 'utf8');
    expect(lessons).toMatch(/\[replayed\]/);
  });
});
