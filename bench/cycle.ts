// One scheduled publishing cycle (generate + build, 7 assets, simulated) inside one long-running process, as
// `emi schedule` and `emi up` run it: a warm-up cycle, then `repeats` timed cycles. In-process by design: the
// operator pays for the process once, then for each cycle.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED } from '../generator/defaults.ts';
import { publishCycle } from '../generator/cycle.ts';

export async function measureCycles(repeats: number): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-bench-cycle-'));
  const flags = {
    cadence: DEFAULT_CADENCE_SECONDS,
    seed: DEFAULT_SEED,
    source: 'sim' as const,
    out: join(dir, 'site'),
    paid: join(dir, 'paid'),
    state: join(dir, 'var'),
    dist: join(dir, 'dist'),
    baseUrl: 'http://127.0.0.1:8080',
  };
  const log = console.log;
  console.log = () => {}; // Eleventy prints one line per build
  try {
    const times: number[] = [];
    for (let i = 0; i <= repeats; i++) {
      const started = performance.now();
      const report = await publishCycle(flags);
      if (report.status !== 'ok') throw new Error(`cycle ${i}: ${report.status} ${report.error ?? ''}`);
      if (i > 0) times.push(performance.now() - started); // cycle 0 loads the modules: the warm-up
    }
    return times;
  } finally {
    console.log = log;
    await rm(dir, { recursive: true, force: true });
  }
}
