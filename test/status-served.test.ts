// Hosts serve the built folder (dist/), not the published one: /status.json reaches readers only through a build.
// A run that fails or publishes nothing must still reach them, or the served status goes on saying `ok` while
// every run fails. `emi generate --dist` (the systemd unit, the CI workflow) and the cycle of `emi schedule` and
// `emi up` rebuild after such a run too; a first run that failed has no site to rebuild. A --replay folder holding no
// recording is a usage mistake at start; one whose recording went since fails the run, which records why.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishCycle } from '../generator/cycle.ts';
import { INDEX_FILE, RECORDING_VERSION } from '../generator/sources/recording/recording-files.ts';
import { RunStatus } from '../schemas/status.ts';
import { expectUsageMistake, generateArgs, runEmi } from './ops-cli.ts';
import { simulatedCycle } from './helpers/simulated-run.ts';

const BASE_URL = 'https://emi.example.org';
const AS_OF = '2026-11-20T10:00:00Z';
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-status-served-'));
  // A recording that answers nothing: every venue call of a replay fails, so the run publishes nothing (stale).
  await mkdir(join(dir, 'empty-recording'));
  await writeFile(
    join(dir, 'empty-recording', INDEX_FILE),
    JSON.stringify({ version: RECORDING_VERSION, asOf: '2026-11-20T10:00:00.000Z', entries: [] }),
  );
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const servedStatus = async (dist: string) =>
  RunStatus.parse(JSON.parse(await readFile(join(dist, 'status.json'), 'utf8')));
const replayNothing = ['--source', 'replay', '--replay', 'empty-recording'];

describe('emi generate --dist', () => {
  it('builds the site after a good run, and again after a stale one, whose status it then serves', async () => {
    const good = await runEmi(dir, [...generateArgs(AS_OF), '--dist', 'dist', '--base-url', BASE_URL]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/^generated \d+ files/m);
    expect((await servedStatus(join(dir, 'dist'))).status).toBe('ok');
    const servedBrain = await readFile(join(dir, 'dist', 'api', 'main-brain.php'), 'utf8');

    const stale = await runEmi(dir, [...generateArgs(AS_OF), ...replayNothing, '--dist', 'dist'], {
      EMI_BASE_URL: BASE_URL,
    });
    // The run's own outcome and exit code, as without --dist.
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(
      /^emi: generate stale \(as of \S+\): published nothing: no source delivered a price/m,
    );
    const status = await servedStatus(join(dir, 'dist'));
    expect(status.status).toBe('stale');
    expect(status.last_run.error).toContain('no source delivered a price');
    // The last good data is still what is served, with its own time.
    expect(await readFile(join(dir, 'dist', 'api', 'main-brain.php'), 'utf8')).toBe(servedBrain);
    expect(status.data.generated_at).toBe('2026-11-20T10:00:00.000Z');
  }, 180_000);

  it('builds nothing after a first run that failed, and exits with the run’s failure', async () => {
    const stale = await runEmi(dir, [...generateArgs(AS_OF), ...replayNothing, '--dist', 'dist'], {
      EMI_BASE_URL: BASE_URL,
    });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^emi: generate stale \(as of \S+\): published nothing/m);
    expect(existsSync(join(dir, 'dist'))).toBe(false);
  }, 60_000);

  it('refuses --base-url without --dist, and --dist without a base URL, before any run', async () => {
    const alone = await runEmi(dir, [...generateArgs(AS_OF), '--base-url', BASE_URL]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--base-url is for the build after the run: it goes with --dist');
    const noUrl = await runEmi(dir, [...generateArgs(AS_OF), '--dist', 'dist'], { EMI_BASE_URL: '' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('refusing to build without a base URL');
    expect(existsSync(join(dir, 'site', 'status.json'))).toBe(false);
  }, 60_000);
});

describe('the cycle of emi schedule and emi up', () => {
  it('rebuilds after a stale run, so the served status says so', async () => {
    const flags = simulatedCycle(dir, Date.parse(AS_OF), BASE_URL);
    expect((await publishCycle(flags)).status).toBe('ok');
    const stale = await publishCycle({
      ...flags,
      source: 'replay',
      replay: join(dir, 'empty-recording'),
      asOf: undefined,
    });
    expect(stale.status).toBe('stale');
    expect((await servedStatus(flags.dist)).status).toBe('stale');
  }, 180_000);

  it('records a failed run and rebuilds when the recording it replays is gone since the schedule started', async () => {
    const flags = simulatedCycle(dir, Date.parse(AS_OF), BASE_URL);
    expect((await publishCycle(flags)).status).toBe('ok');
    const gone = join(dir, 'gone-recording'); // an empty folder: its index.json was removed
    await mkdir(gone);
    const failed = await publishCycle({ ...flags, source: 'replay', replay: gone, asOf: undefined });
    expect(failed.status).toBe('failed');
    const lastRun = JSON.parse(await readFile(join(flags.state, 'last-run.json'), 'utf8')) as RunReportLine;
    expect(lastRun).toMatchObject({ status: 'failed', error: expect.stringMatching(/^no recording in /) });
    const served = await servedStatus(flags.dist);
    expect(served.status).toBe('failed');
    expect(served.last_run.error).toMatch(/index\.json is missing/);
  }, 180_000);
});

describe('a --replay folder without a recording', () => {
  it.each([
    ['generate', generateArgs(AS_OF)],
    ['sources check', ['sources', 'check']],
  ])(
    'is a usage mistake for emi %s (exit 2), said before anything is written',
    async (_name, args) => {
      await mkdir(join(dir, 'no-recording'));
      const run = await runEmi(dir, [...args, '--source', 'replay', '--replay', 'no-recording']);
      expectUsageMistake(
        run,
        /^emi: no recording in no-recording: index\.json is missing \(record one with --source live --record\)$/,
      );
      expect(existsSync(join(dir, 'site'))).toBe(false);
      expect(existsSync(join(dir, 'var'))).toBe(false);
    },
    60_000,
  );
});

interface RunReportLine {
  status: string;
  error: string | null;
}
