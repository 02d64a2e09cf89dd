// Which clock closes a day of the published history. A day is closed by the history's own newest day that has
// begun by this machine's clock (so replaying or backfilling a past period behaves as it did live), never by a row
// stamped ahead of that clock: a run with a future `--as-of` (allowed up to 24 h ahead) keeps no history row and
// makes no day file, and day files that a clock running ahead made (faketime, a wrong NTP step) neither close the
// true current day nor count for retention.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HISTORY_RESOURCE_IDS,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
} from '../schemas/history.ts';
import type { HistoryRow } from '../schemas/history.ts';
import { appendHistory } from '../generator/history/index.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { generateArgs, runEmi, startEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';

const DAY = 86_400_000;
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const dayOf = (ms: number) => iso(ms).slice(0, 10);
const startOfDay = (ms: number) => Math.floor(ms / DAY) * DAY;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-history-clock-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const readJson = async (path: string): Promise<unknown> => JSON.parse(await readFile(path, 'utf8'));
const historyOf = (dir: string) => join(dir, 'site', 'api', 'history');
const dayRows = async (dir: string, id: string, day: string): Promise<string[]> =>
  HistoryDayFile.parse(await readJson(join(historyOf(dir), id, `${day}.json`))).rows.map((r) =>
    String(r.run_at),
  );
/** The run times in a resource's latest.json, below `site` of `dir` (or `dir` itself, with `site` ''). */
const latestRows = async (dir: string, id: string, site = 'site'): Promise<string[]> =>
  HistoryLatestFile.parse(await readJson(join(dir, site, 'api', 'history', id, 'latest.json'))).rows.map(
    (row) => String(row.run_at),
  );
const dayFiles = async (dir: string, id: string): Promise<string[]> =>
  (await readdir(join(historyOf(dir), id)))
    .filter((name) => /^\d{4}-\d{2}-\d{2}\.(json|csv)$/.test(name))
    .sort();

/** The lines on stderr, without build/'s "out of date" notice (others may be editing the sources meanwhile). */
const errorLines = (run: Finished): string[] =>
  run.stderr.split('\n').filter((line) => line && !line.includes('build/ is out of date'));

