// A folder the service's user may not write to (say, made by a first `sudo emi generate`) is a fault of the machine,
// not a mistyped option: exit 1 (not the usage code 2), one line naming the folder and what to do, no usage hint; the
// failed run is recorded wherever it can be (last-run.json, /status.json) and `emi arena status` shows it.
// Root ignores permissions, so as root the commands run as the user nobody (setpriv), as in ops-access.test.ts; any
// other user runs them itself on folders it made read-only.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canRunAsNobody, runEmi, runEmiAsNobody } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const isRoot = process.getuid?.() === 0;
const runnable = process.platform !== 'win32' && (!isRoot || canRunAsNobody());
if (!runnable)
  console.warn('ops-faults-folders: skipped, as root it needs setpriv to run emi as another user');

/** Runs the real `emi` as the service's user: nobody when this is root, else this user. */
const runAsService = (cwd: string, args: string[]): Promise<Finished> =>
  isRoot ? runEmiAsNobody(cwd, args) : runEmi(cwd, args);

/** Lets the service's user write `folder` and everything in it. */
const openToService = (folder: string) => execFileSync('chmod', ['-R', 'a+rwX', folder]);

/** Takes write permission on `folder` itself away from the service's user (as root: it is root's, mode 755). */
async function closeToService(folder: string): Promise<void> {
  await chmod(folder, isRoot ? 0o755 : 0o555);
}

const generate = (asOf: string) =>
  ['generate', '--out', 'site', '--paid', 'paid', '--state', 'var', '--as-of', asOf] as string[];

/** A published folder (12:00) whose parent the service's user may enter. */
async function published(): Promise<string> {
  const dir = await tempDir('emi-faults-');
  const first = await runEmi(dir, generate('2026-11-21T12:00:00Z'));
  expect(first.code, first.stderr).toBe(0);
  await chmod(dir, 0o755);
  return dir;
}

const readJson = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;

interface Status {
  status: string;
  last_run: { error: string | null };
  data: { generated_at: string | null };
}

/** The lines on stderr, without build/'s "out of date" notice (others may be editing the sources meanwhile). */
const errorLines = (run: Finished): string[] =>
  run.stderr.split('\n').filter((line) => line && !line.includes('build/ is out of date'));

const REMEDY =
  /no write permission on .* for this user, .*: give the folder to the user emi runs as \(e\.g\. chown -R /;

describe.skipIf(!runnable)('a folder the service user may not write to', () => {
  it('output folder: exit 1 without the usage hint, the failure in last-run.json and emi arena status', async () => {
    const dir = await published();
    openToService(join(dir, 'var'));
    await closeToService(join(dir, 'site'));

    const run = await runAsService(dir, generate('2026-11-21T13:00:00Z'));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/run with --help/);
    expect(errorLines(run)).toHaveLength(1); // not a raw EACCES line about site/status.json first
    const failure = errorLines(run).at(-1);
    expect(failure).toMatch(/^emi: generate failed: output folder .*site is not writable: /);
    expect(failure).toMatch(REMEDY);

    const report = await readJson<{ status: string; error: string }>(join(dir, 'var/last-run.json'));
    expect(report.status).toBe('failed');
    expect(report.error).toMatch(/^output folder .*site is not writable: /);
    const regime = await readJson<{ updated: string }>(join(dir, 'site/api/market-regime.php'));
    expect(regime.updated).toBe('2026-11-21T12:00:00.000Z'); // the last good files stay served

    const status = await runEmi(dir, ['arena', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^last run: failed, finished \S+: output folder .*site is not writable: /m);
  }, 120_000);

  it('state folder: exit 1 without the usage hint, and /status.json says failed', async () => {
    const dir = await published();
    const before = await readJson<Status>(join(dir, 'site/status.json'));
    expect(before.status).toBe('ok');
    openToService(join(dir, 'site'));
    openToService(join(dir, 'var')); // its files, and the paid files served from it, stay writable
    await closeToService(join(dir, 'var'));

    const run = await runAsService(dir, generate('2026-11-21T13:00:00Z'));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/run with --help/);
    expect(errorLines(run)).toHaveLength(1);
    expect(errorLines(run)[0]).toMatch(/^emi: state folder .*var is not writable: /);
    expect(errorLines(run)[0]).toMatch(REMEDY);

    const after = await readJson<Status>(join(dir, 'site/status.json'));
    expect(after.status).toBe('failed');
    expect(after.last_run.error).toMatch(/^state folder .*var is not writable: /);
    expect(after.data.generated_at).toBe(before.data.generated_at); // the data served is still the 12:00 run's
  }, 120_000);

  it('emi build: an output folder it may not write to is one line and exit 1, not a usage error', async () => {
    const dir = await published();
    openToService(join(dir, 'site'));
    openToService(join(dir, 'var'));
    await mkdir(join(dir, 'www'));
    await closeToService(join(dir, 'www'));

    const run = await runAsService(dir, ['build', '--base-url', 'https://emi.test', '--out', 'www/dist']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/run with --help/);
    expect(errorLines(run)).toHaveLength(1);
    expect(errorLines(run)[0]).toMatch(/^emi: output folder www\/dist is not writable: /);
    expect(errorLines(run)[0]).toMatch(REMEDY);
  }, 120_000);
});
