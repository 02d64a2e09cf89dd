// Skips a browser bundle that is already up to date. Bundling the two browser programs (esbuild, about 3 MB of
// output) was most of a whole-process `emi build`, although their sources rarely change. After each bundle a stamp
// records every input file esbuild read (size and modification time), every output file and the options; the next
// build bundles again only when one of them differs or an output is missing. The package files its
// THIRD-PARTY-LICENSES.txt was read from (package.json, licence files) are inputs too.
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Metafile } from 'esbuild';
import { writeFileAtomic } from '../publish/atomic-write.ts';

interface Stamp {
  key: string;
  /** Absolute path -> [size, mtimeMs]. */
  inputs: Record<string, [number, number]>;
  outputs: string[];
}

const fingerprint = async (path: string): Promise<[number, number] | null> => {
  const info = await stat(path).catch(() => null);
  return info?.isFile() ? [info.size, info.mtimeMs] : null;
};

/** Whether the stamp at `file` describes a bundle made with `key` from inputs that are all unchanged. */
export async function isCurrent(file: string, key: string): Promise<boolean> {
  const stamp = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as Stamp)
    .catch(() => null);
  if (stamp?.key !== key) return false;
  const inputs = await Promise.all(
    Object.entries(stamp.inputs).map(async ([path, [size, mtime]]) => {
      const now = await fingerprint(path);
      return now !== null && now[0] === size && now[1] === mtime;
    }),
  );
  const outputs = await Promise.all(stamp.outputs.map(async (path) => (await fingerprint(path)) !== null));
  return [...inputs, ...outputs].every(Boolean);
}

/**
 * Records what a bundle was made from (paths in the metafile are relative to `workingDir`); `otherInputs` are files
 * read besides esbuild's (absolute paths).
 */
export async function writeStamp(
  file: string,
  key: string,
  metafile: Metafile,
  workingDir: string,
  otherInputs: readonly string[] = [],
) {
  const inputs: Stamp['inputs'] = {};
  for (const path of [...Object.keys(metafile.inputs), ...otherInputs]) {
    const absolute = resolve(workingDir, path);
    const now = await fingerprint(absolute);
    if (now !== null) inputs[absolute] = now; // virtual inputs (no file) cannot change
  }
  const outputs = Object.keys(metafile.outputs).map((path) => resolve(workingDir, path));
  await writeFileAtomic(file, `${JSON.stringify({ key, inputs, outputs } satisfies Stamp)}\n`);
}
