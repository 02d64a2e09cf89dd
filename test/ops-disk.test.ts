// A full disk and a read-only output folder: the run reports `failed` with the cause, the last good generation
// stays served, and `last-run.json` never says `ok` for a run whose files or history did not all land.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generationsTidied } from '../generator/publish/generations.ts';
import { validatePublicOutput } from '../generator/publish/validate-output.ts';
import { runPipeline } from '../generator/pipeline.ts';
import type { PipelineOptions } from '../generator/pipeline.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { runEmi } from './ops-cli.ts';
import { fillDisk, tmpfsMounter } from './helpers/tmpfs.ts';
import { tempDir } from './helpers/temp-dir.ts';

const AS_OF = Date.parse('2026-11-21T12:00:00Z');

const { allowed: canMount, mount: mountTmpfs } = tmpfsMounter();
if (!canMount) console.warn('ops-disk: skipped, mounting a tmpfs is not permitted here (run as root)');

const servedAsOf = async (options: PipelineOptions) =>
  (JSON.parse(await readFile(join(options.outDir, 'api/market-regime.php'), 'utf8')) as { updated: string })
    .updated;
const lastRun = async (options: PipelineOptions) =>
  JSON.parse(await readFile(join(options.stateDir, 'last-run.json'), 'utf8')) as {
    status: string;
    error: string | null;
    as_of: string;
  };

const lastHistoryRow = async (options: PipelineOptions) =>
  (
    JSON.parse(await readFile(join(options.outDir, 'api/history/market-regime/latest.json'), 'utf8')) as {
      rows: Array<{ run_at: string }>;
    }
  ).rows.at(-1)?.run_at;

describe.skipIf(!canMount)('a full file system', () => {
  it('gives failed with the cause, or ok only when everything landed; the last good stays served', async () => {
    const dir = await tempDir('emi-full-', 'file');
    expect(mountTmpfs(dir, '12m')).toBe(true);
    const options = simulatedRun(dir, AS_OF);
    expect((await runPipeline(options)).status).toBe('ok');
    let failures = 0;
    // Leave less and less room, so that the disk fills at a different step each time.
    for (const [index, leave] of [262_144, 65_536, 16_384, 4_096, 0, 0].entries()) {
      const asOf = AS_OF + (index + 1) * 3_600_000;
      const before = await servedAsOf(options);
      // The last run's superseded generation is removed in the background: fill only once it is gone, so that the
      // room left is the room the next run meets.
      await generationsTidied();
      await fillDisk(dir, leave);
      const report = await runPipeline({ ...options, asOf });
      await rm(join(dir, 'filler'), { force: true });
      const recorded = await lastRun(options);
      expect(recorded.status).toBe(report.status);
      const status = JSON.parse(await readFile(join(options.outDir, 'status.json'), 'utf8')) as {
        status: string;
      };
      expect(status.status).toBe(report.status);
      if (report.status === 'ok') {
        expect(await servedAsOf(options)).toBe(new Date(asOf).toISOString());
        const history = JSON.parse(await readFile(join(options.stateDir, 'run-history.json'), 'utf8')) as {
          runs: Array<{ generated_at: string }>;
        };
        expect(history.runs.at(-1)?.generated_at).toBe(new Date(asOf).toISOString());
        // The published history, part of the generation, has this run's row as its last.
        expect(await lastHistoryRow(options)).toBe(new Date(asOf).toISOString());
      } else {
        failures += 1;
        expect(report.status).toBe('failed');
        expect(report.error).toMatch(/ENOSPC|no space|disk is full|disk I\/O error/i);
        expect(await servedAsOf(options)).toBe(before);
        expect(await lastHistoryRow(options)).toBe(before); // never a history row without its files
      }
    }
    expect(failures).toBeGreaterThan(0);
    // With room again, the next run publishes.
    expect((await runPipeline({ ...options, asOf: AS_OF + 24 * 3_600_000 })).status).toBe('ok');
  }, 120_000);
});

