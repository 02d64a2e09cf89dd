// "Written last and true", for the faults an operator audit met: venues that accept connections and never answer
// (a network that silently drops traffic), a SIGTERM (systemd's stop, its TimeoutStartSec) or Ctrl-C while a run
// collects, and a site build that fails after a good run (a full disk under dist/). In each case var/last-run.json,
// site/status.json and the served dist/status.json say what happened, never the last good run's `ok`; the run
// leaves no temporary files; the next good run and build clear it. The silent venue is a real TCP server on
// 127.0.0.1 and the signals are real ones sent to real `emi` processes.
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { publishCycle } from '../generator/cycle.ts';
import * as pipeline from '../generator/pipeline.ts';
import { venueUrlEnvName } from '../generator/sources/config.ts';
import { VENUE_IDS } from '../generator/sources/venues.ts';
import type * as SiteBuild from '../generator/site/build.ts';
import type * as WarmBuild from '../generator/site/warm-build.ts';
import type { SourceIssue } from '../generator/market/types.ts';
import { collectSimulatedMarket } from '../generator/sources/collect.ts';
import { RunStatus } from '../schemas/status.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { generateArgs, runEmi, startEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';
import { fillDisk, tmpfsMounter } from './helpers/tmpfs.ts';
import { simulatedCycle } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

// --- Builds that fail as on a full disk, for the in-process cycle (no tmpfs needed) -------------------------------

const failing = { builds: false };
const noSpace = () =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

vi.mock('../generator/site/build.ts', async (importOriginal) => {
  const real = await importOriginal<typeof SiteBuild>();
  return {
    ...real,
    buildSite: vi.fn(async (options: SiteBuild.BuildSiteOptions) => {
      if (failing.builds) throw noSpace();
      return real.buildSite(options);
    }),
  };
});

vi.mock('../generator/site/warm-build.ts', async (importOriginal) => {
  const real = await importOriginal<typeof WarmBuild>();
  class FailingWhenAsked extends real.WarmSiteBuilder {
    override async build(): Promise<void> {
      if (failing.builds) throw noSpace();
      return super.build();
    }
  }
  return { ...real, WarmSiteBuilder: FailingWhenAsked };
});

// --- Helpers ---------------------------------------------------------------------------------------------------------

const BASE_URL = 'http://127.0.0.1:8080';

interface Recorded {
  status: string;
  error: string | null;
  as_of: string;
  started_at: string;
  finished_at: string;
  issues: Array<{ message: string }>;
  build?: BuildRecord;
}
interface BuildRecord {
  status: string;
  error: string;
  failed_at: string;
  failing_since: string;
  served: { generation: string | null; built_at: string | null; data_generated_at: string | null };
}

const readJson = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;
const lastRun = (dir: string) => readJson<Recorded>(join(dir, 'var/last-run.json'));
const statusIn = async (folder: string) =>
  RunStatus.parse(JSON.parse(await readFile(join(folder, 'status.json'), 'utf8')));
const servedGeneration = (dir: string, dist = 'dist') =>
  readlink(join(dir, `.${dist}.generations`, 'current'));

/** The lines on stderr and stdout, without build/'s "out of date" notice (others may be editing the sources). */
const linesOf = (text: string): string[] =>
  text.split('\n').filter((line) => line && !line.includes('build/ is out of date'));

const lockRows = (dir: string): unknown[] => {
  const db = new Database(join(dir, 'var/arena.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT owner FROM run_lock').all();
  } finally {
    db.close();
  }
};

/** Temporary files anywhere a run or a build writes: half-written generations and staged records. */
async function leftovers(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const folder of ['var', 'var/published', 'site', '.dist.generations', 'dist']) {
    const names = await readdir(join(dir, folder)).catch(() => [] as string[]);
    found.push(
      ...names.filter((name) => /^tmp-/.test(name) || /^\..+\.tmp$/.test(name)).map((n) => `${folder}/${n}`),
    );
  }
  return found;
}

