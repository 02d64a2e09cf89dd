// Moves a freshly built folder's files into a folder that a server may be reading right now. Each file is
// renamed over its old version (atomic on one filesystem), and only then are files that no longer exist removed,
// so a reader always finds either the old or the new version of every file that is in both builds.
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    },
  );
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)));
}

export async function moveInto(source: string, target: string): Promise<void> {
  await mkdir(target, { recursive: true });
  const fresh = await filesUnder(source);
  for (const file of fresh) {
    await mkdir(dirname(join(target, file)), { recursive: true });
    await rename(join(source, file), join(target, file));
  }
  const keep = new Set(fresh);
  for (const file of await filesUnder(target)) {
    if (!keep.has(file)) await rm(join(target, file), { force: true });
  }
  await removeEmptyFolders(target);
}

async function removeEmptyFolders(folder: string): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true });
  let empty = true;
  for (const entry of entries) {
    if (!entry.isDirectory() || !(await removeEmptyFolders(join(folder, entry.name)))) empty = false;
    else await rm(join(folder, entry.name), { recursive: true, force: true });
  }
  return empty;
}
