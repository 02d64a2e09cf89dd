// A real full disk for the tests that need one: a tmpfs mounted at a folder (as root only) and filled to a given
// number of free bytes. Each test file mounts its own and unmounts them all after its tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { open, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * A mounter for one test file: `mount(dir, size)` mounts a tmpfs of `size` at `dir` (false where mounting is not
 * permitted: not root, no CAP_SYS_ADMIN); `allowed` says whether a probe mount worked. Unmounts in `afterAll`.
 */
export function tmpfsMounter(): { allowed: boolean; mount: (dir: string, size: string) => boolean } {
  const mounted: string[] = [];
  const mount = (dir: string, size: string): boolean => {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
      mounted.push(dir);
      return true;
    } catch {
      return false;
    }
  };
  const probe = mkdtempSync(join(tmpdir(), 'emi-tmpfs-probe-'));
  afterAll(() => {
    for (const dir of mounted.reverse()) execFileSync('umount', ['-l', dir]);
    rmdirSync(probe); // the probe's own mount point, empty once unmounted
  });
  const allowed = mount(probe, '1m');
  return { allowed, mount };
}

/** Fills the file system of `dir` until about `leave` bytes are left (ENOSPC ends it too). */
export async function fillDisk(dir: string, leave: number): Promise<void> {
  const handle = await open(join(dir, 'filler'), 'w');
  const big = Buffer.alloc(1 << 20);
  try {
    for (;;) {
      const info = await statfs(dir);
      const free = info.bavail * info.bsize;
      if (free <= leave) break;
      const room = free - leave;
      await handle.write(big.subarray(0, Math.max(1, Math.min(room, big.length))));
    }
  } catch {
    // ENOSPC: full
  } finally {
    await handle.close();
  }
}
