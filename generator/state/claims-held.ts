// The instance claims this process holds (instance-lock.ts), kept apart so that a shutdown handler can mark them
// as stopping without loading the lock code: a new instance then waits for this one to end instead of refusing.
import { renameSync, writeFileSync } from 'node:fs';

/** Each claim's file, with the text that says it is stopping (the claim as written, plus stopping_since). */
const claims = new Map<string, () => string>();

export const holdClaim = (file: string, stoppingText: () => string): void =>
  void claims.set(file, stoppingText);

export const dropClaim = (file: string): void => void claims.delete(file);

/** Marks every claim held as stopping. Synchronous: called first thing in a shutdown handler. */
export function markClaimsStopping(): void {
  for (const [file, stoppingText] of claims) {
    const temp = `${file}.${process.pid}.stopping.tmp`;
    try {
      writeFileSync(temp, stoppingText());
      renameSync(temp, file); // whole or not at all: a reader never finds it half-written
    } catch {
      // A claim that cannot be rewritten still names a live process: a new instance waits the grace, then refuses.
    }
  }
}
