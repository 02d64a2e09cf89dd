// One scheduled publishing cycle (generate + build, 7 assets, simulated) inside one long-running process, as
// `emi schedule` and `emi up` run it: WARM_UP_CYCLES untimed cycles, then `repeats` timed cycles. In-process by
// design: the operator pays for the process once, then for each cycle. The first cycle loads every module and the
// next few still run code V8 has not optimised yet (in one profiling run, cycles 2 to 6 took a median 346 ms and
// the ten after them 252 ms), so the timed cycles are those of a process that has run for a few minutes, as
// `emi schedule` has for all but its first minutes. `measureCyclePairs` also runs an aged site (a day of earlier
// history, or a year of runs in its arena store), as a process that has been running for a while has, in turns
// with a first-day one.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED } from '../generator/defaults.ts';
import { publishCycle } from '../generator/cycle.ts';
import { appendHistory } from '../generator/history/index.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { brainCallFor } from '../generator/state/repo.ts';
import { addSyntheticCrowd, recordRoundCall, settleRound } from '../generator/state/settle.ts';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import { HISTORY_RESOURCE_IDS, historyDir } from '../schemas/history.ts';
import { inTurns } from './turns.ts';
import type { HistoryResourceId, HistoryRow } from '../schemas/history.ts';

/** Cycles run before timing: the first loads the modules, the next ones warm V8 up. */
export const WARM_UP_CYCLES = 5;

/** What an aged site is given after its first cycle: earlier history rows per resource, earlier run-log rows. */
export interface Age {
  historyRows?: number;
  runLogRows?: number;
  /** Earlier arena rounds, one an hour, each with its call, synthetic crowd, outcome and lesson (8 640: a year). */
  arenaRounds?: number;
}

/** One site the cycles publish: its folders below `dir`, and the age it is given after its first cycle. */
interface BenchSite {
  flags: Parameters<typeof publishCycle>[0];
  age: Age;
  cycles: number;
}

const benchSite = (dir: string, age: Age): BenchSite => ({
  flags: {
    cadence: DEFAULT_CADENCE_SECONDS,
    seed: DEFAULT_SEED,
    source: 'sim',
    out: join(dir, 'site'),
    paid: join(dir, 'paid'),
    state: join(dir, 'var'),
    dist: join(dir, 'dist'),
    baseUrl: 'http://127.0.0.1:8080',
  },
  age,
  cycles: 0,
});

/** One cycle of `site`, timed. */
async function timedCycle(site: BenchSite): Promise<number> {
  const started = performance.now();
  const report = await publishCycle(site.flags);
  const ms = performance.now() - started;
  if (report.status !== 'ok') throw new Error(`cycle ${site.cycles}: ${report.status} ${report.error ?? ''}`);
  site.cycles += 1;
  if (site.cycles === 1) await giveAge(site);
  return ms;
}

/** Runs `body` with fresh folders, and without Eleventy's line per build. */
async function inBenchFolder<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-bench-cycle-'));
  const log = console.log;
  console.log = () => {};
  try {
    return await body(dir);
  } finally {
    console.log = log;
    await rm(dir, { recursive: true, force: true });
  }
}

export function measureCycles(repeats: number): Promise<number[]> {
  return inBenchFolder(async (dir) => {
    const site = benchSite(dir, {});
    for (let i = 0; i < WARM_UP_CYCLES; i++) await timedCycle(site);
    const times: number[] = [];
    for (let i = 0; i < repeats; i++) times.push(await timedCycle(site));
    return times;
  });
}

/**
 * A first-day site and one of `age`, their cycles in pairs in one process (bench/turns.ts) after the warm-up
 * cycles of each: a pair's ratio is what the age adds.
 */
export function measureCyclePairs(
  repeats: number,
  age: Age,
): Promise<Array<{ first: number; aged: number }>> {
  return inBenchFolder(async (dir) => {
    const first = benchSite(join(dir, 'first'), {});
    const aged = benchSite(join(dir, 'aged'), age);
    for (let i = 0; i < WARM_UP_CYCLES; i++) {
      await timedCycle(first);
      await timedCycle(aged);
    }
    const pairs: Array<{ first: number; aged: number }> = [];
    for (let i = 0; i < repeats; i++) {
      const [firstMs, agedMs] = await inTurns(
        i,
        () => timedCycle(first),
        () => timedCycle(aged),
      );
      pairs.push({ first: firstMs, aged: agedMs });
    }
    return pairs;
  });
}

async function giveAge({ flags, age }: BenchSite): Promise<void> {
  if (age.historyRows) await fillHistory(join(flags.state, 'published', 'current'), age.historyRows);
  if (age.runLogRows) fillRunLog(join(flags.state, 'arena.sqlite'), age.runLogRows);
  if (age.arenaRounds)
    fillArena(join(flags.state, 'arena.sqlite'), age.arenaRounds, flags.seed ?? DEFAULT_SEED);
}

/**
 * Gives the arena store `rounds` earlier rounds before the current one, as a year of backfills leaves them: each
 * with a replayed simulated call, its synthetic crowd, an outcome and a lesson, in one transaction.
 */
function fillArena(file: string, rounds: number, seed: number): void {
  const store = openArenaStore(file);
  try {
    const { db } = store;
    const current = roundAt(Date.now()).index;
    db.transaction(() => {
      for (let index = current - rounds; index < current; index++) {
        const round = roundByIndex(index);
        const price = 100 + (index % 17);
        const bias = (['bullish', 'bearish', 'neutral'] as const)[index % 3] ?? null;
        recordRoundCall(
          db,
          round,
          { asset: round.asset, bias, confidence: 60, price },
          price,
          round.start,
          true,
          'simulated',
        );
        addSyntheticCrowd(db, 'bench-salt', seed, round, round.end - 1, true);
        const call = brainCallFor(db, round.id);
        if (!call) throw new Error(`no call recorded for ${round.id}`);
        settleRound(db, {
          round,
          call,
          endPrice: price * (1 + ((index % 7) - 3) / 500),
          resolvedAt: round.end,
          replayed: true,
        });
      }
    })();
  } finally {
    store.close();
  }
}

/**
 * Gives the arena store `rows` earlier runs in its run log, one a minute (525 600 is a year at the default
 * cadence), one in fifty failed as venue outages leave them.
 */
function fillRunLog(file: string, rows: number): void {
  const store = openArenaStore(file);
  try {
    const insert = store.db.prepare(
      `INSERT INTO run_log (owner, mode, as_of_ms, finished_at_ms, status, detail, arena_step)
       VALUES ('bench', 'simulated', ?, ?, ?, ?, ?)`,
    );
    const start = Date.now() - rows * 60_000;
    store.db.transaction(() => {
      for (let k = 0; k < rows; k++) {
        const failed = k % 50 === 0;
        const at = start + k * 60_000;
        insert.run(
          at,
          at + 400,
          failed ? 'failed' : 'ok',
          failed ? 'stale: no price came in' : null,
          failed ? 0 : 1,
        );
      }
    })();
  } finally {
    store.close();
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
