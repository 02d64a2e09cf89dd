// A server may install with `npm ci --omit=dev`: everything emi compiles, builds and runs must then be there. npm
// installs what package-lock.json does not mark `dev` (or `devOptional`); this reads the lockfile against what
// build/ was compiled from (the suite builds first) and what emi loads from node_modules at run time.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEFT_IN_NODE_MODULES } from '../bin/build.js';

const ROOT = join(import.meta.dirname, '..');

interface LockEntry {
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
}

async function lockedPackages(): Promise<Record<string, LockEntry>> {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  return lock.packages;
}

/** The installed folder (`node_modules/a/node_modules/@b/c`) of a file inside a package. */
function packageFolder(file: string): string | null {
  const match = /^(?:node_modules\/(?:@[^/]+\/)?[^/]+\/)*node_modules\/(?:@[^/]+\/)?[^/]+/.exec(file);
  return match ? match[0] : null;
}

const leftOutWithoutDev = (locked: Record<string, LockEntry>) => (folder: string) => {
  const entry = locked[folder];
  return !entry || entry.dev === true || entry.devOptional === true;
};

/**
 * Bundled only because it happens to be installed: debug's `require('supports-color')` sits in a try block, which
 * esbuild leaves to run time when the package is absent (as it is without devDependencies), and debug then prints
 * without colours.
 */
const OPTIONAL_REQUIRES = new Set(['node_modules/supports-color']);

describe('npm ci --omit=dev installs everything emi needs', () => {
  it('every package compiled into build/', async () => {
    const locked = await lockedPackages();
    const sources = JSON.parse(await readFile(join(ROOT, 'build', 'sources.json'), 'utf8')) as Record<
      string,
      string[]
    >;
    const folders = new Set(
      Object.values(sources)
        .flat()
        .map(packageFolder)
        .filter((folder): folder is string => folder !== null),
    );
    expect(folders.size).toBeGreaterThan(50); // the bundle holds Eleventy, zod, hono, the x402 packages...
    expect([...folders].filter((f) => !OPTIONAL_REQUIRES.has(f)).filter(leftOutWithoutDev(locked))).toEqual(
      [],
    );
  });

  it('every package emi loads from node_modules at run time', async () => {
    const locked = await lockedPackages();
    const loaded = [
      ...LEFT_IN_NODE_MODULES, // left out of the bundle (bin/build.js)
      'esbuild', // `npm ci`'s prepare step compiles build/ with it; the buyer page is bundled with it
      '@scalar/api-reference', // its browser bundle is copied into /docs/api/ by emi build
    ];
    const missing = loaded
      .map((name) => `node_modules/${name}`)
      .filter((folder) => !locked[folder]?.optional) // fsevents: macOS only
      .filter(leftOutWithoutDev(locked));
    expect(missing).toEqual([]);
  });
});
