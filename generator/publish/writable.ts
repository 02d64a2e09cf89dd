// Checks up front that a run will be able to write where it is told to, without creating anything.
import { access, constants, stat } from 'node:fs/promises';
import os from 'node:os';
import { dirname, resolve } from 'node:path';

/**
 * A folder a command must write to but cannot. `permission` tells the two causes apart: true when the folder is
 * there but this user may not write to it (or its file system is read-only), an environment fault the operator
 * fixes on the machine (exit 1); false when the path itself is wrong (a file where a folder belongs), a usage
 * mistake (exit 2).
 */
export class FolderNotWritableError extends Error {
  constructor(
    message: string,
    readonly role: string,
    readonly folder: string,
    readonly permission: boolean,
  ) {
    super(message);
    this.name = 'FolderNotWritableError';
  }
}

/** This process's user as the operator knows it: its name and uid (a container's uid may have no name). */
function currentUser(): { label: string; owner: string } {
  const uid = process.getuid?.();
  let name: string | undefined;
  try {
    name = os.userInfo().username;
  } catch {
    // a uid without a passwd entry: the number says enough
  }
  const owner = name ?? (uid === undefined ? 'USER' : String(uid));
  if (uid === undefined) return { label: name ?? 'this user', owner };
  return { label: name ? `${name} (uid ${uid})` : `uid ${uid}`, owner };
}

/** What the operator should do about a folder this user may not write to (one line). */
export function permissionRemedy(path: string, code: string | undefined): string {
  if (code === 'EROFS') {
    return `${path} is on a read-only file system: mount it read-write or choose another folder`;
  }
  const { label, owner } = currentUser();
  return (
    `no write permission on ${path} for this user, ${label}: give the folder to the user emi runs as ` +
    `(e.g. chown -R ${owner} ${path}; a systemd unit's User=) or choose another folder`
  );
}

/** Throws a one-line FolderNotWritableError unless `folder` exists as a writable folder or could be created as one. */
export async function assertWritableFolder(folder: string, role: string): Promise<void> {
  const fail = (detail: string, permission: boolean) =>
    new FolderNotWritableError(`${role} ${folder} is not writable: ${detail}`, role, folder, permission);
  let current = resolve(folder);
  for (;;) {
    const info = await stat(current).catch(() => null);
    if (info) {
      if (!info.isDirectory()) throw fail(`${current} is not a folder`, false);
      await access(current, constants.W_OK).catch((error: NodeJS.ErrnoException) => {
        throw fail(permissionRemedy(current, error.code), true);
      });
      return;
    }
    const parent = dirname(current);
    if (parent === current) throw fail('no existing ancestor', false);
    current = parent;
  }
}

/** Whether `error` is a folder this user may not write to (checked by name: bundled chunks may copy the class). */
export const isPermissionFault = (error: unknown): error is FolderNotWritableError =>
  error instanceof Error &&
  error.name === 'FolderNotWritableError' &&
  (error as Partial<FolderNotWritableError>).permission === true;
