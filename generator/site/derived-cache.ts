// Values a site build derives from the code alone (JSON Schemas emitted from zod, the MCP tool list, printed YAML)
// are kept on disk between processes, so a one-off `emi build` does not derive them again. The default store is
// build/.cache/, beside the compiled code they were derived from: `npm run build` replaces build/ as a whole, so a
// code change can never meet values derived from older code. Run from the TypeScript sources (tests, tsx), there
// is no compiled code to tie the values to and nothing is kept. A store that cannot be read or written is a miss,
// never an error: the value is derived again.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Replaced with `true` by bin/build.js (esbuild `define`) in the compiled code. */
declare const EMI_COMPILED: boolean | undefined;

export interface DerivedCache {
  /** The value kept under `name`, or null (none, unreadable, or not JSON). */
  read<T>(name: string): Promise<T | null>;
  /** Keeps `value` under `name`, replacing the file in one rename (a concurrent reader sees old or new). */
  write(name: string, value: unknown): Promise<void>;
}

/** A store in `dir`: one JSON file per name. */
export function folderCache(dir: string): DerivedCache {
  const file = (name: string) => join(dir, `${name}.json`);
  return {
    async read<T>(name: string) {
      return readFile(file(name), 'utf8')
        .then((text) => JSON.parse(text) as T)
        .catch(() => null);
    },
    async write(name, value) {
      // Not flushed: a value lost in a crash is derived again, and a torn file does not parse.
      const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(temp, JSON.stringify(value));
        await rename(temp, file(name));
      } catch {
        await rm(temp, { force: true }).catch(() => {});
      }
    },
  };
}

/** Keeps nothing (the code runs from its sources). */
export const NO_CACHE: DerivedCache = { read: async () => null, write: async () => {} };

const compiled = typeof EMI_COMPILED !== 'undefined' && EMI_COMPILED;

/** The store tied to the compiled code: build/.cache/ (see the top of this file). */
export const codeCache: DerivedCache = compiled
  ? folderCache(fileURLToPath(new URL('../../build/.cache/', import.meta.url)))
  : NO_CACHE;
