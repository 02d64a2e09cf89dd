// The published site read from a folder (Node): `emi mcp`, `emi serve` and `emi paywall --site`.
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import type { ReadText } from './published.ts';

/** Errors that mean the file is not there: not published (yet). Any other error is a file that cannot be read. */
const ABSENT_CODES = new Set(['ENOENT', 'ENOTDIR']);

export function readTextFrom(root: string): ReadText {
  return async (file) => {
    const relative = normalize(file);
    if (relative.startsWith('..')) return null; // only fixed registry paths come here; never leave the root
    try {
      return await readFile(join(root, relative), 'utf8');
    } catch (error) {
      if (ABSENT_CODES.has((error as NodeJS.ErrnoException).code ?? '')) return null;
      throw error;
    }
  };
}
