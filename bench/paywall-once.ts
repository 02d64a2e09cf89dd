// The paywall benchmark in a process of its own, as the worker runs in production: its requests never share a heap
// with the generator's cycles measured before it (run beside them, the 402 challenge measured about a tenth slower
// against its bare route). Prints the tables, then the summary as JSON on the last line, for `npm run bench`.
import { runPaywallBench } from './paywall.ts';

console.log(JSON.stringify(await runPaywallBench()));
