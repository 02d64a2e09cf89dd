// A run describes its own time, and the arena files are read from the whole store: a run dated before the newest
// one on record would publish records made after its own time and record calls and outcomes after the fact. The
// audit: runs at 12:01 ... 23:01 on one --state, then `emi generate --as-of 2026-11-26T21:05:00Z` published
// lessons_total 824 and last_lesson_at 23:01 (the first 21:05 run: 822, 21:01), and runs at 15:05 and 16:05 after
// the later ones gave ETH-20261126T15Z a call recorded at 15:05 and an outcome, counted as not replayed.
// `emi generate` refuses such an --as-of before writing anything; a run of the clock's time (a clock stepped back)
// is not refused, and records nothing.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { aheadOfClock } from '../generator/cli-options.ts';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { newestSteppedRunAt, pastAsOfProblem } from '../generator/state/run-log.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { runArenaStep } from '../generator/state/step.ts';
import { callsFor, HOUR, MINUTE, pricesAll, tempStore, tempStorePath } from './arena-fixtures.ts';
import { tempDir } from './helpers/temp-dir.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

const DAY = Date.UTC(2026, 10, 26);
const at = (hour: number, minute: number) => DAY + hour * HOUR + minute * MINUTE;

/** A simulated run at `asOf` seeing every asset at 100; `notice` hears what the step says. */
const step = (s: ArenaStore, asOf: number, { notice }: { notice?: (line: string) => void } = {}) =>
  runArenaStep({
    store: s,
    asOf,
    clock: { asOf, generatedAt: asOf, nextUpdateDue: asOf + MINUTE },
    mode: 'simulated',
    seed: 7,
    brainCalls: callsFor('bullish', 60, 100),
    prices: pricesAll(100),
    ...(notice ? { notice } : {}),
  });

const countOf = (s: ArenaStore, table: string): number =>
  (s.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

/** What a run could have written to the arena, row counts by table. */
const records = (s: ArenaStore) =>
  Object.fromEntries(['brain_predictions', 'outcomes', 'lessons', 'votes'].map((t) => [t, countOf(s, t)]));

describe('an arena step dated before the newest run on record', () => {
  it('records no call, vote or outcome, logs itself as no arena step, and says so', () => {
    const s = track(tempStore());
    // Hourly runs at :01, 12:01 to 17:01, but none in the 15:00 round (ETH on this day).
    for (const hour of [12, 13, 14, 16, 17]) step(s, at(hour, 1));
    const late = roundAt(at(15, 5));
    expect(s.db.prepare('SELECT 1 FROM brain_predictions WHERE round_id = ?').get(late.id)).toBeUndefined();
    const before = records(s);
    const said: string[] = [];

    const bodies = step(s, at(15, 5), { notice: (line: string) => said.push(line) });

    // Before: the 15:05 run recorded the 15:00 round's call at 15:05, and its synthetic crowd.
    expect(s.db.prepare('SELECT 1 FROM brain_predictions WHERE round_id = ?').get(late.id)).toBeUndefined();
    expect(records(s)).toEqual(before);
    expect(said).toEqual([
      expect.stringContaining('before the newest run on record (2026-11-26T17:01:00.000Z)'),
    ]);
    const row = s.db.prepare('SELECT as_of_ms, arena_step FROM run_log ORDER BY id DESC LIMIT 1').get();
    expect(row).toEqual({ as_of_ms: at(15, 5), arena_step: 0 });
    // Its files are still built (from the store as it is): the run publishes.
    expect(bodies.statistics.main_brain.recorded_calls).toBe(before.brain_predictions);

    // A later run ends nothing of the sort: the 16:05 run after the 17:01 one resolves nothing either.
    step(s, at(16, 5), { notice: () => undefined });
    expect(records(s)).toEqual(before);
    expect(newestSteppedRunAt(s.db)).toBe(at(17, 1));
  });

  it('runs as before at the newest run time and after it', () => {
    const s = track(tempStore());
    step(s, at(12, 1));
    const said: string[] = [];
    step(s, at(12, 1), { notice: (line: string) => said.push(line) });
    step(s, at(13, 1), { notice: (line: string) => said.push(line) });
    expect(said).toEqual([]);
    expect(countOf(s, 'outcomes')).toBe(1); // the 12:00 round, resolved by the 13:01 run
    expect(newestSteppedRunAt(s.db)).toBe(at(13, 1));
  });
});

describe('pastAsOfProblem', () => {
  it('names the newest run and the remedy for a time before it; nothing for a missing store, that time or later', () => {
    const s = track(tempStore());
    step(s, at(23, 1));
    const file = s.path;
    s.close();
    expect(pastAsOfProblem(file, at(21, 5))).toBe(
      `the run would describe 2026-11-26T21:05:00.000Z, before the newest run on record in ${file} ` +
        '(2026-11-26T23:01:00.000Z): its arena files would count records made after its own time; to replay the ' +
        'past, give a fresh --state folder',
    );
    expect(pastAsOfProblem(file, at(23, 1))).toBeNull();
    expect(pastAsOfProblem(file, at(23, 2))).toBeNull();
    expect(pastAsOfProblem(tempStorePath(), at(21, 5))).toBeNull();
  });
});

interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');

/**
 * `emi <command>` (simulated) at `asOf` on the folders under `root`, without this machine's EMI_* variables; killed
 * after 30 s (an `emi up` that was not refused keeps serving).
 */
function emi(root: string, command: string[], asOf: string): Promise<Finished> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')));
  const args = [...command, '--as-of', asOf, '--state', 'state', '--out', 'site', '--paid', 'paid'];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [EMI, ...args],
      { cwd: root, env, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr });
      },
    );
  });
}

