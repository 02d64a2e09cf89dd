// Preload (`node --import ./bench/report-usage.mjs ...`): when the process exits, writes one line to stderr with
// its peak resident memory and CPU time, so a benchmark can read them for a whole process.
//
// The peak is the process's own: on Linux a child's ru_maxrss starts at its parent's resident size when it was
// forked (the benchmark runner holds 200 MiB by the time it spawns the larger universes), so the peak is reset here
// at start (`/proc/self/clear_refs`, 5) and read at exit from `/proc/self/status` (VmHWM). Elsewhere, or where that
// is refused, it falls back to ru_maxrss.
import { readFileSync, writeFileSync, writeSync } from 'node:fs';

let ownPeak = false;
try {
  writeFileSync('/proc/self/clear_refs', '5');
  ownPeak = true;
} catch {
  // not Linux, or not permitted: ru_maxrss below
}

/** VmHWM of /proc/self/status in KiB, or null. */
function highWaterKiB() {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

process.on('exit', () => {
  const usage = process.resourceUsage();
  const peakKiB = (ownPeak ? highWaterKiB() : null) ?? usage.maxRSS;
  const line = { maxRssMiB: peakKiB / 1024, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 };
  writeSync(2, `EMI_BENCH_USAGE ${JSON.stringify(line)}\n`);
});
