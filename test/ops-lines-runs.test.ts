// The plain-text lines of runs, the same from every command (an operator's `grep` alert reads them all): a run
// that published nothing says `stale` (the status in last-run.json) and its as-of, after `emi:`, under emi generate,
// emi schedule and emi up alike; a build that fails after its run says so, and where to look for space; a run's
// own success line is on stdout even when the build after it fails. And `emi up` whose first run publishes nothing
// serves the last good files and goes on, or, with nothing to serve, says it did not start.
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { venueUrlEnvName } from '../generator/sources/config.ts';
import { VENUE_IDS } from '../generator/sources/venues.ts';
import { portsInRange } from './free-port.ts';
import { errorLines, generateArgs, runEmi, startEmi } from './ops-cli.ts';
import { fillDisk, tmpfsMounter } from './helpers/tmpfs.ts';
import { tempDir } from './helpers/temp-dir.ts';

const nextPort = portsInRange(19700, 19719);
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every venue routed to a loopback server answering 503 (a mirror that is down), collection cut at 1 s. */
async function venuesDown(): Promise<Record<string, string>> {
  const port = await nextPort();
  const server: Server = createServer((_request, response) => {
    response.statusCode = 503;
    response.end('down');
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  cleanups.push(() => new Promise((done) => server.close(done)));
  const base = `http://127.0.0.1:${port}`;
  return {
    ...Object.fromEntries(VENUE_IDS.map((venue) => [venueUrlEnvName(venue), `${base}/${venue}`])),
    EMI_COLLECT_DEADLINE_SECONDS: '1',
  };
}

const FOLDERS = ['--out', 'site', '--paid', 'paid', '--state', 'var'];
const LIVE = ['--source', 'live', ...FOLDERS];
const STALE_LINE =
  /^emi: generate stale \(as of (\S+)\): published nothing: .+\(the last good files were left in place\)$/;

/** `emi up` on the live source (venues down), serving dist on `port`. */
const upArgs = (port: number, facilitator: number) => [
  'up',
  ...LIVE,
  '--dist',
  'dist',
  '--port',
  String(port),
  '--dev-facilitator-port',
  String(facilitator),
];

const lastRun = async (dir: string) =>
  JSON.parse(await readFile(join(dir, 'var/last-run.json'), 'utf8')) as { status: string; as_of: string };

const minute = (offset: number): string =>
  new Date(Math.floor(Date.now() / 60_000) * 60_000 + offset * 60_000).toISOString();

describe('a run that published nothing: one line naming stale and its as-of, after emi:, from every command', () => {
  it('emi generate', async () => {
    const dir = await tempDir('emi-lines-gen-');
    const run = await runEmi(dir, ['generate', ...LIVE], await venuesDown());
    expect(run.code).toBe(1);
    expect(errorLines(run)).toEqual([expect.stringMatching(STALE_LINE)]);
    const recorded = await lastRun(dir);
    expect(recorded.status).toBe('stale');
    expect(STALE_LINE.exec(errorLines(run)[0] ?? '')?.[1]).toBe(recorded.as_of);
  }, 60_000);

  it('emi schedule', async () => {
    const dir = await tempDir('emi-lines-sched-');
    const args = [
      'schedule',
      '--cron',
      '* * * * * *',
      ...LIVE,
      '--dist',
      'dist',
      '--base-url',
      'https://emi.test',
    ];
    const schedule = startEmi(dir, args, await venuesDown(), { timeoutMs: 60_000 });
    try {
      await schedule.waitFor(/published nothing/);
    } finally {
      schedule.stop();
    }
    const ended = await schedule.done;
    const stale = errorLines(ended).filter((line) => line.includes('published nothing'));
    expect(stale.length).toBeGreaterThan(0);
    for (const line of stale) expect(line).toMatch(STALE_LINE);
  }, 60_000);
});

describe('emi up whose first run publishes nothing', () => {
  it('with last good files: records the run, rebuilds around them, serves them and goes on', async () => {
    const dir = await tempDir('emi-lines-up-');
    const [port, facilitator] = [await nextPort(), await nextPort()];
    const baseUrl = `http://127.0.0.1:${port}`;
    const goodAsOf = minute(-5);
    const good = await runEmi(dir, [...generateArgs(goodAsOf), '--dist', 'dist', '--base-url', baseUrl]);
    expect(good.code, good.stderr).toBe(0);

    const up = startEmi(dir, upArgs(port, facilitator), await venuesDown(), { timeoutMs: 120_000 });
    try {
      await up.waitFor(`site: ${baseUrl}/`);
      const served = (await (await fetch(`${baseUrl}/status.json`)).json()) as {
        status: string;
        data: { generated_at: string };
      };
      expect(served.status).toBe('stale');
      expect(served.data.generated_at).toBe(goodAsOf);
      expect((await fetch(`${baseUrl}/api/main-brain.php`)).status).toBe(200);
      // Read while it runs: a later cycle (one a minute) that the stop below cuts short is recorded as interrupted.
      expect((await lastRun(dir)).status).toBe('stale');
    } finally {
      up.stop();
    }
    const ended = await up.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(errorLines(ended)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(STALE_LINE),
        expect.stringMatching(
          /^emi up: its first run published nothing \(stale as of \S+\): the last good files are served/,
        ),
      ]),
    );
  }, 180_000);

  it('with nothing to serve: exit 1, "not started", nothing listens', async () => {
    const dir = await tempDir('emi-lines-up-none-');
    const [port, facilitator] = [await nextPort(), await nextPort()];
    const up = await runEmi(dir, upArgs(port, facilitator), await venuesDown(), { timeoutMs: 120_000 });
    expect(up.code).toBe(1);
    expect(errorLines(up)).toEqual([
      expect.stringMatching(STALE_LINE),
      expect.stringMatching(/^emi up: not started: its first run published nothing \(stale as of \S+: .+\)$/),
    ]);
    expect(up.stdout).not.toContain('site: http');
    expect(existsSync(join(dir, 'dist'))).toBe(false);
  }, 120_000);
});

