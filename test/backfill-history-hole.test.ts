// A wider backfill never leaves a silent hole in the published history. A backfill's window used to start at an
// hour in the middle of a UTC day, so that day's file began mid-day; once later days had files it was final, and a
// wider backfill later created the whole days before it but could not fill its morning: up to 23 hours missing in
// the middle of the history, told only by a count of rows "kept out". Now the window is whole UTC days, and a
// backfill writes no day before a final day whose rows begin mid-day (the history began there with live runs),
// saying so, apart from the times already on record.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as command from '../generator/backfill-command.ts';
import { listDays, readDayRows } from '../generator/history/store.ts';
import type { AppendResult, RefusalKind } from '../generator/history/index.ts';
import { runPipeline } from '../generator/pipeline.ts';
import type { HistoryResourceId } from '../schemas/history.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 00:00 UTC today by the wall clock: every time below is in a day that has begun. */
const TODAY = Math.floor(Date.now() / DAY) * DAY;
const MARKET: readonly HistoryResourceId[] = ['market-regime', 'main-brain', 'liquidity-lite', 'derivatives'];
const iso = (ms: number) => new Date(ms).toISOString();
const dayOf = (ms: number) => iso(ms).slice(0, 10);
const hoursFrom = (first: number, last: number) =>
  Array.from({ length: (last - first) / HOUR + 1 }, (_, i) => iso(first + i * HOUR));

let dir: string;
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const site = () => join(dir, 'site');
const backfill = async (days: number, asOf: number): Promise<AppendResult> => {
  const result = await command.backfillSimulated({
    stateDir: join(dir, 'var'),
    outDir: site(),
    days,
    seed: 42,
    asOf,
  });
  return result.history!;
};
/** A run at `asOf` (the simulated source: the same history rows a live run writes, one per resource). */
const runAt = async (...times: number[]) => {
  for (const asOf of times) await runPipeline(simulatedRun(dir, asOf));
};
/** Every run_at of a resource's history, oldest first. */
async function runTimes(id: HistoryResourceId): Promise<string[]> {
  const times: string[] = [];
  for (const day of await listDays(site(), id)) {
    times.push(...((await readDayRows(site(), id, day)) ?? []).map((row) => row.run_at));
  }
  return times.sort();
}
const kindCount = (history: AppendResult, kind: RefusalKind) =>
  history.refused.filter((row) => row.kind === kind).length;

