// Checks up front that a run will be able to write where it is told to, without creating anything.
import { access, constants, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** Throws a one-line error unless `folder` exists as a writable folder or could be created as one. */
export async function assertWritableFolder(folder: string, role: string): Promise<void> {
  let current = resolve(folder);
  for (;;) {
    const info = await stat(current).catch(() => null);
    if (info) {
      if (!info.isDirectory())
        throw new Error(`${role} ${folder} is not writable: ${current} is not a folder`);
      await access(current, constants.W_OK).catch(() => {
        throw new Error(`${role} ${folder} is not writable: no write permission on ${current}`);
      });
      return;
    }
    const parent = dirname(current);
    if (parent === current) throw new Error(`${role} ${folder} is not writable: no existing ancestor`);
    current = parent;
  }
}
