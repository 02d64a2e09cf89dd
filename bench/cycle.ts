// One scheduled publishing cycle (generate + build, 7 assets, simulated) inside one long-running process, as
// `emi schedule` and `emi up` run it: WARM_UP_CYCLES untimed cycles, then `repeats` timed cycles. In-process by
// design: the operator pays for the process once, then for each cycle. The first cycle loads every module and the
// next few still run code V8 has not optimised yet (in one profiling run, cycles 2 to 6 took a median 346 ms and
// the ten after them 252 ms), so the timed cycles are those of a process that has run for a few minutes, as
// `emi schedule` has for all but its first minutes. With `historyRows`, the cycles run on top of that many earlier
// runs of history, as a process that has been running for a while does.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED } from '../generator/defaults.ts';
import { publishCycle } from '../generator/cycle.ts';
import { appendHistory } from '../generator/history/index.ts';
import { HISTORY_RESOURCE_IDS, historyDir } from '../schemas/history.ts';
import type { HistoryResourceId, HistoryRow } from '../schemas/history.ts';

/** Cycles run before timing: the first loads the modules, the next ones warm V8 up. */
export const WARM_UP_CYCLES = 5;

export async function measureCycles(repeats: number, { historyRows = 0 } = {}): Promise<number[]> {
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
    for (let i = 0; i < WARM_UP_CYCLES + repeats; i++) {
      const started = performance.now();
      const report = await publishCycle(flags);
      if (report.status !== 'ok') throw new Error(`cycle ${i}: ${report.status} ${report.error ?? ''}`);
      if (i >= WARM_UP_CYCLES) times.push(performance.now() - started);
      if (i === 0 && historyRows > 0)
        await fillHistory(join(flags.state, 'published', 'current'), historyRows);
    }
    return times;
  } finally {
    console.log = log;
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Gives the served generation `rows` earlier runs of history per resource, one a minute (1 440 is a day at the
 * default cadence), so the cycles that follow pay what a process that has run for that long pays.
 */
async function fillHistory(generation: string, rows: number): Promise<void> {
  const now = Date.now();
  const byResource: Partial<Record<HistoryResourceId, HistoryRow[]>> = {};
  for (const id of HISTORY_RESOURCE_IDS) {
    const latest = JSON.parse(await readFile(join(generation, historyDir(id), 'latest.json'), 'utf8')) as {
      rows: HistoryRow[];
    };
    const [row] = latest.rows;
    if (!row) throw new Error(`no history row for ${id} to copy`);
    byResource[id] = Array.from({ length: rows }, (_, k) => ({
      ...row,
      run_at: new Date(Math.floor(now / 60_000) * 60_000 - (rows - k) * 60_000).toISOString(),
    }));
  }
  const result = await appendHistory(byResource, { root: generation, now });
  if (result.refused.length > 0) throw new Error(`history rows refused: ${result.refused[0]?.reason}`);
}