describe('a backfill and the holes it could leave', { timeout: 120_000 }, () => {
  it('a wider backfill after a narrower one leaves every hour of its window on record', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-backfill-hole-'));
    const day0 = TODAY - 4 * DAY;
    const firstAsOf = day0 + 14 * HOUR + 30 * 60_000;
    await backfill(3, firstAsOf);
    // A run the next day makes day0 final (its file never changes again).
    await runAt(day0 + DAY + 10 * HOUR);
    const secondAsOf = day0 + DAY + 12 * HOUR;
    await backfill(7, secondAsOf);

    const windowStart = day0 - 6 * DAY; // the 00:00 of the day the 7-day window reaches back to
    // The hours of day0 after the first backfill's as-of stay missing: day0 was final before they could be written.
    const expected = hoursFrom(windowStart, secondAsOf).filter(
      (time) => !(time > iso(firstAsOf) && time < iso(day0 + DAY)),
    );
    for (const id of MARKET) {
      const times = await runTimes(id);
      expect(
        expected.filter((time) => !times.includes(time)),
        `${id}: hours of the window without a row`,
      ).toEqual([]);
      expect(times[0]).toBe(iso(windowStart));
    }
  });

  it('writes no day before a final day whose history begins mid-day, and says so apart from times on record', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-backfill-hole-'));
    const day = TODAY - 2 * DAY;
    // The history begins with live runs at 14:00 on `day`; a run the next day makes `day` final.
    await runAt(day + 14 * HOUR, day + 15 * HOUR, day + DAY + 10 * HOUR);
    const asOf = day + DAY + 12 * HOUR;
    const history = await backfill(4, asOf);

    for (const id of MARKET) {
      expect(await listDays(site(), id)).toEqual([dayOf(day), dayOf(day + DAY)]);
      expect(await runTimes(id)).toEqual([
        iso(day + 14 * HOUR),
        iso(day + 15 * HOUR),
        ...hoursFrom(day + DAY, asOf), // the open day's gaps are filled around the run of 10:00
      ]);
    }
    // Three whole days before `day`, for each market resource, refused because of the hole and naming the day.
    const holes = history.refused.filter((row) => row.kind === 'hole');
    expect(holes).toHaveLength(3 * 24 * MARKET.length);
    for (const row of holes) {
      expect(row.run_at < iso(day)).toBe(true);
      expect(row.reason).toContain(`final day ${dayOf(day)} begins at ${iso(day + 14 * HOUR)}`);
      expect(row.reason).toMatch(/hole/);
    }
    expect(kindCount(history, 'final-day')).toBe(24 * MARKET.length);
    expect(kindCount(history, 'on-record')).toBe(MARKET.length);

    const summary = command.historySummary(history);
    expect(summary[0]).toBe(
      `backfill: ${13 * MARKET.length - MARKET.length} simulated history rows published ` +
        `(${history.refused.length} kept out: ${MARKET.length} times already on record, ` +
        `${24 * MARKET.length} in final day files, ${3 * 24 * MARKET.length} before a final day that begins mid-day)`,
    );
    expect(summary.slice(1)).toEqual([
      `backfill: ${3 * 24 * MARKET.length} history rows of ${dayOf(day - 3 * DAY)} to ${dayOf(day - DAY)} ` +
        `not written (${MARKET.join(', ')}): ` +
        `the history of the final day ${dayOf(day)} begins at ${iso(day + 14 * HOUR)}; ` +
        'earlier rows would leave a hole before it (a final day file never changes)',
    ]);
  });

  it('a final day with hours missing in its middle does not keep the days before it out', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-backfill-hole-'));
    const day = TODAY - 2 * DAY;
    // `day` begins at 00:00 but misses 02:00-19:00 (failed runs); a run the next day makes it final.
    await runAt(day, day + HOUR, day + 20 * HOUR, day + DAY + 10 * HOUR);
    const asOf = day + DAY + 12 * HOUR;
    const history = await backfill(3, asOf);

    expect(kindCount(history, 'hole')).toBe(0);
    for (const id of MARKET) {
      expect(await runTimes(id)).toEqual([
        ...hoursFrom(day - 2 * DAY, day - HOUR), // the two whole days before it
        iso(day),
        iso(day + HOUR),
        iso(day + 20 * HOUR), // the final day as it was
        ...hoursFrom(day + DAY, asOf),
      ]);
    }
  });

  it('refuses the rows older than the retention window, by kind, and writes whole days after it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-backfill-hole-'));
    const asOf = TODAY - DAY + 12 * HOUR;
    const before = process.env.EMI_HISTORY_RETENTION_DAYS;
    process.env.EMI_HISTORY_RETENTION_DAYS = '2';
    let history: AppendResult;
    try {
      // The window reaches back to 00:00 four days before today; the retention keeps three days up to the newest.
      history = await backfill(3, asOf);
    } finally {
      if (before === undefined) delete process.env.EMI_HISTORY_RETENTION_DAYS;
      else process.env.EMI_HISTORY_RETENTION_DAYS = before;
    }
    expect(kindCount(history, 'retention')).toBe(24 * MARKET.length);
    expect(history.refused).toHaveLength(24 * MARKET.length);
    for (const id of MARKET) {
      expect(await runTimes(id)).toEqual(hoursFrom(TODAY - 3 * DAY, asOf));
    }
    expect(command.historySummary(history)).toEqual([
      `backfill: ${history.appended} simulated history rows published ` +
        `(${24 * MARKET.length} kept out: ${24 * MARKET.length} outside retention)`,
    ]);
  });
});
