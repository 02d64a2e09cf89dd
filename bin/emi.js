#!/usr/bin/env node
// The `emi` command: runs the compiled CLI in build/ (made by `npm ci`, `npm install` or `npm run build`).
import { existsSync } from 'node:fs';

const CLI = new URL('../build/cli.js', import.meta.url);
if (!existsSync(CLI)) {
  console.error('emi: the compiled CLI (build/cli.js) is missing: run `npm run build` (or `npm ci`) first');
  process.exit(1);
}
const { main } = await import(CLI.href);
await main(process.argv);