/** A TCP server on 127.0.0.1 that accepts every connection and never answers (nor closes). */
interface SilentServer {
  url: string;
  connections: () => number;
  close(): Promise<void>;
}
async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => count,
    close: () =>
      new Promise((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

/** Every venue routed to the silent server (as an operator's EMI_VENUE_URL_* would route them to a mirror). */
const venuesTo = (server: SilentServer): Record<string, string> =>
  Object.fromEntries(VENUE_IDS.map((venue) => [venueUrlEnvName(venue), `${server.url}/${venue}`]));

const until = async (check: () => boolean, ms: number, what: string): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
};

/** Waits for a process, killing it (and failing) after `ms`: the old code ran for ten minutes here. */
async function within(run: ReturnType<typeof startEmi>, ms: number): Promise<Finished & { killed: boolean }> {
  let killed = false;
  const watchdog = setTimeout(() => {
    killed = true;
    run.child.kill('SIGKILL');
  }, ms);
  const finished = await run.done;
  clearTimeout(watchdog);
  return { ...finished, killed };
}

/**
 * One good simulated run, built into dist/ by the real `emi`, made once for the file (the first test to ask for it
 * makes it): the tests that change such a folder each get a copy of their own.
 */
let goodRun: Promise<{ dir: string; servedAt: string }> | undefined;
async function madeGoodRun(): Promise<{ dir: string; servedAt: string }> {
  const dir = await tempDir('emi-truth-good-', 'file');
  const asOf = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 20 * 60_000).toISOString();
  const good = await runEmi(dir, [...generateArgs(asOf), '--dist', 'dist', '--base-url', BASE_URL]);
  if (good.code !== 0) throw new Error(`the first run failed: ${good.stderr}`);
  return { dir, servedAt: asOf };
}

/**
 * A folder with one good simulated run, built into dist/ (the last good site, served): a copy of the file's one good
 * run, as that run left it (its links are relative: .dist.generations/current, dist -> the served generation).
 */
