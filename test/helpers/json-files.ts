// The published JSON bodies of a generated site, for the tests that check a rule on every one of them.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Every JSON body under `dir`, its folders' links followed (a published site links to its current generation). */
export async function jsonFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if ((await stat(path)).isDirectory()) files.push(...(await jsonFiles(path)));
    else if (/\.(json|php)$/.test(name)) files.push(path);
  }
  return files;
}
