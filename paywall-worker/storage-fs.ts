// Paid files on the local filesystem (Node): `<root>/<file>`, root usually the generator's `paid/` folder.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { PaidFileStorage } from './storage.ts';

export function createFsStorage(root: string): PaidFileStorage {
  const base = resolve(root);
  return {
    async read(file) {
      try {
        return await readFile(join(base, file), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    // A stat of a local file takes microseconds; the async form would cost a thread-pool round trip per request.
    versionNow(file) {
      const info = statSync(join(base, file), { throwIfNoEntry: false });
      return info ? `${info.ino}:${info.mtimeMs}:${info.size}` : null;
    },
  };
}
