// Paid files on the local filesystem (Node): `<root>/<file>`, root usually the generator's `paid/` folder.
import { readFile, stat } from 'node:fs/promises';
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
    async version(file) {
      try {
        const info = await stat(join(base, file));
        return `${info.ino}:${info.mtimeMs}:${info.size}`;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
  };
}
