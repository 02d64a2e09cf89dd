// A run that publishes nothing (stale: no source delivered a price; failed: it stopped with an error) leaves no row
// in the published history, so a reader of /api/history/ sees a gap it cannot tell from a stopped publisher.
// /status.json names such runs of the last days in `unpublished_runs`: checked on the real `emi`, whose stale run
// is a replay of a recording that answers nothing, and on the pure rule that bounds the list.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { unpublishedRuns } from '../generator/publish/status.ts';
import type { RunReport } from '../generator/pipeline.ts';
import { INDEX_FILE, RECORDING_VERSION } from '../generator/sources/recording/recording-files.ts';
import { RunStatus, UNPUBLISHED_RUNS_MAX } from '../schemas/status.ts';
import type { UnpublishedRun } from '../schemas/status.ts';
import { generateArgs, runEmi } from './ops-cli.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-unpublished-'));
  await mkdir(join(dir, 'empty-recording'));
  await writeFile(
    join(dir, 'empty-recording', INDEX_FILE),
    JSON.stringify({ version: RECORDING_VERSION, asOf: '2026-11-20T10:01:00.000Z', entries: [] }),
  );
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const readJson = async (file: string): Promise<unknown> => JSON.parse(await readFile(file, 'utf8'));

describe('/status.json unpublished_runs on the real emi', () => {
  it('names the stale run between two good ones, whose history has no row for it', async () => {
    const good = (asOf: string) => runEmi(dir, generateArgs(asOf));
    expect((await good('2026-11-20T10:00:00Z')).code).toBe(0);
    const stale = await runEmi(dir, [
      ...generateArgs('2026-11-20T10:01:00Z'),
      '--source',
      'replay',
      '--replay',
      'empty-recording',
    ]);
    expect(stale.code).toBe(1);
    const afterStale = RunStatus.parse(await readJson(join(dir, 'site', 'status.json')));
    expect(afterStale.unpublished_runs).toHaveLength(1);
    expect((await good('2026-11-20T10:02:00Z')).code).toBe(0);

    const status = RunStatus.parse(await readJson(join(dir, 'site', 'status.json')));
    expect(status.status).toBe('ok');
    expect(status.unpublished_runs).toEqual([
      {
        started_at: afterStale.last_run.started_at,
        as_of: '2026-11-20T10:01:00.000Z',
        status: 'stale',
        error: expect.stringContaining('no source delivered a price') as unknown as string,
      },
    ]);
    // The gap it explains: the history has the two good runs' rows and none at 10:01.
    const latest = (await readJson(join(dir, 'site', 'api', 'history', 'main-brain', 'latest.json'))) as {
      rows: { run_at: string }[];
    };
    expect(latest.rows.map((row) => row.run_at)).toEqual([
      '2026-11-20T10:00:00.000Z',
      '2026-11-20T10:02:00.000Z',
    ]);
    const validate = await runEmi(dir, ['validate', 'site']);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
  }, 180_000);
});

describe('unpublishedRuns', () => {
  const report = (startedAt: string, status: RunReport['status']): RunReport => ({
    status,
    mode: 'simulated',
    seed: 42,
    as_of: startedAt,
    started_at: startedAt,
    finished_at: startedAt,
    duration_ms: 0,
    files_written: 0,
    issues: [],
    error: status === 'ok' ? null : 'why',
  });
  const previous = (runs: UnpublishedRun[]) => ({ unpublished_runs: runs }) as RunStatus;
  const entry = (startedAt: string): UnpublishedRun => ({
    started_at: startedAt,
    as_of: startedAt,
    status: 'failed',
    error: 'why',
  });

  it('adds a stale or failed run, and keeps the list through a good one', () => {
    const failed = unpublishedRuns(report('2026-11-20T10:00:00.000Z', 'failed'), null);
    expect(failed).toEqual([entry('2026-11-20T10:00:00.000Z')]);
    const stale = unpublishedRuns(report('2026-11-20T10:01:00.000Z', 'stale'), previous(failed));
    expect(stale.map((run) => run.status)).toEqual(['failed', 'stale']);
    expect(unpublishedRuns(report('2026-11-20T10:02:00.000Z', 'degraded'), previous(stale))).toEqual(stale);
  });

  it('forgets runs older than seven days and keeps the newest hundred', () => {
    const old = entry('2026-11-13T09:59:59.000Z');
    const kept = entry('2026-11-13T10:00:00.000Z');
    expect(unpublishedRuns(report('2026-11-20T10:00:00.000Z', 'ok'), previous([old, kept]))).toEqual([kept]);

    const many = Array.from({ length: UNPUBLISHED_RUNS_MAX }, (_, i) =>
      entry(new Date(Date.parse('2026-11-20T00:00:00Z') + i * 60_000).toISOString()),
    );
    const next = unpublishedRuns(report('2026-11-20T10:00:00.000Z', 'failed'), previous(many));
    expect(next).toHaveLength(UNPUBLISHED_RUNS_MAX);
    expect(next[0]).toEqual(many[1]);
    expect(next.at(-1)?.started_at).toBe('2026-11-20T10:00:00.000Z');
  });
});