const generate = (root: string, asOf: string) => emi(root, ['generate'], asOf);

const storeRows = (root: string) => {
  const db = new Database(join(root, 'state', 'arena.sqlite'), { readonly: true });
  try {
    const n = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { runs: n('run_log'), calls: n('brain_predictions'), outcomes: n('outcomes'), votes: n('votes') };
  } finally {
    db.close();
  }
};

/** Whether each run on record wrote to the arena (run_log.arena_step), oldest first. */
const arenaSteps = (root: string): number[] => {
  const db = new Database(join(root, 'state', 'arena.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('SELECT arena_step FROM run_log ORDER BY id').all() as Array<{
      arena_step: number;
    }>;
    return rows.map((row) => row.arena_step);
  } finally {
    db.close();
  }
};

describe('emi generate --as-of before the newest run on record', () => {
  it('is refused with one line and exit 2 before anything is written; the same time again runs', async () => {
    const root = await tempDir('emi-asof-');
    const first = await generate(root, '2026-11-26T23:01:00Z');
    expect(first.code, first.stderr).toBe(0);
    const statistics = join(root, 'site', 'api', 'statistics.php');
    const published = readFileSync(statistics, 'utf8');
    const rows = storeRows(root);

    const past = await generate(root, '2026-11-26T21:05:00Z');

    expect(past.code, past.stderr).toBe(2);
    expect(past.stdout).toBe('');
    const lines = past.stderr.split('\n').filter((l) => l && !l.includes('build/ is out of date'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^emi: the run would describe 2026-11-26T21:05:00\.000Z, before the newest run on record in .*arena\.sqlite \(2026-11-26T23:01:00\.000Z\): .*give a fresh --state folder$/,
      ),
    ]);
    expect(storeRows(root)).toEqual(rows);
    expect(readFileSync(statistics, 'utf8')).toBe(published);

    const again = await generate(root, '2026-11-26T23:01:00Z');
    expect(again.code, again.stderr).toBe(0);
  }, 60_000);

  it('is refused by emi up too, before its backfill or its server starts', async () => {
    const root = await tempDir('emi-asof-up-');
    expect((await generate(root, '2026-11-26T23:01:00Z')).code).toBe(0);
    const rows = storeRows(root);
    const up = ['up', '--dist', 'dist', '--port', '19661', '--backfill-days', '1'];

    const past = await emi(root, up, '2026-11-26T21:05:00Z');

    expect(past.code, past.stderr).toBe(2);
    expect(past.stdout).toBe('');
    const lines = past.stderr.split('\n').filter((l) => l && !l.includes('build/ is out of date'));
    expect(lines).toEqual([
      expect.stringMatching(/^emi: the run would describe 2026-11-26T21:05:00\.000Z, before/),
    ]);
    expect(storeRows(root)).toEqual(rows);
  }, 60_000);
});

