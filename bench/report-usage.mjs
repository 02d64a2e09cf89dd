// Preload (`node --import ./bench/report-usage.mjs ...`): when the process exits, writes one line to stderr with
// its peak resident memory and CPU time, so a benchmark can read them for a whole process.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const usage = process.resourceUsage();
  const line = { maxRssMiB: usage.maxRSS / 1024, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 };
  writeSync(2, `EMI_BENCH_USAGE ${JSON.stringify(line)}\n`);
});
