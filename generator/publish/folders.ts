// Making a folder that already exists still costs a system call and a trip through libuv's thread pool (about half
// a millisecond each on this project's disk); a generation places dozens of files in a handful of folders, and
// asking for each file's folder made hundreds of such calls per cycle.
import { mkdir as nodeMkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/** `mkdir -p` for one folder. */
export type MakeFolder = (folder: string) => Promise<void>;

export const makeFolderEachTime: MakeFolder = async (folder) => {
  await nodeMkdir(folder, { recursive: true });
};

/**
 * A `mkdir -p` that asks the file system once per folder (and never for the parents of one it made): for one batch
 * of files placed into folders nobody else removes meanwhile. A failure is not remembered; the next caller asks
 * again.
 */
export function folderMaker(make: MakeFolder = makeFolderEachTime): MakeFolder {
  const made = new Map<string, Promise<void>>();
  const done = Promise.resolve();
  const markMade = (folder: string): void => {
    made.set(folder, done);
    for (let parent = dirname(folder); !made.has(parent); parent = dirname(parent)) made.set(parent, done);
  };
  return (folder) => {
    let pending = made.get(folder);
    if (!pending) {
      pending = make(folder).then(
        () => markMade(folder),
        (error: unknown) => {
          made.delete(folder);
          throw error;
        },
      );
      made.set(folder, pending);
    }
    return pending;
  };
}
