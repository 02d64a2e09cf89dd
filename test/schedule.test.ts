import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSchedule } from '../generator/schedule.ts';
import { tempDir } from './helpers/temp-dir.ts';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('startSchedule', () => {
  it('never runs two jobs at once, skips ticks while busy, and stop() waits for the run in flight', async () => {
    let running = 0;
    let maxRunning = 0;
    let started = 0;
    let finished = 0;
    let skipped = 0;
    const schedule = startSchedule(
      '* * * * * *', // every second
      async () => {
        started += 1;
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(2_200); // longer than two ticks
        running -= 1;
        finished += 1;
      },
      () => {
        skipped += 1;
      },
    );
    await sleep(3_500);
    await schedule.stop();
    expect(maxRunning).toBe(1);
    expect(skipped).toBeGreaterThanOrEqual(1);
    expect(running).toBe(0); // stop() resolved only after the run in flight ended
    expect(finished).toBe(started);
    const after = finished;
    await sleep(1_500);
    expect(finished).toBe(after); // nothing fires after stop
  });

  it('rejects an invalid cron expression', () => {
    expect(() => startSchedule('every minute', async () => {})).toThrow(/cron/);
  });
});

describe('emi schedule', () => {
  it('regenerates on its schedule and stops cleanly on SIGTERM', async () => {
    const dir = await tempDir('emi-schedule-');
    const child = spawn(
      process.execPath,
      [
        join(import.meta.dirname, '..', 'bin', 'emi.js'),
        'schedule',
        '--cron',
        '* * * * * *',
        '--out',
        join(dir, 'site'),
        '--paid',
        join(dir, 'paid'),
        '--state',
        join(dir, 'var'),
        '--dist',
        join(dir, 'dist'),
        '--base-url', // a scheduled build must say where it will be served (issue 16)
        'http://127.0.0.1:8080',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 40_000;
    // The cycle's build is quiet (no Eleventy report): wait for what it builds.
    const built = join(dir, 'dist', 'api', 'market-regime.php');
    while (!existsSync(built) && Date.now() < deadline) await sleep(200);
    expect(output).toMatch(/generated \d+ files/);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(0);
    expect(output).toMatch(
      /SIGTERM: stopping \(a run still collecting or staging is recorded as interrupted\)/,
    );
    expect(existsSync(built)).toBe(true);
  }, 60_000);
});
