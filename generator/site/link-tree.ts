// Puts a folder's files into another folder by reference: a hard link per file (no bytes copied), or a copy where
// a link cannot be made (another filesystem). Safe for published files because the generator never rewrites a
// file in place: it writes a new file and renames it over the old one, so a linked copy keeps the old bytes.
import * as nodeFs from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';

export type LinkFs = Pick<typeof nodeFs, 'copyFile' | 'link' | 'mkdir' | 'readdir'>;

/** A staging file of writeFileAtomic (`.<name>.<hex>.tmp`): never part of what is published. */
export const isTemporaryFile = (name: string): boolean => /^\..+\.tmp$/.test(basename(name));

/** Links every file under `source` to the same relative path under `target`; a missing `source` links nothing. */
export async function linkTree(source: string, target: string, fs: LinkFs = nodeFs): Promise<number> {
  const entries = await fs
    .readdir(source, { recursive: true, withFileTypes: true })
    .catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
  const files = entries
    .filter((e) => e.isFile() && !isTemporaryFile(e.name))
    .map((e) => relative(source, join(e.parentPath, e.name)));
  const folders = new Set(files.map((file) => dirname(join(target, file))));
  await Promise.all([...folders].map((folder) => fs.mkdir(folder, { recursive: true })));
  await Promise.all(
    files.map((file) =>
      fs.link(join(source, file), join(target, file)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV' && error.code !== 'EPERM') throw error;
        return fs.copyFile(join(source, file), join(target, file));
      }),
    ),
  );
  return files.length;
}

/**
 * The files Eleventy's passthrough copy takes from `from` (a file, or every file under a folder, dotfiles too; a
 * missing source gives none), each with its path under `to`.
 */
export async function copiedThrough(
  from: string,
  to: string,
): Promise<Array<{ source: string; path: string }>> {
  const entries = await nodeFs
    .readdir(from, { recursive: true, withFileTypes: true })
    .catch((error: NodeJS.ErrnoException) =>
      error.code === 'ENOTDIR' ? null : error.code === 'ENOENT' ? [] : Promise.reject(error),
    );
  if (entries === null) return [{ source: from, path: to }];
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const source = join(entry.parentPath, entry.name);
      return { source, path: join(to, relative(from, source)) };
    });
}
