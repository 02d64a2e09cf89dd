// One timed `generate` run over a universe of N symbols (the 7 tracked assets, or synthetic ones), in its own
// process so that its peak memory is its own. Prints one JSON line.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configureOneShotProcess } from '../generator/one-shot.ts';

configureOneShotProcess(); // as `emi generate` does, before any schema is made (zod reads it then)
const { TRACKED_ASSETS } = await import('../schemas/common.ts');
const { runPipeline } = await import('../generator/pipeline.ts');

const size = Number(process.argv[2] ?? TRACKED_ASSETS.length);
const synthetic = Array.from(
  { length: Math.max(0, size - TRACKED_ASSETS.length) },
  (_, i) => `S${String(i + 1).padStart(3, '0')}`,
);
const symbols = [...TRACKED_ASSETS, ...synthetic].slice(0, size);
const dir = await mkdtemp(join(tmpdir(), 'emi-bench-'));
const started = performance.now();
const report = await runPipeline({
  outDir: join(dir, 'site'),
  paidDir: join(dir, 'paid'),
  stateDir: join(dir, 'var'),
  source: 'sim',
  seed: 42,
  asOf: Date.parse('2026-11-21T12:00:00Z'),
  symbols,
});
const wallMs = performance.now() - started;
await rm(dir, { recursive: true, force: true });
if (report.status === 'failed') throw new Error(report.error ?? 'run failed');
console.log(
  JSON.stringify({
    size,
    wallMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    files: report.files_written,
  }),
);
