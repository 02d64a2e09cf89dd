// The tmp guard (test/global-tmp-guard.ts): a run's own TMPDIR, its emi-* leftovers reported and its folder removed.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makersOf, reportLines, startTmpGuard } from './global-tmp-guard.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { tmpfsMounter } from './helpers/tmpfs.ts';

const NO_SOURCES = new Map<string, string>();
/** Whether this user may mount (root): a disk test killed mid-run leaves its tmpfs mounted in the run's folder. */
const disk = tmpfsMounter();

describe('the tmp guard', () => {
  it('gives the run its own TMPDIR inside the temp folder, and restores the old one at the end', async () => {
    const parent = await tempDir('emi-guard-parent-');
    const env: NodeJS.ProcessEnv = { TMPDIR: '/somewhere/else' };
    const guard = await startTmpGuard({ parent, env, settleMs: 0 });
    expect(env.TMPDIR).toBe(guard.runDir);
    expect(guard.runDir.startsWith(join(parent, `emi-test-run-${process.pid}-`))).toBe(true);
    expect((await stat(guard.runDir)).mode & 0o7777).toBe(0o1777); // others (nobody) may use it, as /tmp
    await guard.finish();
    expect(env).toEqual({ TMPDIR: '/somewhere/else' });

    const unset: NodeJS.ProcessEnv = {};
    await (await startTmpGuard({ parent, env: unset, settleMs: 0 })).finish();
    expect(unset).toEqual({});
  });

  it('reports the emi-* folders a run left in its TMPDIR, and removes the whole run folder', async () => {
    const parent = await tempDir('emi-guard-parent-');
    const guard = await startTmpGuard({ parent, env: {}, settleMs: 0 });
    await mkdir(join(guard.runDir, 'emi-pipeline-a1B2c3', 'site'), { recursive: true });
    await mkdir(join(guard.runDir, 'playwright-profile-x')); // not ours to judge: removed, not reported
    const report = await guard.finish();
    expect(report).toEqual({ leftovers: ['emi-pipeline-a1B2c3'], outside: [] });
    expect(await readdir(parent)).toEqual([]);
  });

  it('reports nothing for a run that removed what it made', async () => {
    const parent = await tempDir('emi-guard-parent-');
    const guard = await startTmpGuard({ parent, env: {}, settleMs: 0 });
    await mkdir(join(guard.runDir, 'emi-clean-a1B2c3'));
    await rm(join(guard.runDir, 'emi-clean-a1B2c3'), { recursive: true });
    expect(await guard.finish()).toEqual({ leftovers: [], outside: [] });
  });

  it('waits for a folder that is still being removed when the run ends', async () => {
    const parent = await tempDir('emi-guard-parent-');
    const guard = await startTmpGuard({ parent, env: {}, settleMs: 10_000 });
    const late = join(guard.runDir, 'emi-late-a1B2c3');
    await mkdir(late);
    // Removed only once the guard has looked and found it (a server that closes late).
    const removal = new Promise<void>((resolve) =>
      setTimeout(() => void rm(late, { recursive: true }).then(resolve), 300),
    );
    const report = await guard.finish();
    await removal;
    expect(report.leftovers).toEqual([]);
  });

  it('only warns about new emi-* folders in the temp folder itself (another process may own them)', async () => {
    const parent = await tempDir('emi-guard-parent-');
    await mkdir(join(parent, 'emi-before-a1B2c3'));
    const guard = await startTmpGuard({ parent, env: {}, settleMs: 0 });
    await mkdir(join(parent, 'emi-during-a1B2c3'));
    await mkdir(join(parent, 'emi-test-run-1-a1B2c3')); // a concurrent run's own folder
    expect(await guard.finish()).toEqual({ leftovers: [], outside: ['emi-during-a1B2c3'] });
  });

  it('removes the run folders of runs that ended without tearing down, not those of running ones', async () => {
    const parent = await tempDir('emi-guard-parent-');
    await mkdir(join(parent, 'emi-test-run-111-a1B2c3', 'emi-pipeline-x1y2z3'), { recursive: true });
    await mkdir(join(parent, 'emi-test-run-222-a1B2c3'));
    const guard = await startTmpGuard({ parent, env: {}, settleMs: 0, isAlive: (pid) => pid === 222 });
    await guard.finish();
    expect(await readdir(parent)).toEqual(['emi-test-run-222-a1B2c3']);
  });

  it.skipIf(!disk.allowed)(
    'says, and leaves, an ended run folder it cannot remove (a tmpfs a killed disk test left mounted in it)',
    async () => {
      const parent = await tempDir('emi-guard-parent-');
      const mountedIn = join(parent, 'emi-test-run-111-a1B2c3', 'emi-tmpfs-probe-x1y2z3');
      await mkdir(mountedIn, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountedIn]);
      try {
        const warnings: string[] = [];
        const guard = await startTmpGuard({
          parent,
          env: {},
          settleMs: 0,
          isAlive: () => false,
          warn: (line) => warnings.push(line),
        });
        await guard.finish();
        expect(warnings).toEqual([
          expect.stringMatching(/could not remove .*emi-test-run-111-a1B2c3.*EBUSY.*umount/),
        ]);
      } finally {
        execFileSync('umount', ['-l', mountedIn]); // the folder then goes with the test's own temp folder
      }
    },
  );

  it('names the files that use a leftover prefix, and prints nothing for a clean run', () => {
    const sources = new Map([
      ['test/pipeline.test.ts', "const dir = await tempDir('emi-pipeline-');"],
      ['test/pipeline-store.test.ts', "await tempDir('emi-pipeline-store-');"],
    ]);
    expect(makersOf('emi-pipeline-a1B2c3', sources)).toEqual(['test/pipeline.test.ts']);
    const lines = reportLines({ leftovers: ['emi-pipeline-a1B2c3'], outside: ['emi-other-d4E5f6'] }, sources);
    expect(lines.join('\n')).toMatch(
      /left 1 temporary folder.*\n {2}emi-pipeline-a1B2c3 {2}\(named in test\/pipeline\.test\.ts\)/,
    );
    expect(lines.join('\n')).toMatch(/\(warning\).*\n {2}emi-other-d4E5f6$/);
    expect(reportLines({ leftovers: [], outside: [] }, NO_SOURCES)).toEqual([]);
  });
});
