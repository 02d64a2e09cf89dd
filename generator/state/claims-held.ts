// The instance claims this process holds (instance-lock.ts), kept apart so that a shutdown handler can mark them
// as stopping without loading the lock code: a new instance then waits for this one to end instead of refusing.
import { renameSync, statSync, writeFileSync } from 'node:fs';

/**
 * A file's identity, its device and inode. A claim records its own: a copy of it (a state folder moved or restored
 * from a backup) is another file, while another spelling of its path (a symlink, a bind mount) is the same one.
 */
export const fileIdOf = (stats: { dev: number; ino: number }): string => `${stats.dev}:${stats.ino}`;

/** Writes `path` with the text `textFor` gives for the file's own identity (known once the file exists). */
export function writeNamingItself(path: string, textFor: (fileId: string) => string): void {
  writeFileSync(path, '');
  writeFileSync(path, textFor(fileIdOf(statSync(path)))); // truncated in place: the same inode
}

/** Each claim's file, with the text that says it is stopping (the claim as written, plus stopping_since). */
const claims = new Map<string, (fileId: string) => string>();

export const holdClaim = (file: string, stoppingText: (fileId: string) => string): void =>
  void claims.set(file, stoppingText);

export const dropClaim = (file: string): void => void claims.delete(file);

/** Marks every claim held as stopping. Synchronous: called first thing in a shutdown handler. */
export function markClaimsStopping(): void {
  for (const [file, stoppingText] of claims) {
    const temp = `${file}.${process.pid}.stopping.tmp`;
    try {
      writeNamingItself(temp, stoppingText);
      renameSync(temp, file); // whole or not at all: a reader never finds it half-written
    } catch {
      // A claim that cannot be rewritten still names a live process: a new instance waits the grace, then refuses.
    }
  }
}