const { allowed: canMount, mount: mountTmpfs } = tmpfsMounter();
if (!canMount) console.warn('ops-lines-runs: full-disk cases skipped, mounting a tmpfs needs root');

describe.skipIf(!canMount)('a build that fails after its run (dist/ on a full file system)', () => {
  it('emi generate --dist: the run on stdout, the build on stderr naming the folder to free; emi schedule the same', async () => {
    const dir = await tempDir('emi-lines-full-', 'file');
    const disk = join(dir, 'disk');
    await mkdir(disk);
    expect(mountTmpfs(disk, '64m')).toBe(true);
    const dist = join(disk, 'dist');
    const withDist = (asOf: string) => [
      ...generateArgs(asOf),
      '--dist',
      dist,
      '--base-url',
      'https://emi.test',
    ];
    const good = await runEmi(dir, withDist(minute(-10)));
    expect(good.code, good.stderr).toBe(0);
    await fillDisk(disk, 200_000);

    const buildLine = new RegExp(
      `^emi: the build after the run failed: ENOSPC: no space left on device.*; check the free space of ${dist} `,
    );
    const failed = await runEmi(dir, withDist(minute(-9)));
    expect(failed.code).toBe(1);
    expect(errorLines(failed)).toEqual([expect.stringMatching(buildLine)]);
    expect(failed.stdout.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^generated \d+ files for \S+ \[simulated, ok\]/),
    ]);

    const schedule = startEmi(
      dir,
      ['schedule', '--cron', '* * * * * *', ...FOLDERS, '--dist', dist, '--base-url', 'https://emi.test'],
      {},
      { timeoutMs: 120_000 },
    );
    try {
      await schedule.waitFor(/the build after the run failed|scheduled run failed/);
    } finally {
      schedule.stop();
    }
    const ended = await schedule.done;
    // Stopped every second, it may be stopped inside a later cycle, which then says so: the test's own doing.
    const stoppedByTheTest = /^emi: generate failed: interrupted by SIGTERM .*nothing was published/;
    const lines = errorLines(ended).filter((line) => /failed/.test(line) && !stoppedByTheTest.test(line));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(buildLine);
    expect(ended.stdout).toMatch(/^generated \d+ files for \S+ \[simulated, ok\]/m);
    expect(await readdir(disk)).toContain('filler');
  }, 240_000);
});
