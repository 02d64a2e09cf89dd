#!/usr/bin/env node
// The `emi` command: runs the compiled CLI in build/ (made by `npm ci`, `npm install` or `npm run build`).
import { existsSync } from 'node:fs';
import module from 'node:module';

const CLI = new URL('../build/cli.js', import.meta.url);
if (!existsSync(CLI)) {
  console.error('emi: the compiled CLI (build/cli.js) is missing: run `npm run build` (or `npm ci`) first');
  process.exit(1);
}
// Node 22.1 and later keep V8's compiled code between runs (as `tsc` does); older Node has no such API and
// compiles every module at each start. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();
const { main } = await import(CLI.href);
await main(process.argv);