async function publishedAndBuilt(prefix: string): Promise<{ dir: string; servedAt: string }> {
  goodRun ??= madeGoodRun();
  const made = await goodRun;
  const dir = await tempDir(prefix);
  await cp(made.dir, dir, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  return { dir, servedAt: made.servedAt };
}

const liveArgs = ['generate', '--source', 'live', '--out', 'site', '--paid', 'paid', '--state', 'var'];

// --- 1a: a whole-run deadline for collection ---------------------------------------------------------------------

describe('venues that accept connections and never answer', () => {
  let silent: SilentServer;
  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterAll(() => silent.close());

  it('end the run at its collection deadline: stale, saying why, recorded in last-run.json and status.json', async () => {
    const { dir, servedAt } = await publishedAndBuilt('emi-silent-');
    const started = Date.now();
    // The venues' own settings as shipped (10 s per attempt, 2 retries, fallbacks): only the deadline is short.
    const run = startEmi(dir, liveArgs, { ...venuesTo(silent), EMI_COLLECT_DEADLINE_SECONDS: '1' });
    const ended = await within(run, 60_000);
    expect(ended.killed, 'the run was still collecting after 60 s').toBe(false);
    expect(Date.now() - started).toBeLessThan(40_000);
    expect(silent.connections()).toBeGreaterThan(0);
    expect(ended.code, ended.stderr).toBe(1);
    expect(ended.stderr).toMatch(
      /^emi: generate stale \(as of \S+\): published nothing: collection stopped at its deadline of 1 s/m,
    );

    const recorded = await lastRun(dir);
    expect(recorded.status).toBe('stale');
    expect(recorded.error).toMatch(
      /collection stopped at its deadline of 1 s .*before any source delivered a price/,
    );
    expect(recorded.issues.length).toBeGreaterThan(0);
    expect(recorded.issues.some((issue) => /deadline of 1 s/.test(issue.message))).toBe(true);
    const status = await statusIn(join(dir, 'site'));
    expect(status.status).toBe('stale');
    expect(status.mode).toBe('live');
    expect(status.last_run.error).toBe(recorded.error);
    expect(status.data.generated_at).toBe(servedAt); // the last good data, still served, with its own time
    // ... and its own mode: the simulated files stay served, so the status does not call the data live.
    expect(status.data.mode).toBe('simulated');
    expect(status.simulated).toBe(true);
    expect(await leftovers(dir)).toEqual([]);
  }, 120_000);

  it('a run cut short by its deadline publishes what came in, degraded, saying so', async () => {
    const dir = await tempDir('emi-deadline-partial-');
    const asOf = Date.parse('2026-11-21T12:00:00Z');
    const report = await pipeline.runPipeline({
      ...simulatedRun(dir, asOf),
      collectDeadlineMs: 300,
      // Most answers in at once, then one section waiting on a venue until the run's signal cuts it short.
      collector: async (request) => {
        const snapshot = await collectSimulatedMarket(request);
        const signal = request.signal as AbortSignal;
        await new Promise((done) => signal.addEventListener('abort', done, { once: true }));
        const cut: SourceIssue = {
          venue: 'okx',
          symbol: 'BTC',
          section: 'funding',
          message: (signal.reason as Error).message,
        };
        return { ...snapshot, issues: [...snapshot.issues, cut] };
      },
    });
    expect(report.status).toBe('degraded');
    expect(report.error).toMatch(
      /^collection stopped at its deadline of 0\.3 s .*: published what came in before it$/,
    );
    expect(report.issues.at(-1)?.message).toMatch(/deadline of 0\.3 s/);
    const status = await statusIn(join(dir, 'site'));
    expect(status.status).toBe('degraded');
    expect(status.data.generated_at).toBe(new Date(asOf).toISOString());
    expect((await lastRun(dir)).error).toBe(report.error);
  });

  it('a collector that does not stop at the deadline is not waited for: the run fails, saying so', async () => {
    const dir = await tempDir('emi-deadline-deaf-');
    const started = Date.now();
    const report = await pipeline.runPipeline({
      ...simulatedRun(dir, Date.parse('2026-11-21T12:00:00Z')),
      collectDeadlineMs: 200,
      collector: () => new Promise(() => undefined),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(report.status).toBe('failed');
    expect(report.error).toMatch(
      /^collection stopped at its deadline of 0\.2 s .*did not stop within 2 s of it/,
    );
    expect((await lastRun(dir)).status).toBe('failed');
    expect((await statusIn(join(dir, 'site'))).status).toBe('failed');
  });

  it('a deadline that is not a positive number of seconds is a usage error, before anything is written', async () => {
    const dir = await tempDir('emi-deadline-bad-');
    for (const value of ['soon', '0', '-5']) {
      const run = await runEmi(dir, generateArgs('2026-11-21T12:00:00Z'), {
        EMI_COLLECT_DEADLINE_SECONDS: value,
      });
      expect(run.code, run.stderr).toBe(2);
      // Checked with the other settings before the command runs: the usage hint follows, as for every such error.
      expect(linesOf(run.stderr)).toEqual([
        `emi: EMI_COLLECT_DEADLINE_SECONDS must be a positive number of seconds: ${JSON.stringify(value)}`,
        '(run with --help for usage)',
      ]);
    }
    expect(existsSync(join(dir, 'site'))).toBe(false);
    expect(existsSync(join(dir, 'var/last-run.json'))).toBe(false);
  }, 60_000);

  it('the shipped systemd unit gives the run more time than the collection deadline, with room to publish', async () => {
    const unit = readFileSync('deploy/systemd/emi-generate.service', 'utf8');
    const timeout = Number(/^TimeoutStartSec=(\d+)$/m.exec(unit)?.[1]);
    const set = /^Environment=EMI_COLLECT_DEADLINE_SECONDS=(\d+)$/m.exec(unit)?.[1];
    const deadline = set === undefined ? pipeline.DEFAULT_COLLECT_DEADLINE_MS / 1000 : Number(set);
    expect(deadline).toBeGreaterThan(0);
    // After the deadline the run still computes, publishes and builds the site (seconds; a slow disk, more).
    expect(timeout - deadline).toBeGreaterThanOrEqual(120);
    expect(unit).toMatch(/^ExecStart=.* generate --source live .*--dist dist/m);
  });
});

// --- 1b: SIGTERM and SIGINT while a run collects ------------------------------------------------------------------

describe('a signal while a live run collects', () => {
  let silent: SilentServer;
  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterAll(() => silent.close());

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'emi generate --dist: %s is recorded as an interrupted run, served, and the process ends by it',
    async (signal) => {
      const { dir, servedAt } = await publishedAndBuilt(`emi-${signal.toLowerCase()}-`);
      const servedBrain = await readFile(join(dir, 'dist/api/main-brain.php'), 'utf8');
      const before = silent.connections();
      const run = startEmi(dir, [...liveArgs, '--dist', 'dist', '--base-url', BASE_URL], venuesTo(silent));
      await until(() => silent.connections() > before, 30_000, 'the run to call a venue');
      await new Promise((done) => setTimeout(done, 500)); // well into collection
      run.child.kill(signal);
      const ended = await within(run, 60_000);
      expect(ended.killed, `the run went on collecting after ${signal}`).toBe(false);
      // The conventional way out: killed by the signal it was sent (a shell says 143 for SIGTERM, 130 for SIGINT).
      expect(ended.signal, ended.stderr).toBe(signal);

      const recorded = await lastRun(dir);
      expect(recorded.status).toBe('failed');
      expect(recorded.error).toMatch(new RegExp(`^interrupted by ${signal} while collecting market data`));
      // The issues are the sources' own, not one per call the signal cut short.
      expect(recorded.issues.filter((issue) => issue.message.includes(signal))).toEqual([]);
      for (const folder of ['site', 'dist']) {
        const status = await statusIn(join(dir, folder));
        expect(status.status, folder).toBe('failed');
        expect(status.last_run.error, folder).toBe(recorded.error);
        expect(status.data.generated_at, folder).toBe(servedAt);
      }
      expect(await readFile(join(dir, 'dist/api/main-brain.php'), 'utf8')).toBe(servedBrain);
      expect(await leftovers(dir)).toEqual([]);
      expect(lockRows(dir)).toEqual([]);
      expect(ended.stderr).toMatch(new RegExp(`^emi: generate failed: interrupted by ${signal}`, 'm'));
    },
    180_000,
  );

  it('emi schedule: SIGTERM ends the cycle in progress as interrupted, serves that status, and stops', async () => {
    const { dir, servedAt } = await publishedAndBuilt('emi-schedule-term-');
    const before = silent.connections();
    const run = startEmi(
      dir,
      [
        'schedule',
        '--source',
        'live',
        '--cron',
        '* * * * * *',
        ...['--out', 'site', '--paid', 'paid', '--state', 'var', '--dist', 'dist', '--base-url', BASE_URL],
      ],
      venuesTo(silent),
    );
    await until(() => silent.connections() > before, 30_000, 'a cycle to call a venue');
    await new Promise((done) => setTimeout(done, 500));
    run.child.kill('SIGTERM');
    const ended = await within(run, 60_000);
    expect(ended.killed, 'the cycle went on collecting after SIGTERM').toBe(false);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout + ended.stderr).toMatch(/generate failed: interrupted by SIGTERM while collecting/);

    const recorded = await lastRun(dir);
    expect(recorded.status).toBe('failed');
    expect(recorded.error).toMatch(/^interrupted by SIGTERM while collecting market data/);
    const served = await statusIn(join(dir, 'dist'));
    expect(served.status).toBe('failed');
    expect(served.last_run.error).toBe(recorded.error);
    expect(served.data.generated_at).toBe(servedAt);
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);
});

// --- 2: a site build that fails after a good run ------------------------------------------------------------------

describe('a site build that fails after a good run (the cycle of emi schedule, emi up, emi generate --dist)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-build-fails-'));
  });
  afterEach(() => {
    failing.builds = false;
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const T = (hour: number) => Date.parse(`2026-11-21T${String(hour).padStart(2, '0')}:00:00Z`);
  const iso = (hour: number) => new Date(T(hour)).toISOString();
  const flags = (hour: number) => simulatedCycle(dir, T(hour), BASE_URL);

  it.each([
    ['warm (emi schedule, emi up)', true],
    ['cold (emi generate --dist)', false],
  ] as const)(
    '%s: the records say the site was not rebuilt, which build is served and why; the next good build clears it',
    async (_, warm) => {
      const base = warm ? 10 : 14;
      expect((await publishCycle(flags(base), undefined, { warm })).status).toBe('ok');
      const generation = await servedGeneration(dir);
      const servedBrain = await readFile(join(dir, 'dist/api/main-brain.php'), 'utf8');

      failing.builds = true;
      await expect(publishCycle(flags(base + 1), undefined, { warm })).rejects.toThrow(/^ENOSPC/);
      const first = await lastRun(dir);
      // The data run itself did not fail, and says so.
      expect(first.status).toBe('ok');
      expect(first.error).toBeNull();
      expect(first.as_of).toBe(iso(base + 1));
      expect(first.build).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/^ENOSPC: no space left on device/),
        served: { generation, data_generated_at: iso(base) },
      });
      expect(first.build?.served.built_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(first.build?.failing_since).toBe(first.build?.failed_at);

      const site = await statusIn(join(dir, 'site'));
      expect(site.status).toBe('ok');
      expect(site.data.generated_at).toBe(iso(base + 1)); // what was published
      expect(site.build).toEqual(first.build);
      const served = await statusIn(join(dir, 'dist'));
      expect(served.status).toBe('ok'); // the last run's outcome...
      expect(served.last_run.started_at).toBe(first.started_at);
      expect(served.data.generated_at).toBe(iso(base)); // ...and the age of the data actually served
      expect(served.build).toEqual(first.build);
      expect(await servedGeneration(dir)).toBe(generation);
      expect(await readFile(join(dir, 'dist/api/main-brain.php'), 'utf8')).toBe(servedBrain);

      // Still failing an hour later: failing since the first failure, the same build served.
      await expect(publishCycle(flags(base + 2), undefined, { warm })).rejects.toThrow(/^ENOSPC/);
      const second = await lastRun(dir);
      expect(second.build?.failing_since).toBe(first.build?.failed_at);
      expect(second.build?.served).toEqual(first.build?.served);
      expect((await statusIn(join(dir, 'dist'))).build?.failing_since).toBe(first.build?.failed_at);

      failing.builds = false;
      expect((await publishCycle(flags(base + 3), undefined, { warm })).status).toBe('ok');
      expect((await lastRun(dir)).build).toBeUndefined();
      expect((await statusIn(join(dir, 'site'))).build).toBeUndefined();
      const rebuilt = await statusIn(join(dir, 'dist'));
      expect(rebuilt.build).toBeUndefined();
      expect(rebuilt.data.generated_at).toBe(iso(base + 3));
      expect(await leftovers(dir)).toEqual([]);
    },
    180_000,
  );
  it('a first build that fails records it, and makes no dist/ where its link belongs', async () => {
    const first = await tempDir('emi-first-build-fails-');
    failing.builds = true;
    const at = {
      ...flags(9),
      out: join(first, 'site'),
      paid: join(first, 'paid'),
      state: join(first, 'var'),
    };
    await expect(
      publishCycle({ ...at, dist: join(first, 'dist') }, undefined, { warm: false }),
    ).rejects.toThrow(/^ENOSPC/);
    const recorded = await lastRun(first);
    expect(recorded.status).toBe('ok');
    expect(recorded.build?.served).toEqual({ generation: null, built_at: null, data_generated_at: null });
    expect((await statusIn(join(first, 'site'))).build).toEqual(recorded.build);
    expect(existsSync(join(first, 'dist'))).toBe(false);
  });
});

