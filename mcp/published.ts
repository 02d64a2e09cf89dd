// Reading the published site: from a folder on Node, from anything else (an assets binding) through one function.
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';

/** The text of a published file (a path relative to the site root), or null when it is absent. */
export type ReadText = (file: string) => Promise<string | null>;
/** The parsed JSON of a published file, or null when it is absent or not JSON. */
export type ReadPublished = (file: string) => Promise<unknown>;

export function readTextFrom(root: string): ReadText {
  return async (file) => {
    const relative = normalize(file);
    if (relative.startsWith('..')) return null; // only fixed registry paths come here; never leave the root
    try {
      return await readFile(join(root, relative), 'utf8');
    } catch {
      return null;
    }
  };
}

export const jsonReader =
  (readText: ReadText): ReadPublished =>
  async (file) => {
    const text = await readText(file);
    if (text === null) return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  };
