// A backfill fills the published history where it has no row: it never replaces a row already on record. A live
// run at the top of an hour has the run_at a backfill row of that hour has; replacing it turned live data into
// simulated data in a live site's history. And a restarted `emi up` backfills again: rows it finds on record are
// kept out and said so, not counted as published a second time.
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backfillSimulated } from '../generator/backfill-command.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const HOUR = 3_600_000;
/** The top of the last hour, today by the wall clock (the backfill writes today's day file, never a closed one). */
const topOfHour = Math.floor(Date.now() / HOUR) * HOUR;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface DayFile {
  rows: Array<{ run_at: string; data_mode: string; btc_price: number }>;
}

let dir: string;
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const dayFile = (resource: string) =>
  join(dir, 'site', 'api', 'history', resource, `${dayOf(topOfHour)}.json`);
const readDay = async (resource: string) => JSON.parse(await readFile(dayFile(resource), 'utf8')) as DayFile;
const backfillOneDay = () =>
  backfillSimulated({
    stateDir: join(dir, 'var'),
    outDir: join(dir, 'site'),
    days: 1,
    seed: 42,
    asOf: topOfHour,
  });

describe('backfill and the history already on record', { timeout: 60_000 }, () => {
  it('keeps a row of the same time, as a live run at the top of the hour wrote it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-backfill-kept-'));
    await runPipeline(simulatedRun(dir, topOfHour));
    // The run's row made into what a live run at that minute writes (the file replaced, not written through the
    // hard link the next generation shares).
    const day = await readDay('main-brain');
    const row = day.rows.find((r) => r.run_at === new Date(topOfHour).toISOString());
    expect(row).toBeDefined();
    Object.assign(row!, { data_mode: 'live', btc_price: 123_456.78 });
    await writeFile(`${dayFile('main-brain')}.tmp`, JSON.stringify(day));
    await rename(`${dayFile('main-brain')}.tmp`, dayFile('main-brain'));

    const result = await backfillOneDay();
    const kept = (await readDay('main-brain')).rows.filter((r) => r.run_at === row!.run_at);
    expect(kept).toEqual([expect.objectContaining({ data_mode: 'live', btc_price: 123_456.78 })]);
    expect(result.history?.refused).toContainEqual({
      resource: 'main-brain',
      run_at: row!.run_at,
      kind: 'on-record',
      reason: 'a row for this time is already on record; kept',
    });
  });

  it('counts only the rows it adds when it runs again', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-backfill-kept-'));
    const first = await backfillOneDay();
    expect(first.history?.appended).toBeGreaterThan(0);
    const again = await backfillOneDay();
    expect(again.history?.appended).toBe(0);
    expect(again.history?.refused.length).toBe(first.history?.appended);
  });
});
