// A run that publishes nothing (stale: no source delivered a price; failed: it stopped with an error) leaves no row
// in the published history, so a reader of /api/history/ sees a gap it cannot tell from a stopped publisher.
// /status.json names such runs of the last days in `unpublished_runs`: checked on the real `emi`, whose stale run
// is a replay of a recording that answers nothing, and on the pure rule that bounds the list.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildLlmsTxt } from '../generator/discovery/llms-txt.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { unpublishedRuns } from '../generator/publish/status.ts';
import type { RunReport } from '../generator/pipeline.ts';
import { INDEX_FILE, RECORDING_VERSION } from '../generator/sources/recording/recording-files.ts';
import { RunStatus, UNPUBLISHED_RUNS_MAX } from '../schemas/status.ts';
import { generateArgs, runEmi } from './ops-cli.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-unpublished-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const readJson = async (file: string): Promise<unknown> => JSON.parse(await readFile(file, 'utf8'));

describe('/status.json unpublished_runs on the real emi', () => {
  it('names the stale runs between good ones, one stretch per run of them, whose history has no row', async () => {
    const good = async (asOf: string) => expect((await runEmi(dir, generateArgs(asOf))).code).toBe(0);
    // A replay of a recording (of this as-of) that answers nothing: every venue call fails, nothing is published.
    const stale = async (asOf: string) => {
      const recording = `empty-recording-${asOf.slice(11, 16).replace(':', '')}`;
      await mkdir(join(dir, recording));
      await writeFile(
        join(dir, recording, INDEX_FILE),
        JSON.stringify({ version: RECORDING_VERSION, asOf: new Date(asOf).toISOString(), entries: [] }),
      );
      const run = await runEmi(dir, [...generateArgs(asOf), '--source', 'replay', '--replay', recording]);
      expect(run.code, run.stderr).toBe(1);
      return RunStatus.parse(await readJson(join(dir, 'site', 'status.json'))).last_run.started_at;
    };
    await good('2026-11-20T10:00:00Z');
    const first = await stale('2026-11-20T10:01:00Z');
    const second = await stale('2026-11-20T10:02:00Z');
    await good('2026-11-20T10:03:00Z');
    const third = await stale('2026-11-20T10:04:00Z');
    await good('2026-11-20T10:05:00Z');

    const status = RunStatus.parse(await readJson(join(dir, 'site', 'status.json')));
    expect(status.status).toBe('ok');
    const error = expect.stringContaining('no source delivered a price') as unknown as string;
    expect(status.unpublished_runs).toEqual([
      {
        first_started_at: first,
        last_started_at: second,
        first_as_of: '2026-11-20T10:01:00.000Z',
        last_as_of: '2026-11-20T10:02:00.000Z',
        runs: 2,
        status: 'stale',
        error,
      },
      {
        first_started_at: third,
        last_started_at: third,
        first_as_of: '2026-11-20T10:04:00.000Z',
        last_as_of: '2026-11-20T10:04:00.000Z',
        runs: 1,
        status: 'stale',
        error,
      },
    ]);
    // The gaps they explain: the history has the good runs' rows and none of theirs.
    const latest = (await readJson(join(dir, 'site', 'api', 'history', 'main-brain', 'latest.json'))) as {
      rows: { run_at: string }[];
    };
    expect(latest.rows.map((row) => row.run_at)).toEqual([
      '2026-11-20T10:00:00.000Z',
      '2026-11-20T10:03:00.000Z',
      '2026-11-20T10:05:00.000Z',
    ]);
    const validate = await runEmi(dir, ['validate', 'site']);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
  }, 180_000);
});

