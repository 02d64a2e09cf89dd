// A run that meets the arena store busy: another run's lock (refused, leaving that run's records alone), or another
// process's transaction (failed, naming the store and what to do).
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import type { PipelineOptions } from '../generator/pipeline.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

const AS_OF = Date.parse('2026-11-21T12:00:00Z');

const records = async (options: PipelineOptions) => ({
  lastRun: JSON.parse(await readFile(join(options.stateDir, 'last-run.json'), 'utf8')) as {
    status: string;
    as_of: string;
    error: string | null;
  },
  status: JSON.parse(await readFile(join(options.outDir, 'status.json'), 'utf8')) as {
    status: string;
    last_run: { error: string | null };
  },
});

async function published(): Promise<PipelineOptions> {
  const dir = await tempDir('emi-store-busy-');
  const options = simulatedRun(dir, AS_OF);
  expect((await runPipeline(options)).status).toBe('ok');
  return options;
}

describe('a run that finds the arena store busy', () => {
  it('refused by a live run holding the lock, leaves last-run.json and status.json to that run', async () => {
    const options = await published();
    const before = await records(options);
    // A live run (this very process, under another run's name) holds the lock, its heartbeat fresh.
    const db = new Database(join(options.stateDir, 'arena.sqlite'));
    db.prepare('INSERT INTO run_lock (id, owner, acquired_at_ms, expires_at_ms) VALUES (1, ?, ?, ?)').run(
      `${os.hostname()}:${process.pid}:0123abcd`,
      Date.now(),
      Date.now() + 60_000,
    );
    db.close();
    const report = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
    expect(report.status).toBe('failed');
    expect(report.error).toMatch(/another generator run .* holds the arena store lock/);
    // The holder writes its own outcome: a refused run must not overwrite it (nor say `failed` for the site).
    expect(await records(options)).toEqual(before);
  });

  it('held by another process, fails naming the store and what to do, and the next run publishes', async () => {
    const options = await published();
    const holder = new Database(join(options.stateDir, 'arena.sqlite'));
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const report = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
      expect(report.status).toBe('failed');
      expect(report.error).toMatch(
        /^the arena store .*arena\.sqlite could not be used \(database is locked, SQLITE_BUSY\): another process holds it locked/,
      );
      // The public status names the store from its folder on, never the server's absolute path.
      const publicLine = report.error!.replaceAll(`${dirname(options.stateDir)}/`, '');
      expect(publicLine).toContain(`${basename(options.stateDir)}/arena.sqlite`);
      expect((await records(options)).status.last_run.error).toBe(publicLine);
    } finally {
      holder.exec('COMMIT');
      holder.close();
    }
    expect((await runPipeline({ ...options, asOf: AS_OF + 7_200_000 })).status).toBe('ok');
  }, 30_000);
});
