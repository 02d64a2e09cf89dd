// Files are replaced by rename, never rewritten in place: a reader sees the old file or the new one, never a torn one.
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { makeFolderEachTime } from './folders.ts';
import type { MakeFolder } from './folders.ts';

/**
 * Writes `data` to a hidden temporary file beside `target` (flushed to disk) and returns its path. Callers writing
 * many files may share a `folderMaker` so that each folder is made once.
 */
export async function stageFile(
  target: string,
  data: string | Uint8Array,
  makeFolder: MakeFolder = makeFolderEachTime,
): Promise<string> {
  await makeFolder(dirname(target));
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  return temp;
}

export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  makeFolder: MakeFolder = makeFolderEachTime,
): Promise<void> {
  const temp = await stageFile(target, data, makeFolder);
  try {
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
