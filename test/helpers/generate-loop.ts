// Run by test/generate-memory.test.ts in its own Node process (with --expose-gc): `generate` again and again in one
// process, as `emi up` and `emi schedule` run it, printing the heap in use after a full collection at two points.
import { generate } from '../../generator/cycle.ts';

const [dir, firstArg, lastArg] = process.argv.slice(2);
if (!dir || !firstArg || !lastArg) throw new Error('usage: generate-loop.ts DIR FIRST LAST');
const [first, last] = [Number(firstArg), Number(lastArg)];
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const heap: Record<number, number> = {};
for (let run = 1; run <= last; run++) {
  const report = await generate({
    seed: 42,
    source: 'sim',
    cadence: 60,
    out: `${dir}/site`,
    paid: `${dir}/paid`,
    state: `${dir}/var`,
  });
  if (report.status !== 'ok') throw new Error(`run ${run}: ${report.status} ${report.error ?? ''}`);
  if (run === first || run === last) {
    gc();
    gc();
    heap[run] = process.memoryUsage().heapUsed;
  }
}
console.log(JSON.stringify(heap));
