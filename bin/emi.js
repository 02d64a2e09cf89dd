#!/usr/bin/env node
// The `emi` command: runs the TypeScript CLI through tsx, so a fresh clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../generator/cli.ts');
await main(process.argv);
