// `npm run bench`: every goal of issue 14, each against its baseline measured in the same run, printed as one
// table and written to bench/results.json. Whole processes where a user pays for a whole process (a command run
// by cron or CI), in-process where a long-running process pays (the scheduled cycle, the paywall server).
//
// `npm run bench -- --short` (CI): fewer repeats, no 700-asset universe, a smaller paywall load; it compares each
// ratio with bench/baseline.json and fails only when one regresses by more than half, never on an absolute time.
// `--write-baseline` adds this run's ratios to the baseline, which is the median of the last three such runs.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCycles, measureCyclePairs, WARM_UP_CYCLES } from './cycle.ts';
import type { Age } from './cycle.ts';
import type { PaywallSummary } from './paywall.ts';
import { inTurns } from './turns.ts';

const SHORT = process.argv.includes('--short');
const WRITE_BASELINE = process.argv.includes('--write-baseline');
/** Pairs of whole processes per row (each pair a measure and its baseline, back to back). */
const REPEATS = SHORT ? 5 : 7;
/** Timed cycles of the scheduled-cycle row (after bench/cycle.ts's warm-up cycles): each takes well under a second. */
const CYCLES = SHORT ? 5 : 10;
/**
 * Pairs of the day-of-history row, in both modes: single pairs' ratios ranged from 0.98 to 1.83 in one series, and
 * the median of 5 from 1.24 to 1.61, too wide for the CI check; the median of 11 stayed within 1.23-1.46.
 */
const DAY_PAIRS = 11;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EMI = join(ROOT, 'bin', 'emi.js');
const USAGE = join(ROOT, 'bench', 'report-usage.mjs');
const GENERATE_ONCE = join(ROOT, 'build', 'bench-generate-once.js');
const PAYWALL_ONCE = join(ROOT, 'build', 'bench-paywall-once.js');
/** A ratio "regresses by more than half" when it is this many times worse than its baseline. */
const TOLERANCE = 1.5;

