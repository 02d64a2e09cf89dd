// Temporary folders that remove themselves: a test that makes one no longer leaves it in the temp folder (the runs
// used to leave gigabytes there; test/global-tmp-guard.ts now fails a run that leaves one).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * When a folder goes: `test`, when the test that made it finishes (after its afterEach hooks; made outside a test,
 * it lasts as `file`); `file`, after all the importing file's tests and its own afterAll hooks (a folder holding a
 * tmpfs mount point, unmounted in afterAll by test/helpers/tmpfs.ts, must outlive the mount). Concurrent tests ask
 * for `file`: vitest's `onTestFinished` does not tell concurrent tests apart, so `test` could tie a folder to another
 * test that ends first.
 */
export type TempDirLifetime = 'test' | 'file';

const removeDir = async (dir: string): Promise<void> => {
  const remove = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    await remove();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw error;
    // Tests take write permission away from folders inside (a read-only output folder); not root, rm then fails.
    execFileSync('chmod', ['-R', 'u+rwX', dir]);
    await remove();
  }
};

/** Removes a folder once made (one that could not be made: nothing to do, its caller has the error). */
const removeMade = (made: Promise<string>): Promise<void> => made.then(removeDir, () => undefined);

/** Folders kept for the test file that is running (a worker runs one file at a time). */
const forTheFile: Array<Promise<string>> = [];

/**
 * Removes the folders kept for the file that has just ended. test/setup-temp-dirs.ts registers it for every file:
 * a hook registered here, when this module is first evaluated, would belong only to the first file of a worker
 * whose files share their modules.
 */
export async function removeFileTempDirs(): Promise<void> {
  for (const made of forTheFile.splice(0).reverse()) await removeMade(made);
}

/**
 * Registers the removal where the folder is asked for, not once it exists: a folder asked for at module level may
 * only exist once the first test runs, and must still last for the whole file.
 */
function removeLater(made: Promise<string>, lifetime: TempDirLifetime): Promise<string> {
  if (lifetime === 'test') {
    try {
      onTestFinished(() => removeMade(made));
      return made;
    } catch {
      // Not inside a test (module level, beforeAll): keep it for the file.
    }
  }
  forTheFile.push(made);
  return made;
}

/** A new folder `<tmpdir>/<prefix>XXXXXX`, removed at the end of its `lifetime`. */
export function tempDir(prefix: string, lifetime: TempDirLifetime = 'test'): Promise<string> {
  return removeLater(mkdtemp(join(tmpdir(), prefix)), lifetime);
}

/** {@link tempDir} for synchronous helpers. */
export function tempDirSync(prefix: string, lifetime: TempDirLifetime = 'test'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  void removeLater(Promise.resolve(dir), lifetime);
  return dir;
}
