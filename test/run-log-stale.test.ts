// A run that publishes nothing leaves the previous files in place, as a failed one does, and must be counted with
// them: the audit ran ok, stale (every live venue unreachable past EMI_COLLECT_DEADLINE_SECONDS), ok, and saw
// /api/statistics.php `generator_runs` and `emi arena status` say {total: 2, ok: 2, failed: 0}: a day-long venue
// outage showed as zero failures. The same holds for a run stopped while it was still collecting.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { venueUrlEnvName } from '../generator/sources/config.ts';
import { VENUE_IDS } from '../generator/sources/venues.ts';
import { meaningOf } from '../schemas/field-meanings.ts';
import { freePort } from './free-port.ts';
import { errorLines, generateArgs, runEmi, startEmi } from './ops-cli.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const LIVE = ['generate', '--source', 'live', '--out', 'site', '--paid', 'paid', '--state', 'var'];

/** Every venue routed to a port nobody listens on (as EMI_VENUE_URL_* would route them to a mirror that is down). */
const deadVenues = async (): Promise<Record<string, string>> => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  return Object.fromEntries(VENUE_IDS.map((venue) => [venueUrlEnvName(venue), `${dead}/${venue}`]));
};

const minute = (offset: number): string =>
  new Date(Math.floor(Date.now() / 60_000) * 60_000 + offset * 60_000).toISOString();

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-runlog-stale-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function okRun(dir: string, asOf: string): Promise<void> {
  const run = await runEmi(dir, generateArgs(asOf));
  expect(run.code, run.stderr).toBe(0);
}

const runLog = (dir: string) => {
  const db = new Database(join(dir, 'var/arena.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT status, detail, arena_step FROM run_log ORDER BY id').all() as Array<{
      status: string;
      detail: string | null;
      arena_step: number;
    }>;
  } finally {
    db.close();
  }
};

const generatorRuns = async (dir: string) =>
  (
    JSON.parse(await readFile(join(dir, 'site/api/statistics.php'), 'utf8')) as {
      api_ecosystem: { generator_runs: Record<string, unknown> };
    }
  ).api_ecosystem.generator_runs;

describe('runs that publish nothing are counted', () => {
  it('a stale run (every venue down past the collection deadline) is counted failed, between two ok runs', async () => {
    const dir = await folder();
    await okRun(dir, minute(-20));
    const stale = await runEmi(dir, LIVE, { ...(await deadVenues()), EMI_COLLECT_DEADLINE_SECONDS: '3' });
    expect(stale.code).toBe(1);
    // One line, and nothing else: no Node warning about the listeners every venue call puts on the run's deadline.
    expect(errorLines(stale)).toEqual([
      expect.stringMatching(/^emi: generate stale \(as of \S+\): published nothing: /),
    ]);
    expect(JSON.parse(await readFile(join(dir, 'var/last-run.json'), 'utf8'))).toMatchObject({
      status: 'stale',
    });
    await okRun(dir, minute(-19));

    expect(runLog(dir)).toEqual([
      expect.objectContaining({ status: 'ok' }),
      {
        status: 'failed',
        detail: expect.stringMatching(/^stale: .*source delivered a price/),
        arena_step: 0,
      },
      expect.objectContaining({ status: 'ok' }),
    ]);
    expect(await generatorRuns(dir)).toMatchObject({ total: 3, ok: 2, failed: 1 });
    const status = await runEmi(dir, ['arena', 'status']);
    expect(status.stdout).toMatch(/^generator runs: 2 ok, 1 failed$/m);
    // The published meaning says what the count holds.
    // ("stale" is kept for data older than its interval: discovery-freshness-wording.test.ts.)
    expect(meaningOf('generator_runs', 'failed')).toMatch(/ended without a price/);
  }, 120_000);

  it('a run stopped by SIGTERM while collecting is counted failed, saying so', async () => {
    const dir = await folder();
    await okRun(dir, minute(-20));
    const run = startEmi(dir, LIVE, { ...(await deadVenues()), EMI_COLLECT_DEADLINE_SECONDS: '60' });
    await new Promise((done) => setTimeout(done, 1500)); // collecting: the venues refuse, their retries wait
    run.stop();
    const ended = await run.done;
    expect(ended.signal ?? ended.code).toBeTruthy();
    expect(JSON.parse(await readFile(join(dir, 'var/last-run.json'), 'utf8'))).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/interrupted by SIGTERM while collecting/),
    });
    expect(runLog(dir)).toEqual([
      expect.objectContaining({ status: 'ok' }),
      { status: 'failed', detail: expect.stringMatching(/interrupted by SIGTERM/), arena_step: 0 },
    ]);
    await okRun(dir, minute(-19));
    expect(await generatorRuns(dir)).toMatchObject({ total: 3, ok: 2, failed: 1 });
  }, 120_000);
});