interface Sample {
  wallMs: number;
  maxRssMiB: number;
  cpuMs: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

/** One whole process (`node ...args`), timed from spawn to exit, with its peak memory and CPU from the preload. */
function runProcess(args: string[]): Sample {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', USAGE, ...args], { encoding: 'utf8', cwd: ROOT });
  const wallMs = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  const line = result.stderr.split('\n').find((l) => l.startsWith('EMI_BENCH_USAGE '));
  const usage = JSON.parse(line?.slice('EMI_BENCH_USAGE '.length) ?? '{}') as Omit<Sample, 'wallMs'>;
  return { wallMs, ...usage };
}

/** The paywall benchmark in its own process (bench/paywall-once.ts): its tables are passed on, its summary returned. */
function runPaywallProcess(): PaywallSummary {
  const result = spawnSync(process.execPath, [PAYWALL_ONCE], {
    encoding: 'utf8',
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = result.stdout.trimEnd().split('\n');
  if (result.status !== 0) {
    console.log(result.stdout); // what it printed before it failed
    throw new Error(`the paywall benchmark exited ${result.status ?? result.signal}`);
  }
  const summary = lines.pop() ?? '';
  console.log(lines.join('\n'));
  return JSON.parse(summary) as PaywallSummary;
}

/** Several processes run one after another, as one sample: wall and CPU times add up, peak memory is the largest. */
const together = (samples: Sample[]): Sample => ({
  wallMs: samples.reduce((sum, x) => sum + x.wallMs, 0),
  maxRssMiB: Math.max(...samples.map((x) => x.maxRssMiB)),
  cpuMs: samples.reduce((sum, x) => sum + x.cpuMs, 0),
});

const medianSample = (samples: Sample[]): Sample => ({
  wallMs: median(samples.map((x) => x.wallMs)),
  maxRssMiB: median(samples.map((x) => x.maxRssMiB)),
  cpuMs: median(samples.map((x) => x.cpuMs)),
});

interface PairedSamples {
  value: Sample;
  baseline: Sample;
  /** The median of the pairs' wall-time ratios (value over baseline). */
  ratio: number;
}

/**
 * Runs a measure and its baseline REPEATS times in pairs (bench/turns.ts), after one untimed run of each (which
 * fills the OS file cache). Each gets its median; the ratio is the median of the pairs' ratios, the only kind a CI
 * check can hold against a baseline on this machine.
 */
async function paired(measure: () => Sample[], baseline: () => Sample[]): Promise<PairedSamples> {
  measure();
  baseline();
  const pairs: Array<{ value: Sample; baseline: Sample }> = [];
  for (let i = 0; i < REPEATS; i++) {
    const [value, base] = await inTurns(
      i,
      () => together(measure()),
      () => together(baseline()),
    );
    pairs.push({ value, baseline: base });
  }
  return {
    value: medianSample(pairs.map((p) => p.value)),
    baseline: medianSample(pairs.map((p) => p.baseline)),
    ratio: median(pairs.map((p) => p.value.wallMs / p.baseline.wallMs)),
  };
}

const node1 = (): Sample[] => [runProcess(['-e', '1'])];

interface Row {
  id: string;
  measure: string;
  how: 'whole process' | 'in-process';
  value: number;
  unit: string;
  baseline: string;
  baselineValue: number;
  /** The figure a goal and the CI check look at; `lowerIsBetter` says which way is worse. */
  ratio: number;
  ratioLabel: string;
  lowerIsBetter: boolean;
  goal: string;
  met: boolean;
  /** false: printed but never checked in CI (a tail ratio over a short run's few samples is one request). */
  gated?: boolean;
}

const rows: Row[] = [];
const dir = await mkdtemp(join(tmpdir(), 'emi-bench-'));
const folders = (name: string) => ['--out', join(dir, name, 'site'), '--paid', join(dir, name, 'paid')];
const stateOf = (name: string) => ['--state', join(dir, name, 'var')];

try {
  const help = await paired(() => [runProcess([EMI, '--help'])], node1);
  rows.push({
    id: 'help_vs_node',
    measure: '`emi --help`, wall, median',
    how: 'whole process',
    value: help.value.wallMs,
    unit: 'ms',
    baseline: '`node -e 1`',
    baselineValue: help.baseline.wallMs,
    ratio: help.ratio,
    ratioLabel: 'x node -e 1',
    lowerIsBetter: true,
    goal: 'at most 2.5x',
    met: help.ratio <= 2.5,
  });

  const generateArgs = [EMI, 'generate', ...folders('g'), ...stateOf('g')];
  const generate = await paired(() => [runProcess(generateArgs)], node1);
  rows.push({
    id: 'generate_vs_node',
    measure: '`emi generate`, 7 assets, simulated',
    how: 'whole process',
    value: generate.value.wallMs,
    unit: 'ms',
    baseline: '`node -e 1`',
    baselineValue: generate.baseline.wallMs,
    ratio: generate.ratio,
    ratioLabel: 'x node -e 1',
    lowerIsBetter: true,
    goal: 'under 400 ms',
    met: generate.value.wallMs < 400,
  });

  const buildArgs = [
    EMI,
    'build',
    '--published',
    join(dir, 'gb', 'site'),
    '--out',
    join(dir, 'gb', 'dist'),
    '--base-url',
    'http://127.0.0.1:8080',
  ];
  const both = await paired(
    () => [
      runProcess([EMI, 'generate', ...folders('gb'), ...stateOf('gb')]),
      runProcess([...buildArgs, ...stateOf('gb')]),
    ],
    () => [...node1(), ...node1()],
  );
  rows.push({
    id: 'generate_build_vs_node',
    measure: '`emi generate && emi build`, 7 assets',
    how: 'whole process',
    value: both.value.wallMs,
    unit: 'ms',
    baseline: '2 x `node -e 1`',
    baselineValue: both.baseline.wallMs,
    ratio: both.ratio,
    ratioLabel: 'x baseline',
    lowerIsBetter: true,
    goal: 'under 1.5 s',
    met: both.value.wallMs < 1500,
  });

  const cycle = median(await measureCycles(CYCLES));
  rows.push({
    id: 'cycle_vs_processes',
    measure: `one scheduled cycle in \`emi schedule\` (generate + build), 7 assets, after ${WARM_UP_CYCLES} cycles`,
    how: 'in-process',
    value: cycle,
    unit: 'ms',
    baseline: '`emi generate && emi build` above',
    baselineValue: both.value.wallMs,
    ratio: cycle / both.value.wallMs,
    ratioLabel: 'x baseline',
    lowerIsBetter: true,
    goal: 'under 300 ms',
    met: cycle < 300,
  });

  /** An aged site's cycles in turns with a first-day site's, in one process, so that both meet the same moments. */
  const agedCycleRow = async (id: string, measure: string, age: Age, goal: string, most: number) => {
    const pairs = await measureCyclePairs(DAY_PAIRS, age);
    const ratio = median(pairs.map((p) => p.aged / p.first));
    rows.push({
      id,
      measure,
      how: 'in-process',
      value: median(pairs.map((p) => p.aged)),
      unit: 'ms',
      baseline: 'a first-day cycle, in turns with it',
      baselineValue: median(pairs.map((p) => p.first)),
      ratio,
      ratioLabel: 'x baseline',
      lowerIsBetter: true,
      goal,
      met: ratio <= most,
    });
  };
  // After a day of runs at the default cadence: every run appends to files that grow all day.
  await agedCycleRow(
    'cycle_day_history',
    'the same cycle after a day of runs (1 440 history rows per resource)',
    { historyRows: 1440 },
    '(history adds at most half)',
    1.5,
  );
  // After a year of runs in the arena store: the statistics it publishes count every run, call, vote and lesson.
  await agedCycleRow(
    'cycle_year_run_log',
    'the same cycle after a year of runs (525 600 run-log rows; 8 640 rounds with calls, votes, outcomes, lessons)',
    { runLogRows: 525_600, arenaRounds: 8_640 },
    '(a year of runs adds at most a fifth)',
    1.2,
  );

  rows.push({
    id: 'memory_vs_node',
    measure: 'peak memory of `emi generate`, 7 assets',
    how: 'whole process',
    value: generate.value.maxRssMiB,
    unit: 'MiB',
    baseline: '`node -e 1`',
    baselineValue: generate.baseline.maxRssMiB,
    ratio: generate.value.maxRssMiB / generate.baseline.maxRssMiB,
    ratioLabel: 'x node -e 1',
    lowerIsBetter: true,
    goal: 'under 100 MiB',
    met: generate.value.maxRssMiB < 100,
  });

  // Larger universes: the compiled pipeline over 7 tracked + synthetic symbols, one whole process per run, each
  // size in turns with the size below it.
  const universe = (size: number) => () => [runProcess([GENERATE_ONCE, String(size)])];
  const growth70 = await paired(universe(70), universe(7));
  rows.push({
    id: 'growth_7_to_70',
    measure: 'generate, 70 assets',
    how: 'whole process',
    value: growth70.value.wallMs,
    unit: 'ms',
    baseline: 'the same, 7 assets',
    baselineValue: growth70.baseline.wallMs,
    ratio: growth70.ratio,
    ratioLabel: 'x baseline',
    lowerIsBetter: true,
    goal: '(linear: at most 10x)',
    met: growth70.ratio <= 10,
  });
  /** The peak memory of the larger of a pair of universes against the smaller's, measured in the same processes. */
  const memoryRow = (id: string, size: number, growth: typeof growth70) => {
    const ratio = growth.value.maxRssMiB / growth.baseline.maxRssMiB;
    rows.push({
      id,
      measure: `peak memory of generate, ${size} assets`,
      how: 'whole process',
      value: growth.value.maxRssMiB,
      unit: 'MiB',
      baseline: `the same, ${size / 10} assets`,
      baselineValue: growth.baseline.maxRssMiB,
      ratio,
      ratioLabel: 'x baseline',
      lowerIsBetter: true,
      goal: '(grows slower than the assets: under 10x)',
      met: ratio < 10,
    });
  };
  memoryRow('memory_70_assets', 70, growth70);
  if (!SHORT) {
    const growth700 = await paired(universe(700), universe(70));
    rows.push({
      id: 'growth_70_to_700',
      measure: 'generate, 700 assets',
      how: 'whole process',
      value: growth700.value.wallMs,
      unit: 'ms',
      baseline: 'the same, 70 assets',
      baselineValue: growth700.baseline.wallMs,
      ratio: growth700.ratio,
      ratioLabel: 'x baseline',
      lowerIsBetter: true,
      goal: 'under 2 s, and at most 11x',
      met: growth700.value.wallMs < 2000 && growth700.ratio <= 11,
    });
    memoryRow('memory_700_assets', 700, growth700);
  }

  if (SHORT) {
    process.env.BENCH_PAYWALL_REQUESTS ??= '600';
    process.env.BENCH_PAYWALL_PAID ??= '40';
    process.env.BENCH_PAYWALL_BUYERS ??= '5';
  }
  const paywall = runPaywallProcess();
  rows.push({
    id: 'challenge_share',
    measure: '402 challenge, requests/s',
    how: 'in-process',
    value: paywall.challengeRps,
    unit: 'req/s',
    baseline: 'bare Hono route, the same 402 bytes',
    baselineValue: paywall.bareRps,
    ratio: paywall.challengeShare,
    ratioLabel: 'share of baseline',
    lowerIsBetter: false,
    goal: 'at least 90 %',
    met: paywall.challengeShare >= 0.9,
  });
  rows.push({
    id: 'paid_p99_vs_p50',
    measure: 'paid path, development facilitator, p99',
    how: 'in-process',
    value: paywall.paidP99,
    unit: 'ms',
    baseline: 'the same path, p50',
    baselineValue: paywall.paidP50,
    ratio: paywall.paidP99 / paywall.paidP50,
    ratioLabel: 'x baseline',
    lowerIsBetter: true,
    goal: 'under 25 ms',
    met: paywall.paidP99 < 25,
    gated: false,
  });

  if (!SHORT) await import('./live-sources.ts');
} finally {
  await rm(dir, { recursive: true, force: true });
}

const machine = {
  node: process.version,
  cpus: cpus().length,
  loadAverage1m: loadavg()[0] ?? 0,
  at: new Date().toISOString(),
  mode: SHORT ? 'short' : 'full',
  repeats: REPEATS,
};
const fmt = (value: number, unit: string) =>
  `${value.toFixed(unit === 'req/s' || unit === 'ms' ? 0 : 1)} ${unit}`;
console.log(
  `\nIssue 14 goals (Node ${machine.node}, ${machine.cpus} cores, load average ${machine.loadAverage1m.toFixed(1)} at the end; whole processes: medians of ${REPEATS} pairs after a warm-up)`,
);
console.log('| measure | how | value | baseline | ratio | goal | met |');
console.log('|---|---|---:|---|---:|---|---|');
for (const r of rows) {
  const ratio = r.lowerIsBetter ? `${r.ratio.toFixed(2)}x` : `${(r.ratio * 100).toFixed(0)} %`;
  console.log(
    `| ${r.measure} | ${r.how} | ${fmt(r.value, r.unit)} | ${r.baseline}: ${fmt(r.baselineValue, r.unit)} | ${ratio} | ${r.goal} | ${r.met ? 'yes' : 'no'} |`,
  );
}
await writeFile(
  join(ROOT, 'bench', SHORT ? 'results-short.json' : 'results.json'),
  `${JSON.stringify({ machine, rows }, null, 2)}\n`,
);

const BASELINE_FILE = join(ROOT, 'bench', 'baseline.json');
const BASELINE_SAMPLES = 3;
if (WRITE_BASELINE) {
  // One short run is noisy (a slow `node -e 1` moves every ratio against it): the baseline is the median of the
  // last three runs written with --write-baseline, so run it three times on a quiet machine.
  const previous = await readFile(BASELINE_FILE, 'utf8')
    .then((text) => (JSON.parse(text) as { samples?: Record<string, number>[] }).samples ?? [])
    .catch(() => []);
  const samples = [
    ...previous,
    Object.fromEntries(rows.map((r) => [r.id, Number(r.ratio.toFixed(3))])),
  ].slice(-BASELINE_SAMPLES);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const ratios = Object.fromEntries(
    rows.map((r) => [r.id, median(samples.map((s) => s[r.id]).filter((v) => v !== undefined))]),
  );
  await writeFile(BASELINE_FILE, `${JSON.stringify({ machine, ratios, samples }, null, 2)}\n`);
  console.log(`baseline ratios (median of ${samples.length} runs) written to ${BASELINE_FILE}`);
} else if (SHORT) {
  const { ratios } = JSON.parse(await readFile(BASELINE_FILE, 'utf8')) as { ratios: Record<string, number> };
  const regressions = rows.filter((r) => {
    const base = ratios[r.id];
    if (base === undefined || r.gated === false) return false;
    const worse = r.lowerIsBetter ? r.ratio / base : base / r.ratio;
    return worse > TOLERANCE;
  });
  for (const r of regressions) {
    console.error(
      `bench: ${r.id} regressed: ratio ${r.ratio.toFixed(3)} against a baseline of ${ratios[r.id]}`,
    );
  }
  if (regressions.length > 0) process.exitCode = 1;
  else console.log(`bench: no ratio regressed by more than half against ${BASELINE_FILE}`);
}