describe.skipIf(!canMount)('a read-only output folder', () => {
  it('gives failed with the cause before anything is written, and the last good stays served', async () => {
    const dir = await tempDir('emi-ro-', 'file');
    const site = join(dir, 'site');
    await mkdir(site);
    expect(mountTmpfs(site, '1m')).toBe(true);
    const options = simulatedRun(dir, AS_OF, { outDir: site });
    expect((await runPipeline(options)).status).toBe('ok');
    execFileSync('mount', ['-o', 'remount,ro', site]);
    const report = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
    expect(report.status).toBe('failed');
    expect(report.error).toMatch(/output folder .* is not writable/);
    expect((await lastRun(options)).status).toBe('failed');
    expect(await servedAsOf(options)).toBe('2026-11-21T12:00:00.000Z');
  }, 120_000);
});

describe.skipIf(!canMount)('a full state folder (its own file system)', () => {
  it('fails naming the arena store and saying to free space; the next run publishes once there is room', async () => {
    const dir = await tempDir('emi-full-state-', 'file');
    const state = join(dir, 'var');
    await mkdir(state);
    expect(mountTmpfs(state, '4m')).toBe(true);
    const options = simulatedRun(dir, AS_OF);
    expect((await runPipeline(options)).status).toBe('ok');
    await generationsTidied();
    await fillDisk(state, 0);
    const report = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
    await rm(join(state, 'filler'), { force: true });
    expect(report.status).toBe('failed');
    // SQLite says "disk I/O error" on a full tmpfs: the line must say which file and what to check.
    expect(report.error).toMatch(
      /^the arena store .*arena\.sqlite could not be used \(.+\): check the free space/,
    );
    expect(await servedAsOf(options)).toBe('2026-11-21T12:00:00.000Z');
    expect((await runPipeline({ ...options, asOf: AS_OF + 7_200_000 })).status).toBe('ok');
  }, 120_000);
});

describe.skipIf(!canMount)('emi build on a full file system', () => {
  it('fails in one line with the cause, the last good site stays served, and the next build cleans up', async () => {
    const dir = await tempDir('emi-full-build-', 'file');
    expect((await runPipeline(simulatedRun(dir, AS_OF))).status).toBe('ok');
    const disk = join(dir, 'disk');
    await mkdir(disk);
    expect(mountTmpfs(disk, '24m')).toBe(true);
    const build = [
      'build',
      '--published',
      'site',
      '--out',
      'disk/dist',
      '--base-url',
      'http://127.0.0.1:8080',
    ];
    const first = await runEmi(dir, build);
    expect(first.code, first.stderr).toBe(0);
    const index = await readFile(join(disk, 'dist/index.html'), 'utf8');
    // Less and less room, so that the disk fills while Eleventy copies files and while it writes pages.
    for (const leave of [8_000_000, 4_000_000, 2_000_000, 200_000]) {
      await fillDisk(disk, leave);
      const failed = await runEmi(dir, build);
      await rm(join(disk, 'filler'), { force: true });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^emi: ENOSPC: no space left on device/m);
      expect(failed.stderr).not.toMatch(/^\s+at |^Node\.js v/m); // no crash with a stack trace
      expect(await readFile(join(disk, 'dist/index.html'), 'utf8')).toBe(index);
      const served = await validatePublicOutput(join(disk, 'dist'));
      expect(served.filter((check) => !check.ok)).toEqual([]);
    }
    const next = await runEmi(dir, build);
    expect(next.code, next.stderr).toBe(0);
    const store = await readdir(join(disk, '.dist.generations'));
    // history-passed.json: the record of the history versions a build checked (generator/site/history-check.ts).
    expect(store.filter((name) => !/^(current|g-\d+-[0-9a-f]+|history-passed\.json)$/.test(name))).toEqual(
      [],
    );
  }, 240_000);
});