describe('an --as-of ahead of the clock', () => {
  // Whole minutes, as an operator types them; three hours keeps it clear of the clock's own minute.
  const hoursAhead = (hours: number) =>
    new Date(Math.ceil(Date.now() / MINUTE) * MINUTE + hours * HOUR).toISOString();

  it("is said in words once past the start of the clock's next minute, which the next scheduled run describes", () => {
    const now = Date.UTC(2026, 10, 27, 13, 0, 20);
    const nextMinute = Date.UTC(2026, 10, 27, 13, 1);
    expect(aheadOfClock(now - HOUR, now)).toBeNull();
    expect(aheadOfClock(nextMinute, now)).toBeNull();
    // 13:01:00.001 would leave the 13:01 run behind it, though less than a minute ahead of the clock.
    expect(aheadOfClock(nextMinute + 1, now)).toBe('1 min');
    expect(aheadOfClock(now + 3 * HOUR + 5 * MINUTE, now)).toBe('3 h 5 min');
    expect(aheadOfClock(Date.UTC(2026, 10, 27, 13, 0), Date.UTC(2026, 10, 27, 13, 0))).toBeNull();
  });

  it('emi generate runs it and says once that runs of the clock on its --state record nothing until then', async () => {
    const root = await tempDir('emi-asof-ahead-');
    const asOf = hoursAhead(3);

    const ahead = await generate(root, asOf);

    expect(ahead.code, ahead.stderr).toBe(0);
    const said = (run: Finished) =>
      run.stderr.split('\n').filter((l) => l.startsWith('emi: ') && !l.includes('build/ is out of date'));
    expect(said(ahead)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^emi: --as-of ${asOf.replace(/\./g, '\\.')} is (2 h 59|3 h [01]) min ahead of this machine's clock: until ` +
            'the clock passes it, runs of the clock on --state state record no brain call, vote or outcome',
        ),
      ),
    ]);
    const rows = storeRows(root);

    // The clock's own run on that --state: nothing recorded, and the line names both possible causes.
    const clock = await new Promise<Finished>((done) =>
      execFile(
        process.execPath,
        [EMI, 'generate', '--state', 'state', '--out', 'site', '--paid', 'paid'],
        { cwd: root, timeout: 30_000 },
        (error, stdout, stderr) => done({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr }),
      ),
    );
    expect(clock.code, clock.stderr).toBe(0);
    expect(said(clock)).toEqual([
      expect.stringMatching(
        /before the newest run on record \(.*\): it recorded no brain call, vote or outcome \(a clock set back, or an earlier --as-of ahead of the clock on this --state; runs record again once the clock passes that time\)/,
      ),
    ]);
    expect(storeRows(root)).toEqual({ ...rows, runs: rows.runs + 1 });
    expect(arenaSteps(root)).toEqual([1, 0]);
  }, 60_000);

  it('is refused by emi up, whose scheduled runs follow the clock, before anything is written', async () => {
    const root = await tempDir('emi-asof-ahead-up-');

    const up = await emi(
      root,
      ['up', '--dist', 'dist', '--port', '19662', '--backfill-days', '1'],
      hoursAhead(3),
    );

    expect(up.code, up.stderr).toBe(2);
    expect(up.stdout).toBe('');
    const lines = up.stderr.split('\n').filter((l) => l && !l.includes('build/ is out of date'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^emi: --as-of .* ahead of this machine's clock: emi up's scheduled runs follow the clock/,
      ),
    ]);
    expect(readdirSync(root)).toEqual([]);
  }, 60_000);
});
