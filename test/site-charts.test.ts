// The home charts read the published history: collecting under the minimum, axes with units above it, and the
// simulated backfill giving a first start enough runs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillSimulated, historyWindow } from '../generator/backfill-command.ts';
import { HistoryDayFile } from '../schemas/history.ts';
import { readFile } from 'node:fs/promises';
import { MIN_CHART_RUNS, readPublishedHistory } from '../generator/site/history.ts';
import { buildHomeView } from '../generator/site/home-view.ts';

let root: string;
const AS_OF = Math.floor(Date.now() / 3_600_000) * 3_600_000;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-charts-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('home charts from the published history', () => {
  it('say "collecting" while the history is empty', async () => {
    const view = buildHomeView(undefined, undefined, await readPublishedHistory(join(root, 'empty')));
    expect(view.charts).toMatchObject({ runs: 0, minRuns: MIN_CHART_RUNS, collecting: true });
  });

  it('a simulated backfill publishes labelled rows, enough for charts with units on their axes', async () => {
    const out = join(root, 'site');
    const result = await backfillSimulated({
      stateDir: join(root, 'state'),
      outDir: out,
      days: 1,
      seed: 3,
      asOf: AS_OF,
    });
    // One row per hour over whole UTC days: from 00:00 of the day the one day reaches back to, to the as-of.
    const window = historyWindow(AS_OF, 1);
    const hours = (window.last - window.first) / 3_600_000 + 1;
    expect(result.history?.appended).toBe(4 * hours);
    const today = new Date(AS_OF).toISOString().slice(0, 10);
    const day = HistoryDayFile.parse(
      JSON.parse(await readFile(join(out, 'api/history/main-brain', `${today}.json`), 'utf8')),
    );
    expect(day.rows.every((row) => row.data_mode === 'simulated')).toBe(true);

    const runs = await readPublishedHistory(out);
    expect(runs).toHaveLength(hours);
    expect(runs[0]?.coins.BTC?.price).toEqual(expect.any(Number));
    const view = buildHomeView(undefined, undefined, runs);
    expect(view.charts).toMatchObject({ runs: hours, collecting: false, simulatedRuns: hours });
    expect(view.charts.prices).toContain('change, %');
    expect(view.charts.prices).toContain('run time (UTC)');
    expect(view.charts.confidence).toContain('score, 0-100');
    expect(view.charts.regime).toContain('<svg class="chart"');
  }, 60_000);
});