const hasFaketime = (() => {
  try {
    execFileSync('faketime', ['-f', '+2d', process.execPath, '-e', '0'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('a run ahead of the clock (the real emi)', () => {
  it('a future --as-of keeps no history row, makes no day file, and the rest of today is still kept', async () => {
    const dir = await mkdtemp(join(root, 'future-'));
    const today = startOfDay(Date.now());
    // Before the clock (the third run is the clock's), and on today even in the first minutes of a UTC day.
    const first = Math.max(today, Date.now() - 2 * MINUTE);
    const tomorrow = today + DAY; // never more than 24 h ahead of the clock, so --as-of accepts it

    const one = await runEmi(dir, generateArgs(iso(first)));
    expect(one.code, one.stderr).toBe(0);
    const ahead = await runEmi(dir, generateArgs(iso(tomorrow)));
    expect(ahead.code, ahead.stderr).toBe(0);
    // Each resource's row is refused, saying why; the run itself is still ok (the history never fails a run).
    const refusals = errorLines(ahead).filter((line) => line.startsWith('history: '));
    expect(refusals).toHaveLength(HISTORY_RESOURCE_IDS.length);
    for (const line of refusals) {
      expect(line).toMatch(
        new RegExp(
          `row of ${iso(tomorrow)} not kept: the day ${dayOf(tomorrow)} has not begun by this machine's clock`,
        ),
      );
    }
    const last = (await readJson(join(dir, 'var', 'last-run.json'))) as { status: string };
    expect(last.status).toBe('ok');
    for (const id of HISTORY_RESOURCE_IDS) {
      expect(await dayFiles(dir, id)).toEqual([`${dayOf(today)}.csv`, `${dayOf(today)}.json`]);
    }
    const index = HistoryIndexFile.parse(await readJson(join(historyOf(dir), 'index.json')));
    expect(index.resources.every((r) => r.last_date === dayOf(today))).toBe(true);

    // A run of the clock's minute: an --as-of before the newest run on record (tomorrow's) is refused.
    const three = await runEmi(dir, generateArgs(iso(first)).slice(0, -2));
    expect(three.code, three.stderr).toBe(0);
    expect(errorLines(three).filter((line) => line.startsWith('history: '))).toEqual([]);
    const later = (await readJson(join(dir, 'var', 'last-run.json'))) as { as_of: string };
    for (const id of HISTORY_RESOURCE_IDS) {
      expect(await dayRows(dir, id, dayOf(today))).toEqual([iso(first), later.as_of]);
    }
  }, 90_000);

  it.skipIf(!hasFaketime)(
    'a clock two days ahead, then the true clock: the true current day is still written, nothing deleted',
    async () => {
      const dir = await mkdtemp(join(root, 'faketime-'));
      const args = ['generate', '--out', 'site', '--paid', 'paid', '--state', 'var'];
      const before = await runEmi(dir, args);
      expect(before.code, before.stderr).toBe(0);
      const lastRun = async () =>
        (await readJson(join(dir, 'var', 'last-run.json'))) as { as_of: string; status: string };
      const jumped = await startEmi(dir, args, {}, { wrapper: ['faketime', '-f', '+2d'] }).done;
      expect(jumped.code, jumped.stderr).toBe(0);
      // The days are the runs' own (their as-of minutes), not the test's clock read later: a midnight passing
      // between a run and this line would otherwise name the day after.
      const wrongDay = dayOf(Date.parse((await lastRun()).as_of));
      expect(Date.parse(`${wrongDay}T00:00:00Z`)).toBeGreaterThan(Date.now());

      const after = await runEmi(dir, args);
      expect(after.code, after.stderr).toBe(0);
      const report = await lastRun();
      const today = dayOf(Date.parse(report.as_of));
      const lines = errorLines(after);
      expect(lines.filter((line) => / not kept: /.test(line))).toEqual([]);
      // Said once, with what to do; the files of the wrong day are kept, never deleted by emi. The arena step,
      // dated before the newest run on record (the one two days ahead), records nothing and says so.
      expect(lines.filter((line) => line.includes(wrongDay))).toEqual([
        expect.stringMatching(
          new RegExp(`^emi: this run's time .* is before the newest run on record \\(${wrongDay}T`),
        ) as unknown as string,
        expect.stringMatching(
          new RegExp(`^history: day files of ${wrongDay} are ahead of this machine's clock \\(${today}\\)`),
        ) as unknown as string,
      ]);
      expect(report.status).toBe('ok');
      for (const id of HISTORY_RESOURCE_IDS) {
        expect(await dayRows(dir, id, today)).toContain(report.as_of);
        expect(await dayFiles(dir, id)).toContain(`${wrongDay}.json`);
        // The newest row published is this run's, not the wrong day's.
        expect((await latestRows(dir, id)).at(-1)).toBe(report.as_of);
      }
    },
    90_000,
  );
});

describe('the history store and the wall clock', () => {
  const T = Date.parse('2026-06-10T12:00:00.000Z');
  it('day files ahead of the wall clock close no day and count for no retention; they are kept and named', async () => {
    const out = await mkdtemp(join(root, 'store-'));
    // Written while the clock was right, then one run with the clock five days ahead (a run under a wrong clock
    // counts retention from its own day: the retention here is long enough for that run to remove nothing).
    const sample = await sampleRow();
    const at = (ms: number): HistoryRow => ({ ...sample, run_at: iso(ms) });
    await appendHistory({ 'market-regime': [at(T - DAY)] }, { root: out, now: T - DAY });
    await appendHistory({ 'market-regime': [at(T)] }, { root: out, now: T });
    await appendHistory({ 'market-regime': [at(T + 5 * DAY)] }, { root: out, now: T + 5 * DAY });

    // The clock is right again: today's file still takes rows, yesterday's is kept, the wrong day is left alone.
    const result = await appendHistory(
      { 'market-regime': [at(T + MINUTE)] },
      { root: out, now: T + MINUTE, retentionDays: 2 },
    );
    expect(result.refused).toEqual([]);
    expect(result.appended).toBe(1);
    expect(result.removed).toEqual([]);
    expect(result.ahead).toEqual([`market-regime/${dayOf(T + 5 * DAY)}`]);
    const days = (await readdir(join(out, 'api', 'history', 'market-regime'))).filter((f) =>
      f.endsWith('.json'),
    );
    expect(days.sort()).toEqual([
      `${dayOf(T - DAY)}.json`,
      `${dayOf(T)}.json`,
      `${dayOf(T + 5 * DAY)}.json`,
      'latest.json',
    ]);
    const today = HistoryDayFile.parse(
      await readJson(join(out, 'api', 'history', 'market-regime', `${dayOf(T)}.json`)),
    );
    expect(today.rows.map((r) => r.run_at)).toEqual([iso(T), iso(T + MINUTE)]);
    // Listed in the index, but left out of latest.* until its day begins (it would stand as the newest row).
    const index = HistoryIndexFile.parse(await readJson(join(out, 'api', 'history', 'index.json')));
    expect(index.resources.find((r) => r.resource === 'market-regime')?.last_date).toBe(dayOf(T + 5 * DAY));
    expect(await latestRows(out, 'market-regime', '')).toEqual([iso(T - DAY), iso(T), iso(T + MINUTE)]);
    // A row for a day that has not begun is refused, whatever the history holds.
    const early = await appendHistory({ 'market-regime': [at(T + DAY)] }, { root: out, now: T + 2 * MINUTE });
    expect(early.refused[0]?.reason).toMatch(/has not begun/);

    // Once its day has begun, that day's file takes rows again, closes the days before it and joins latest.*.
    const then = T + 5 * DAY + MINUTE;
    const later = await appendHistory({ 'market-regime': [at(then)] }, { root: out, now: then });
    expect(later).toMatchObject({ appended: 1, refused: [], ahead: [] });
    expect((await latestRows(out, 'market-regime', '')).slice(-2)).toEqual([iso(T + 5 * DAY), iso(then)]);
    const closed = await appendHistory({ 'market-regime': [at(T + 3 * MINUTE)] }, { root: out, now: then });
    expect(closed.refused[0]?.reason).toMatch(/is over/);
  });

  it('a replay of a past period still closes its days by the history itself, and gives the same bytes', async () => {
    const replay = async (dir: string) => {
      const run = (asOf: number) => runPipeline(simulatedRun(dir, asOf, { now: () => asOf }));
      const late = Date.parse('2026-05-20T23:59:00.000Z');
      expect((await run(late)).status).toBe('ok');
      expect((await run(late + 2 * MINUTE)).status).toBe('ok');
      expect((await run(late - 29 * MINUTE)).status).toBe('ok'); // a day that the next one has closed
    };
    const a = await mkdtemp(join(root, 'replay-a-'));
    const b = await mkdtemp(join(root, 'replay-b-'));
    await replay(a);
    await replay(b);
    expect(await dayRows(a, 'main-brain', '2026-05-20')).toEqual(['2026-05-20T23:59:00.000Z']);
    expect(await dayRows(a, 'main-brain', '2026-05-21')).toEqual(['2026-05-21T00:01:00.000Z']);
    const index = await readFile(join(historyOf(a), 'index.json'), 'utf8');
    expect(HistoryIndexFile.parse(JSON.parse(index)).updated_utc).toBe('2026-05-20T23:30:00.000Z');
    expect(await readFile(join(historyOf(b), 'index.json'), 'utf8')).toBe(index);
  }, 60_000);
});

/** One real market-regime row (the store checks each row against its schema). */
async function sampleRow(): Promise<HistoryRow> {
  const dir = await mkdtemp(join(root, 'sample-'));
  const asOf = Date.parse('2026-05-20T10:00:00.000Z');
  await runPipeline(simulatedRun(dir, asOf, { now: () => asOf }));
  const latest = (await readJson(join(historyOf(dir), 'market-regime', 'latest.json'))) as {
    rows: HistoryRow[];
  };
  return latest.rows[0]!;
}