describe('unpublishedRuns', () => {
  const report = (startedAt: string, status: RunReport['status'], error = 'why'): RunReport => ({
    status,
    mode: 'simulated',
    seed: 42,
    as_of: startedAt,
    started_at: startedAt,
    finished_at: startedAt,
    duration_ms: 0,
    files_written: 0,
    issues: [],
    error: status === 'ok' ? null : error,
  });
  /** The status a run wrote: its own status and the stretches so far. */
  const after = (run: RunReport, previous: RunStatus | null = null) =>
    ({ status: run.status, unpublished_runs: unpublishedRuns(run, previous) }) as RunStatus;
  const stretch = (first: string, last: string, runs: number, status: 'stale' | 'failed' = 'failed') => ({
    first_started_at: first,
    last_started_at: last,
    first_as_of: first,
    last_as_of: last,
    runs,
    status,
    error: 'why',
  });

  it('joins consecutive runs of one status; a good run or another status starts a new stretch', () => {
    let status = after(report('2026-11-20T10:00:00.000Z', 'failed'));
    status = after(report('2026-11-20T10:01:00.000Z', 'failed'), status);
    expect(status.unpublished_runs).toEqual([
      stretch('2026-11-20T10:00:00.000Z', '2026-11-20T10:01:00.000Z', 2),
    ]);
    status = after(report('2026-11-20T10:02:00.000Z', 'stale'), status);
    status = after(report('2026-11-20T10:03:00.000Z', 'degraded'), status);
    status = after(report('2026-11-20T10:04:00.000Z', 'stale', 'the last why'), status);
    status = after(report('2026-11-20T10:05:00.000Z', 'stale'), status);
    expect(status.unpublished_runs).toEqual([
      stretch('2026-11-20T10:00:00.000Z', '2026-11-20T10:01:00.000Z', 2),
      stretch('2026-11-20T10:02:00.000Z', '2026-11-20T10:02:00.000Z', 1, 'stale'),
      stretch('2026-11-20T10:04:00.000Z', '2026-11-20T10:05:00.000Z', 2, 'stale'),
    ]);
  });

  it('a day of failed runs a minute apart is one stretch of 1 440', () => {
    let status: RunStatus | null = null;
    for (let minute = 0; minute < 1440; minute++) {
      status = after(
        report(new Date(Date.parse('2026-11-20T00:00:00Z') + minute * 60_000).toISOString(), 'failed'),
        status,
      );
    }
    expect(status?.unpublished_runs).toEqual([
      stretch('2026-11-20T00:00:00.000Z', '2026-11-20T23:59:00.000Z', 1440),
    ]);
  });

  it('forgets stretches that ended over seven days ago and keeps the newest hundred', () => {
    const old = stretch('2026-11-12T00:00:00.000Z', '2026-11-13T09:59:59.000Z', 5);
    const kept = stretch('2026-11-12T00:00:00.000Z', '2026-11-13T10:00:00.000Z', 5);
    const previous = { status: 'ok', unpublished_runs: [old, kept] } as RunStatus;
    expect(unpublishedRuns(report('2026-11-20T10:00:00.000Z', 'ok'), previous)).toEqual([kept]);

    const many = Array.from({ length: UNPUBLISHED_RUNS_MAX }, (_, i) => {
      const at = new Date(Date.parse('2026-11-20T00:00:00Z') + i * 60_000).toISOString();
      return stretch(at, at, 1);
    });
    const next = unpublishedRuns(report('2026-11-20T10:00:00.000Z', 'failed'), {
      status: 'ok',
      unpublished_runs: many,
    } as RunStatus);
    expect(next).toHaveLength(UNPUBLISHED_RUNS_MAX);
    expect(next[0]).toEqual(many[1]);
    expect(next.at(-1)?.first_started_at).toBe('2026-11-20T10:00:00.000Z');
  });
});

describe('a reader of the history is told where the runs without a row are', () => {
  const BASE_URL = 'https://emi.example.org';
  it('the day and latest files’ rows, as the OpenAPI document describes them, and llms.txt point to unpublished_runs', () => {
    const schemas = (
      buildOpenApiDocument({ baseUrl: BASE_URL }) as {
        components: { schemas: Record<string, { properties: { rows: { description: string } } }> };
      }
    ).components.schemas;
    for (const name of ['HistoryMainBrainDay', 'HistoryStatisticsLatest']) {
      expect(schemas[name]?.properties.rows.description, name).toContain(
        'A run that published nothing has no row: /status.json `unpublished_runs` lists such runs of the last 7 days',
      );
    }
    expect(buildLlmsTxt({ baseUrl: BASE_URL, hasBuyer: false })).toContain(
      'a run that published nothing has no row (/status.json unpublished_runs lists those of the last 7 days)',
    );
  });
});