// --- 2, on a real full disk: emi generate --dist and emi build (as root, as test/ops-disk.test.ts does) ---------

const { allowed: canMount, mount: mountTmpfs } = tmpfsMounter();
if (!canMount) console.warn('ops-run-status-truth: full-disk cases skipped, mounting a tmpfs needs root');

describe.skipIf(!canMount)('dist/ on a full file system', () => {
  it('emi generate --dist records the failed build; emi build says it in one line; room again clears it', async () => {
    const dir = await tempDir('emi-full-dist-', 'file');
    const disk = join(dir, 'disk');
    await mkdir(disk);
    expect(mountTmpfs(disk, '64m')).toBe(true);
    const withDist = (asOf: string) => [...generateArgs(asOf), '--dist', 'disk/dist', '--base-url', BASE_URL];
    const good = await runEmi(dir, withDist('2026-11-21T12:00:00Z'));
    expect(good.code, good.stderr).toBe(0);
    const generation = await servedGeneration(disk);
    const servedBrain = await readFile(join(disk, 'dist/api/main-brain.php'), 'utf8');

    await fillDisk(disk, 200_000);
    const failed = await runEmi(dir, withDist('2026-11-21T13:00:00Z'));
    expect(failed.code).toBe(1);
    // The run's own outcome (on stdout, as after every run that published), then the build's failure: one line
    // each, nothing of Eleventy's.
    expect(linesOf(failed.stdout)).toEqual([
      expect.stringMatching(/^generated \d+ files for 2026-11-21T13:00:00.000Z \[simulated, ok\]/),
    ]);
    expect(linesOf(failed.stderr)).toEqual([
      expect.stringMatching(/^emi: the build after the run failed: ENOSPC: no space left on device/),
    ]);
    const recorded = await lastRun(dir);
    expect(recorded.status).toBe('ok');
    expect(recorded.build).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^ENOSPC: no space left on device/),
      served: { generation, data_generated_at: '2026-11-21T12:00:00.000Z' },
    });
    // The public copies name no server path: the same record, its paths relative to the run's folder.
    const recordedError = (recorded.build as { error: string }).error;
    expect(recordedError).toContain(`"${disk}/.dist.generations/`);
    const publicBuild = { ...recorded.build, error: recordedError.replaceAll(`${dir}/`, '') };
    expect((await statusIn(join(dir, 'site'))).build).toEqual(publicBuild);
    const served = await statusIn(join(disk, 'dist'));
    expect(served.status).toBe('ok');
    expect(served.build).toEqual(publicBuild);
    expect(served.data.generated_at).toBe('2026-11-21T12:00:00.000Z');
    expect(await readFile(join(disk, 'dist/api/main-brain.php'), 'utf8')).toBe(servedBrain);

    // A one-off build on the full disk, the disk filling at different steps: one line, no Eleventy output.
    for (const leave of [4_000_000, 1_000_000, 200_000]) {
      await rm(join(disk, 'filler'), { force: true });
      await fillDisk(disk, leave);
      const build = await runEmi(dir, [
        'build',
        '--published',
        'site',
        '--out',
        'disk/dist',
        '--base-url',
        BASE_URL,
      ]);
      expect(build.code).toBe(1);
      expect(linesOf(build.stdout)).toEqual([]);
      expect(linesOf(build.stderr)).toEqual([expect.stringMatching(/^emi: ENOSPC: no space left on device/)]);
      const status = await statusIn(join(disk, 'dist'));
      expect(status.build?.status).toBe('failed');
      expect(status.build?.served.generation).toBe(generation);
      expect(await servedGeneration(disk)).toBe(generation);
    }

    await rm(join(disk, 'filler'), { force: true });
    const next = await runEmi(dir, withDist('2026-11-21T14:00:00Z'));
    expect(next.code, next.stderr).toBe(0);
    expect((await lastRun(dir)).build).toBeUndefined();
    expect((await statusIn(join(dir, 'site'))).build).toBeUndefined();
    const rebuilt = await statusIn(join(disk, 'dist'));
    expect(rebuilt.build).toBeUndefined();
    expect(rebuilt.data.generated_at).toBe('2026-11-21T14:00:00.000Z');
    expect(await realpath(join(disk, 'dist'))).not.toContain(generation);
    expect(existsSync(join(disk, 'dist/index.html'))).toBe(true);
  }, 240_000);
});
