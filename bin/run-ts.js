#!/usr/bin/env node
// Runs any TypeScript entry point of this project through tsx: `node bin/run-ts.js path/to/file.ts args...`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const [, , entry, ...rest] = process.argv;
if (!entry) {
  console.error('usage: node bin/run-ts.js FILE.ts [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], entry, ...rest];
register();
await import(pathToFileURL(resolve(entry)).href);
