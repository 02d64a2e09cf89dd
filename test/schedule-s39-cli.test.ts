// The real `emi schedule` and its clock: under libfaketime (Debian's `faketime`, required: these tests fail without
// it) on a host in a daylight-saving zone, or ahead of UTC; and the --cadence bounds and warning it starts with.
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorLines, expectUsageMistake, generateArgs, runEmi, startEmi } from './ops-cli.ts';
import type { Running } from './ops-cli.ts';
import { clockAt, requireLibfaketime } from './helpers/fake-clock.ts';
import { tempDir } from './helpers/temp-dir.ts';

/**
 * `emi schedule` into site/, paid/, var/ and dist/ of a fresh folder, with `args` on top. The folder lasts for the
 * file: the two clock tests run concurrently, and a folder kept for one test could go when the other one ended, while
 * its `emi schedule` still ran and wrote it back (see temp-dir.ts).
 */
async function startSchedule(args: string[], env: Record<string, string> = {}): Promise<Running> {
  const dir = await tempDir('emi-s39-', 'file');
  const folders = ['--out', 'site', '--paid', 'paid', '--state', 'var', '--dist', 'dist'];
  const base = ['--base-url', 'http://127.0.0.1:20050'];
  return startEmi(dir, ['schedule', ...folders, ...base, ...args], env, { timeoutMs: 150_000 });
}

/**
 * Waits for `text`, or gives up after `ms`, then kills the process (the caller's expectation says what it printed).
 */
async function sawWithin(running: Running, text: RegExp, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((done) => (timer = setTimeout(() => done(false), ms)));
  const seen = await Promise.race([running.waitFor(text).then(() => true as const), late]);
  clearTimeout(timer);
  if (!seen) running.child.kill('SIGKILL');
  return seen;
}

/** What `emi schedule` says on stderr as it starts (it is then killed: no run is due this soon). */
async function startupErrors(args: string[]): Promise<string[]> {
  const running = await startSchedule(args);
  await running.waitFor(/^scheduled: /m);
  running.child.kill('SIGKILL');
  return errorLines(await running.done);
}

/** Stops it with SIGTERM; resolves with its exit code. */
async function stopped(running: Running): Promise<number | null> {
  running.stop();
  return (await running.done).code;
}

beforeAll(() => requireLibfaketime());

// The two clock tests wait for a minute to turn (about 20 s each, mostly idle): they run side by side.
describe('emi schedule reads its cron in UTC, whatever the host zone (the real emi under libfaketime)', () => {
  it.concurrent(
    'New York, the night clocks go back: the 06:00Z run happens (it used to wait until 07:00Z)',
    async ({ expect }) => {
      const running = await startSchedule([], { TZ: 'America/New_York', ...clockAt('2026-11-01T05:59:40Z') });
      const ran = await sawWithin(running, /generated \d+ files for 2026-11-01T06:00:00/, 90_000);
      expect(ran, running.output()).toBe(true);
      expect(running.output()).toMatch(/^scheduled: "\* \* \* \* \*" in UTC \(Ctrl-C to stop\)$/m);
      expect(await stopped(running), running.output()).toBe(0);
    },
    120_000,
  );

  it.concurrent(
    'Kolkata, "0 0 * * *": the run is at 00:00Z, not at local midnight (18:30Z)',
    async ({ expect }) => {
      const running = await startSchedule(['--cron', '0 0 * * *', '--cadence', '86400'], {
        TZ: 'Asia/Kolkata',
        ...clockAt('2026-12-01T23:59:40Z'),
      });
      const ran = await sawWithin(running, /generated \d+ files for 2026-12-02T00:00:00/, 90_000);
      expect(ran, running.output()).toBe(true);
      expect(running.output()).not.toMatch(/warning/); // a daily cron, a day's cadence
      expect(await stopped(running), running.output()).toBe(0);
    },
    120_000,
  );

  it('--help says the cron is read in UTC', async () => {
    const help = await runEmi(tmpdir(), ['schedule', '--help']);
    expect(help.stdout).toMatch(
      /--cron <expr>\s+cron expression, read in UTC whatever the host's time\s+zone/,
    );
  });
});

describe('--cadence', () => {
  it.each(['315360000000', '8640000000000', '86401'])(
    '--cadence %s is refused (exit 2): at most a day',
    async (value) => {
      const dir = await tempDir('emi-s39-');
      const run = await runEmi(dir, [...generateArgs('2026-06-10T12:00:00Z'), '--cadence', value]);
      expectUsageMistake(
        run,
        new RegExp(`"${value}" is more than a day: --cadence is at most 86400 seconds`),
      );
    },
  );

  it('--cadence 86400 is accepted: next_update_due a day after the run', async () => {
    const dir = await tempDir('emi-s39-');
    const run = await runEmi(dir, [...generateArgs('2026-06-10T12:00:00Z'), '--cadence', '86400']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const regime = JSON.parse(await readFile(join(dir, 'site', 'api', 'market-regime.php'), 'utf8'));
    expect(regime.source.next_update_due).toBe('2026-06-11T12:00:00.000Z');
  }, 60_000);

  it('a cron slower than the cadence is said in one warning line at start, naming both', async () => {
    const stderr = await startupErrors(['--cron', '@hourly']);
    expect(stderr.filter((line) => line.includes('warning'))).toEqual([
      'emi: warning: --cron "@hourly" runs every 3600 s (UTC) but --cadence is 60: next_update_due passes before ' +
        'the next run, so the files read late, then stale, and the paywall refuses sales meanwhile; give --cadence 3600',
    ]);
  });

  it('no warning when the cadence covers the cron\'s interval ("*/15 * * * *", --cadence 900)', async () => {
    expect(await startupErrors(['--cron', '*/15 * * * *', '--cadence', '900'])).toEqual([]);
  });
});
