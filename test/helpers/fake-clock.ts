// A child process whose wall clock reads another time: libfaketime (Debian's `faketime`) preloaded into node itself
// (not through the `faketime` command, which does not pass SIGTERM on to the process it starts). Required where
// used: a skipped test would hide the very clock it checks.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

function libfaketime(): string {
  const found = readdirSync('/usr/lib')
    .map((dir) => join('/usr/lib', dir, 'faketime', 'libfaketime.so.1'))
    .find((file) => existsSync(file));
  if (!found) throw new Error('these tests need libfaketime: apt-get install faketime (the Debian package)');
  return found;
}

/** The environment that starts a process whose wall clock reads `iso` now (its monotonic clock stays real). */
export function clockAt(iso: string): Record<string, string> {
  const offset = Math.round((Date.parse(iso) - Date.now()) / 1_000);
  return {
    LD_PRELOAD: libfaketime(),
    FAKETIME: `${offset >= 0 ? '+' : ''}${offset}s`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/** Fails at once, naming the package, when libfaketime is missing. */
export const requireLibfaketime = (): void => void libfaketime();
