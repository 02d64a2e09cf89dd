// `node bin/run-ts.js scripts/bench-paywall.ts [--repeat N]`: only the paywall benchmark of `npm run bench`
// (bench/paywall.ts, unchanged), N times in one process, with the paid path's p50/p99 and the machine's load
// after each run, as the p99 of 200 sequential payments moves with whatever else the machine is running.
// Profile it with `node --cpu-prof --cpu-prof-dir=/tmp/prof bin/run-ts.js scripts/bench-paywall.ts`.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { runPaywallBench } from '../bench/paywall.ts';

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '1' } } });
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) throw new Error('--repeat takes a whole number of runs');

const rows: string[] = [];
for (let run = 1; run <= repeat; run++) {
  const summary = await runPaywallBench();
  rows.push(
    `| ${run} | ${summary.paidP50.toFixed(2)} | ${summary.paidP99.toFixed(2)} | ` +
      `${(summary.challengeShare * 100).toFixed(0)} % | ${loadavg()[0]?.toFixed(2)} |`,
  );
}
console.log(`\npaid path, dev facilitator (Node ${process.version}), ${repeat} run(s) in one process`);
console.log('| run | paid p50 (ms) | paid p99 (ms) | 402 share of bare route | load average, 1 min |');
console.log('|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
