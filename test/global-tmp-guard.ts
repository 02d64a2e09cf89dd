// Fails a test run that leaves an `emi-*` folder in the temp folder (the suite once left gigabytes there).
//
// The run gets a temp folder of its own, `<tmpdir>/emi-test-run-<pid>-XXXXXX`, as TMPDIR for the workers and for
// every process they start: what is left in it at the end was left by this run, never by another run or helper
// working on the same machine at the same time, so the check can fail the run without being flaky. Folders that
// tests remove a little late (a server stopped, a child process exiting) are waited for briefly. The run's folder is
// removed at the end either way, so even a leaking run leaves nothing behind. New `emi-*` folders directly in the
// real temp folder are only warned about: another process may have made them.
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUN_DIR_PREFIX = 'emi-test-run-';
const RUN_DIR = /^emi-test-run-(\d+)-[A-Za-z0-9]{6}$/;
const SUFFIX = /[A-Za-z0-9]{6}$/; // what mkdtemp appends to a prefix
const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface TmpGuardOptions {
  /** The real temp folder, where the run's own folder is made. */
  parent: string;
  /** The environment whose TMPDIR the run's workers inherit (restored by finish). */
  env: NodeJS.ProcessEnv;
  /** How long to wait for folders that are still being removed. */
  settleMs?: number;
  /** Whether a process is running: run folders of ended runs (interrupted, never torn down) are removed. */
  isAlive?: (pid: number) => boolean;
  /** Where a warning goes (default stderr). */
  warn?: (line: string) => void;
}

export interface TmpGuardReport {
  /** `emi-*` folders this run left in its own temp folder (a failure). */
  leftovers: string[];
  /** New `emi-*` folders directly in the real temp folder (a warning: maybe another process's). */
  outside: string[];
}

const isEmiFolder = (name: string): boolean => name.startsWith('emi-') && !RUN_DIR.test(name);

const emiFolders = async (dir: string): Promise<string[]> =>
  (await readdir(dir).catch(() => [] as string[])).filter(isEmiFolder).sort();

const processIsAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Removes the run folders of runs whose process has ended (a run stopped with ^C never tears down). One that cannot
 * be removed (a disk test's tmpfs left mounted in it by a killed run: EBUSY) is said, and left: it is not this run's.
 */
async function removeEndedRuns(
  parent: string,
  isAlive: (pid: number) => boolean,
  warn: (line: string) => void,
): Promise<void> {
  for (const name of await readdir(parent)) {
    const pid = RUN_DIR.exec(name)?.[1];
    if (pid === undefined || isAlive(Number(pid))) continue;
    await rm(join(parent, name), { recursive: true, force: true }).catch((error: NodeJS.ErrnoException) => {
      const hint = error.code === 'EBUSY' ? ' (a file system still mounted in it? umount -l it)' : '';
      warn(
        `tmp guard (warning): could not remove ${join(parent, name)}, left by an ended run: ${error.code}${hint}`,
      );
    });
  }
}

/** `emi-*` folders in `dir`, waiting up to `settleMs` for ones still being removed. */
async function settledLeftovers(dir: string, settleMs: number): Promise<string[]> {
  const deadline = Date.now() + settleMs;
  let left = await emiFolders(dir);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(100);
    left = await emiFolders(dir);
  }
  return left;
}

/**
 * Gives the run a temp folder of its own (in `options.env.TMPDIR`); `finish` restores TMPDIR, reports what was left
 * and removes the run's folder.
 */
export async function startTmpGuard(
  options: TmpGuardOptions,
): Promise<{ runDir: string; finish: () => Promise<TmpGuardReport> }> {
  const { parent, env, settleMs = 3_000, isAlive = processIsAlive, warn = console.error } = options;
  await removeEndedRuns(parent, isAlive, warn);
  const before = new Set(await emiFolders(parent));
  const runDir = await mkdtemp(join(parent, `${RUN_DIR_PREFIX}${process.pid}-`));
  await chmod(runDir, 0o1777); // as /tmp: tests run emi as another user (nobody) in folders made here
  const previousTmpdir = env.TMPDIR;
  env.TMPDIR = runDir;
  const finish = async (): Promise<TmpGuardReport> => {
    if (previousTmpdir === undefined) delete env.TMPDIR;
    else env.TMPDIR = previousTmpdir;
    const leftovers = await settledLeftovers(runDir, settleMs);
    const outside = (await emiFolders(parent)).filter((name) => !before.has(name));
    await rm(runDir, { recursive: true, force: true, maxRetries: 3 });
    return { leftovers, outside };
  };
  return { runDir, finish };
}

/** The test files and helpers that name a leftover's prefix (`emi-pipeline-` for `emi-pipeline-a1B2c3`). */
export function makersOf(folder: string, sources: ReadonlyMap<string, string>): string[] {
  const prefix = folder.replace(SUFFIX, '');
  return [...sources].filter(([, text]) => text.includes(`'${prefix}'`)).map(([file]) => file);
}

async function testSources(): Promise<Map<string, string>> {
  const dir = join(ROOT, 'test');
  const files = (await readdir(dir, { recursive: true })).filter((file) => /\.(ts|mts|mjs)$/.test(file));
  const texts = await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')));
  return new Map(files.map((file, index) => [relative(ROOT, join(dir, file)), texts[index]!]));
}

/** The lines to print for a report (none when the run left nothing). */
export function reportLines(report: TmpGuardReport, sources: ReadonlyMap<string, string>): string[] {
  const lines: string[] = [];
  if (report.leftovers.length > 0) {
    lines.push(
      `tmp guard: the tests left ${report.leftovers.length} temporary folder(s); remove them when the test ends ` +
        '(test/helpers/temp-dir.ts):',
    );
    for (const folder of report.leftovers) {
      const makers = makersOf(folder, sources);
      lines.push(`  ${folder}${makers.length > 0 ? `  (named in ${makers.join(', ')})` : ''}`);
    }
  }
  if (report.outside.length > 0) {
    lines.push(
      `tmp guard (warning): ${report.outside.length} new emi-* folder(s) in the temp folder itself during the run; ` +
        'another process may have made them, or a test started a process without TMPDIR:',
      ...report.outside.map((folder) => `  ${folder}`),
    );
  }
  return lines;
}

export default async function setup(): Promise<() => Promise<void>> {
  const guard = await startTmpGuard({ parent: tmpdir(), env: process.env });
  return async () => {
    const report = await guard.finish();
    const lines = reportLines(report, await testSources());
    if (lines.length > 0) console.error(lines.join('\n'));
    // A teardown that throws is only logged by vitest; the exit code is what CI sees.
    if (report.leftovers.length > 0) process.exitCode = 1;
  };
}
