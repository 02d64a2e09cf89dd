// `emi backfill --as-of <a time after the clock>` replayed rounds that had not ended: the arena published outcomes and
// lessons of rounds still ahead ("price moved" for tomorrow), the history rows of hours not yet begun, and a later
// `emi arena vote` for such a round was refused as "already resolved". The command refuses such an --as-of before
// anything is written, and the backfill itself never replays a round ending after the clock, whoever calls it.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { backfillAsOfProblem, backfillSimulated } from '../generator/backfill-command.ts';
import type { BrainCall } from '../generator/engines/arena/types.ts';
import { backfill } from '../generator/state/backfill.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { HOUR, MINUTE, T0, tempStore } from './arena-fixtures.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { runEmi } from './ops-cli.ts';

const open: ArenaStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const priceAt = async (_asset: string, ms: number) => 100 * (1 + (Math.floor(ms / HOUR) % 3) / 100);
const brainCallAt = async (): Promise<BrainCall[]> =>
  TRACKED_ASSETS.map((asset) => ({ asset, bias: 'bullish', confidence: 65, price: null }));

/** The end (ms) of every round the store holds an outcome for. */
const outcomeEnds = (db: Database.Database): number[] =>
  (
    db
      .prepare(
        'SELECT r.end_ms AS end FROM outcomes o JOIN rounds r ON r.round_id = o.round_id ORDER BY r.end_ms',
      )
      .all() as { end: number }[]
  ).map((row) => row.end);

describe('backfillAsOfProblem', () => {
  const now = Date.parse('2026-11-27T19:33:00Z');

  it('accepts the clock and any time before it', () => {
    expect(backfillAsOfProblem(now, now)).toBeNull();
    expect(backfillAsOfProblem(now - 3 * HOUR, now)).toBeNull();
  });

  it('refuses a time after the clock, naming both and what --as-of means', () => {
    expect(backfillAsOfProblem(now + 1, now)).toBe(
      "2026-11-27T19:33:00.001Z is after this machine's clock (2026-11-27T19:33:00.000Z): emi backfill replays the " +
        'rounds that ended by --as-of, and no round after the clock has ended yet; leave --as-of out to replay up ' +
        'to now',
    );
  });
});

describe('the backfill engine', () => {
  it('replays no round ending after the clock, even for an --as-of past it', async () => {
    const s = tempStore();
    open.push(s);
    const now = T0 + 90 * MINUTE; // inside the round of T0 + 1 h: the last ended round is T0's
    const result = await backfill(s, { days: 1, asOf: T0 + 5 * HOUR, seed: 3, brainCallAt, priceAt, now });
    // From 24 h before the as-of (T0 - 19 h) to the round ending at T0 + 1 h: 20 rounds, none later.
    expect(result).toEqual({ rounds: 20, resolved: 20, voided: 0, skipped: 0 });
    const ends = outcomeEnds(s.db);
    expect(ends).toHaveLength(20);
    expect(ends.at(-1)).toBe(T0 + HOUR);
    const calls = s.db.prepare('SELECT MAX(r.end_ms) AS end FROM rounds r').get() as { end: number };
    expect(calls.end).toBeLessThanOrEqual(now);
  });

  it('still replays every ended round up to an --as-of before the clock', async () => {
    const s = tempStore();
    open.push(s);
    const result = await backfill(s, {
      days: 1,
      asOf: T0,
      seed: 3,
      brainCallAt,
      priceAt,
      now: T0 + 5 * HOUR,
    });
    expect(result).toEqual({ rounds: 24, resolved: 24, voided: 0, skipped: 0 });
    expect(outcomeEnds(s.db).at(-1)).toBe(T0);
  });
});

describe('backfillSimulated with an --as-of after the clock (a caller other than the CLI)', () => {
  it('writes no outcome and no history row after the clock', async () => {
    const dir = await tempDir('emi-backfill-ahead-');
    const before = Date.now();
    await backfillSimulated({
      stateDir: join(dir, 'var'),
      outDir: join(dir, 'site'),
      days: 1,
      seed: 42,
      asOf: before + 3 * HOUR,
    });
    const after = Date.now();
    const db = new Database(join(dir, 'var', 'arena.sqlite'), { readonly: true });
    try {
      expect(outcomeEnds(db).length).toBeGreaterThan(0);
      expect(Math.max(...outcomeEnds(db))).toBeLessThanOrEqual(after);
    } finally {
      db.close();
    }
    const folder = join(dir, 'site', 'api', 'history', 'market-regime');
    const days = (await readdir(folder)).filter((name) => /^\d{4}-\d{2}-\d{2}\.json$/.test(name));
    const runAts: number[] = [];
    for (const day of days) {
      const file = JSON.parse(await readFile(join(folder, day), 'utf8')) as { rows: { run_at: string }[] };
      runAts.push(...file.rows.map((row) => Date.parse(row.run_at)));
    }
    expect(runAts.length).toBeGreaterThan(0);
    expect(Math.max(...runAts)).toBeLessThanOrEqual(after);
  }, 60_000);
});

describe('emi backfill --as-of after the clock', () => {
  it('is refused in one line saying what --as-of means, exit 2, nothing written', async () => {
    const dir = await tempDir('emi-backfill-future-');
    const ahead = new Date(Date.now() + 2 * HOUR).toISOString();
    const run = await runEmi(dir, [
      'backfill',
      '--days',
      '1',
      '--as-of',
      ahead,
      '--state',
      'var',
      '--out',
      'site',
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.split('\n').filter((l) => l && !l.includes('build/ is out of date'));
    const [first, ...rest] = lines;
    expect(first).toMatch(
      new RegExp(
        `^error: option '--as-of <iso>' argument '${ahead.replace(/\./g, '\\.')}' is invalid\\. ` +
          `${ahead.replace(/\./g, '\\.')} is after this machine's clock \\(.*\\): emi backfill replays the rounds ` +
          'that ended by --as-of, and no round after the clock has ended yet; leave --as-of out to replay up to now$',
      ),
    );
    expect(rest).toEqual(['(run with --help for usage)']);
    expect(existsSync(join(dir, 'var'))).toBe(false);
    expect(existsSync(join(dir, 'site'))).toBe(false);
  }, 60_000);

  it('a --as-of before the clock still replays', async () => {
    const dir = await tempDir('emi-backfill-past-');
    const past = new Date(Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR).toISOString(); // a round's end
    const run = await runEmi(dir, ['backfill', '--days', '1', '--as-of', past, '--state', 'var', '--no-out']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^backfill: 24 rounds in the window \(/);
  }, 60_000);
});
