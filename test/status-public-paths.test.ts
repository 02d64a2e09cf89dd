// The public /status.json names no server path: its errors show paths under the working folder relative to it,
// under the state or output folders from the folder's own name on, and any other as its base name; the local last-run.json keeps the full line.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicError, recordBuildFailure, runStatus } from '../generator/publish/status.ts';

/** A simulated run's report of 2026-11-27T20:00Z, with `over` on top. */
const runReport = (over: Pick<RunReport, 'status' | 'files_written' | 'error'>): RunReport => ({
  mode: 'simulated',
  seed: 1,
  as_of: '2026-11-27T20:00:00.000Z',
  started_at: '2026-11-27T20:00:00.000Z',
  finished_at: '2026-11-27T20:00:01.000Z',
  duration_ms: 1000,
  issues: [],
  ...over,
});
import type { RunReport } from '../generator/pipeline.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-status-paths-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('errors in the public status', () => {
  it('shows paths relative to the known folders and others as their base name', () => {
    const line =
      `the arena store ${process.cwd()}/var/arena.sqlite is damaged: see /home/someone/deep/emi/notes.txt, ` +
      `and ${join(dir, 'state')}/last-run.json.`;
    expect(publicError(line, [join(dir, 'state')])).toBe(
      'the arena store var/arena.sqlite is damaged: see notes.txt, and state/last-run.json.',
    );
  });

  it('leaves a line without absolute paths as it is (URLs, relative paths)', () => {
    const line = 'binance: HTTP 503 from https://api.example.org/v3/ticker (see var/run.log)';
    expect(publicError(line)).toBe(line);
  });

  it('is applied to last_run.error by runStatus', () => {
    const report = runReport({
      status: 'failed',
      files_written: 0,
      error: `cannot write /home/someone/private/site/api/x.json`,
    });
    const status = runStatus(report, null, null, null);
    expect(status.last_run.error).toBe('cannot write x.json');
    expect(status.unpublished_runs?.at(-1)?.error).toBe('cannot write x.json');
  });

  it('is applied to build.error in status.json, never to last-run.json', async () => {
    const published = join(dir, 'published');
    const state = join(dir, 'var');
    await mkdir(published, { recursive: true });
    await mkdir(state, { recursive: true });
    const status = runStatus(
      runReport({ status: 'ok', files_written: 3, error: null }),
      null,
      { generatedAt: Date.parse('2026-11-27T20:00:00Z'), nextUpdateDue: Date.parse('2026-11-27T20:01:00Z') },
      null,
    );
    await writeFile(join(published, 'status.json'), JSON.stringify(status));
    await writeFile(join(state, 'last-run.json'), JSON.stringify({ status: 'ok' }));
    const error = new Error(
      `Cannot find module '/home/someone/checkout/site/docs/x.js' (in ${state}/arena.sqlite)`,
    );
    await recordBuildFailure({ published, dist: join(dir, 'dist'), state }, error);
    const publicStatus = JSON.parse(await readFile(join(published, 'status.json'), 'utf8')) as {
      build: { error: string };
    };
    expect(publicStatus.build.error).toBe("Cannot find module 'x.js' (in var/arena.sqlite)");
    const local = JSON.parse(await readFile(join(state, 'last-run.json'), 'utf8')) as {
      build: { error: string };
    };
    expect(local.build.error).toBe(error.message);
  });
});
