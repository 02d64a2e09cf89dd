// `emi up` and `emi schedule` run `generate` once a minute for months in one process: what a run leaves in memory
// must not add up. Each run used to leave its market snapshot reachable (through an abort listener Node keeps alive,
// see collectWithin in generator/pipeline.ts): 0.8 MB a run, 26 MB between runs 10 and 40. Measured in a process of
// its own, after full collections, as the heap in use: a count of bytes kept, not a time.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const MB = 1024 * 1024;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-generate-memory-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('generate again and again in one process', () => {
  it('keeps no run’s data: the heap after run 40 is within a few MB of the heap after run 10', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', 'test/helpers/generate-loop.ts', dir, '10', '40'],
      { maxBuffer: 16 * MB },
    );
    const heap = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
    expect(heap['10']).toBeGreaterThan(0);
    // Caches fill up to their bounds (the simulator's 64 paths, a day file's rows) and today's history grows by a
    // row a run: a few MB at most. A snapshot kept per run would be about 24 MB here.
    expect((heap['40']! - heap['10']!) / MB).toBeLessThan(8);
  }, 180_000);
});
