// The paywall benchmark in a process of its own, as the worker runs in production: its requests never share a heap
// with the generator's cycles that `npm run bench` measures before it. Prints the tables, then the summary as JSON
// on the last line.
import { runPaywallBench } from './paywall.ts';

console.log(JSON.stringify(await runPaywallBench()));
