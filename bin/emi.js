#!/usr/bin/env node
// The `emi` command: runs the compiled CLI in build/ (made by `npm ci`, `npm install` or `npm run build`).
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { nodeTooOld } from './node-version.js';

const tooOld = nodeTooOld();
if (tooOld) {
  console.error(tooOld);
  process.exit(1);
}
const CLI = new URL('../build/cli.js', import.meta.url);
if (!existsSync(CLI)) {
  console.error('emi: the compiled CLI (build/cli.js) is missing: run `npm run build` (or `npm ci`) first');
  process.exit(1);
}
await warnIfBehindSources();
// Node 22.1 and later keep V8's compiled code between runs (as `tsc` does); older Node has no such API and
// compiles every module at each start. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();
const { main } = await import(CLI.href);
await main(process.argv);

/**
 * build/ runs what it was compiled from: after an edit, or a `git pull` without `npm ci`, say so on stderr rather
 * than run older code in silence (bin/build-stamp.js). Help and version text skip the check.
 */
async function warnIfBehindSources() {
  const args = process.argv.slice(2);
  if (args.length === 0 || args.some((arg) => /^(-h|--help|-v|--version|help)$/.test(arg))) return;
  const { STAMP_FILE, changedSources } = await import('./build-stamp.js');
  const what = 'run `npm run build` (after a `git pull`: `npm ci`); running the compiled code as it is';
  let text;
  try {
    text = readFileSync(new URL(`../build/${STAMP_FILE}`, import.meta.url), 'utf8');
  } catch (error) {
    // Every build writes its stamp: a build without one was made by an emi from before stamps, older than these
    // sources. Any other reading problem is left alone: a check never stops a command.
    if (error?.code === 'ENOENT') console.error(`emi: build/ is out of date (made by an older emi): ${what}`);
    return;
  }
  let changed;
  try {
    changed = changedSources(fileURLToPath(new URL('..', import.meta.url)), JSON.parse(text));
  } catch {
    return; // a stamp that cannot be read
  }
  if (changed.length === 0) return;
  const more = changed.length > 1 ? ` and ${changed.length - 1} more` : '';
  console.error(`emi: build/ is out of date (${changed[0]}${more} changed since it was compiled): ${what}`);
}
