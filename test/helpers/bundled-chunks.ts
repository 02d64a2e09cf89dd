// Which files of build/ hold a package that bin/build.js bundles (all but a few): a process that loads such a
// package loads these chunks, not the package's files in node_modules. Read from build/sources.json, which the
// build writes from esbuild's metafile.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..', '..');

/** URLs of the build/ files with code from any of node_modules/`packageNames`/. */
export async function chunksOf(...packageNames: string[]): Promise<Set<string>> {
  const build = join(ROOT, 'build');
  const sources = JSON.parse(await readFile(join(build, 'sources.json'), 'utf8')) as Record<string, string[]>;
  const from = packageNames.map((name) => `node_modules/${name}/`);
  const chunks = Object.entries(sources).filter(([, inputs]) =>
    inputs.some((input) => from.some((prefix) => input.startsWith(prefix))),
  );
  return new Set(chunks.map(([file]) => pathToFileURL(join(build, file)).href));
}
