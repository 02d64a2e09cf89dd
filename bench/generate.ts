// Benchmark: `emi generate` for the 7 tracked assets (the baseline) and synthetic universes of 70 and 700.
// Each measurement is a fresh process; the table reports medians and the ratio to the 7-asset baseline.
import { execFileSync } from 'node:child_process';

const SIZES = [7, 70, 700];
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);

interface Sample {
  size: number;
  wallMs: number;
  maxRssMiB: number;
  files: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

function measure(size: number): Sample {
  const out = execFileSync(process.execPath, ['bin/run-ts.js', 'bench/generate-once.ts', String(size)], {
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Sample;
}

const rows = SIZES.map((size) => {
  const samples = Array.from({ length: REPEATS }, () => measure(size));
  return {
    size,
    files: samples[0]?.files ?? 0,
    wallMs: median(samples.map((s) => s.wallMs)),
    maxRssMiB: median(samples.map((s) => s.maxRssMiB)),
  };
});
const baseline = rows[0]?.wallMs ?? NaN;
console.log(`emi generate, simulated source, median of ${REPEATS} fresh processes`);
console.log('| assets | files | wall time (ms) | x baseline | peak RSS (MiB) |');
console.log('|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.size} | ${r.files} | ${r.wallMs.toFixed(0)} | ${(r.wallMs / baseline).toFixed(1)} | ${r.maxRssMiB.toFixed(0)} |`,
  );
}
