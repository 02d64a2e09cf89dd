// The home and track-record charts keep time: each run sits at its time (not at its index under an axis titled
// "run time (UTC)"), a pause in the runs breaks the line and is shaded and named, the regime bands are as wide as
// each run lasted, and zero or repeated time spans still give finite coordinates.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { EDUCATIONAL_NOTICE } from '../schemas/common.ts';
import { bandChartSvg, lineChartSvg, sparklineSvg } from '../generator/site/charts.ts';
import type { HistoryRun } from '../generator/site/history.ts';
import { buildHomeView } from '../generator/site/home-view.ts';
import { buildTrackRecordView } from '../generator/site/track-record.ts';
import { FIXTURE_CLOCK, fixtureSnapshot, universe, uptrend } from './helpers/market-fixtures.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** `count` ISO times `step` ms apart from `start`. */
const every = (start: string, step: number, count: number): string[] =>
  Array.from({ length: count }, (_, i) => new Date(Date.parse(start) + i * step).toISOString());

/** 20 minute-cadence runs up to 2026-11-20 03:00, nobody home for 21 hours, 20 more from 2026-11-21 00:00. */
const GAP_TIMES = [
  ...every('2026-11-20T02:41:00.000Z', MINUTE, 20),
  ...every('2026-11-21T00:00:00.000Z', MINUTE, 20),
];
const GAP_LABEL = '1 gap in the runs: 2026-11-20 03:00 to 2026-11-21 00:00 UTC';

/** The path data of every line (the gap bands are rects, never paths). */
const paths = (svg: string | null): string[] =>
  [...(svg ?? '').matchAll(/<path d="([^"]*)"/g)].map((m) => m[1] ?? '');

/** The points of a path as [x, y], in order. */
const points = (d: string): Array<[number, number]> =>
  [...d.matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);

/** Each run's x on a line chart with one series, relative to the first run's, as a share of the whole width. */
function shares(svg: string | null): number[] {
  const xs = points(paths(svg).join('')).map(([x]) => x);
  const first = xs[0] ?? 0;
  const width = (xs.at(-1) ?? 0) - first;
  return xs.map((x) => (x - first) / width);
}

/** The same for the times themselves: where each run should sit. */
function timeShares(times: readonly string[]): number[] {
  const ms = times.map((t) => Date.parse(t));
  const first = ms[0] ?? 0;
  return ms.map((t) => (t - first) / ((ms.at(-1) ?? 0) - first));
}

/** Every number in the SVG's attributes: all finite, and every x inside the 640-unit viewBox. */
function expectFiniteInside(svg: string | null): void {
  expect(svg).not.toBeNull();
  expect(svg).not.toMatch(/NaN|Infinity/);
  const xs = [...(svg ?? '').matchAll(/ x="(-?[\d.]+)"/g)].map((m) => Number(m[1]));
  const pathXs = paths(svg).flatMap((d) => points(d).map(([x]) => x));
  for (const x of [...xs, ...pathXs]) {
    expect(x).toBeGreaterThanOrEqual(0);
    expect(x).toBeLessThanOrEqual(640);
  }
}

const oneLine = (times: readonly string[], values = times.map((_, i) => i % 7)) =>
  lineChartSvg({ title: 'Price', times, series: [{ label: 'BTC', color: '#000', values }] });

describe('line charts keep time', () => {
  it('break the line across a 21-hour pause in minute-cadence runs, far to the right, and name the gap', () => {
    const svg = oneLine(GAP_TIMES);
    const [d] = paths(svg);
    // Before: one segment drawn straight across the 21 hours, the run after it one even step to the right.
    expect(d?.match(/M/g)).toHaveLength(2);
    const at = shares(svg);
    const expected = timeShares(GAP_TIMES);
    // 21 hours of 21 h 38 min: the pause takes 97 % of the width (before: one step of 39, 2.6 %).
    expect((at[20] ?? 0) - (at[19] ?? 0)).toBeCloseTo((expected[20] ?? 0) - (expected[19] ?? 0), 2);
    expect((at[20] ?? 0) - (at[19] ?? 0)).toBeGreaterThan(0.95);
    expect(svg).toContain(
      `aria-label="Price, 40 runs from 2026-11-20 02:41 to 2026-11-21 00:19 UTC, ${GAP_LABEL}"`,
    );
    expect(svg).toContain(
      `<title>Price, 40 runs from 2026-11-20 02:41 to 2026-11-21 00:19 UTC, ${GAP_LABEL}</title>`,
    );
    // One shaded band over the pause, between the run before it and the run after it.
    const bands = [
      ...(svg ?? '').matchAll(/<rect class="gap" x="([\d.]+)"[^>]* width="([\d.]+)"[^>]*><title>([^<]*)</g),
    ];
    expect(bands).toHaveLength(1);
    expect(bands[0]?.[3]).toBe('no runs between 2026-11-20 03:00 and 2026-11-21 00:00 UTC');
    const xs = points(d ?? '').map(([x]) => x);
    expect(Number(bands[0]?.[1])).toBeCloseTo(xs[19] ?? 0, 0);
    expect(Number(bands[0]?.[1]) + Number(bands[0]?.[2])).toBeCloseTo(xs[20] ?? 0, 0);
    expectFiniteInside(svg);
  });

  it('draw regular minute and hourly cadences as one line at their times, a missed run and jitter included', () => {
    // Minute runs 20-40 s late (a run's own duration), one of them missed: a step of two minutes.
    const minutes = every('2026-11-20T10:00:00.000Z', MINUTE, 30)
      .filter((_, i) => i !== 12)
      .map((iso, i) => new Date(Date.parse(iso) + (i % 3) * 10_000 + 20_000).toISOString());
    const hours = every('2026-11-18T00:00:00.000Z', HOUR, 48);
    for (const times of [minutes, hours]) {
      const svg = oneLine(times);
      expect(paths(svg)[0]?.match(/M/g)).toHaveLength(1);
      expect(svg).not.toContain('gap');
      const at = shares(svg);
      timeShares(times).forEach((share, i) => expect(at[i]).toBeCloseTo(share, 2));
    }
    // Before: the missed run's step (100 s, after jitter) was drawn as wide as the 70 s step before it.
    const at = shares(oneLine(minutes));
    expect(((at[12] ?? 0) - (at[11] ?? 0)) / ((at[11] ?? 0) - (at[10] ?? 0))).toBeCloseTo(100 / 70, 1);
  });

  it('mark each UTC midnight inside the runs with a dashed line at its time, titled with its date', () => {
    const hours = every('2026-11-18T00:00:00.000Z', HOUR, 72);
    const svg = oneLine(hours);
    const days = [...(svg ?? '').matchAll(/<line class="day" x1="([\d.]+)"[^>]*><title>([^<]*)<\/title>/g)];
    // The first run's own midnight is the axis's start, not a line.
    expect(days.map((m) => m[2])).toEqual(['2026-11-19 00:00 UTC', '2026-11-20 00:00 UTC']);
    const xs = points(paths(svg)[0] ?? '').map(([x]) => x);
    const [first, last] = [xs[0] ?? 0, xs.at(-1) ?? 0];
    days.forEach((m, i) =>
      expect((Number(m[1]) - first) / (last - first)).toBeCloseTo((24 * (i + 1)) / 71, 2),
    );
    expectFiniteInside(svg);
    // Before: nothing between the first and last time labels said where a day began.
    expect(oneLine(every('2026-11-20T10:00:00.000Z', MINUTE, 30))).not.toContain('class="day"');
    // A month of hourly runs would draw a line every few pixels on a phone: none.
    expect(oneLine(every('2026-10-20T00:00:00.000Z', HOUR, 30 * 24))).not.toContain('class="day"');
    // Runs without readable times sit by index: no instant to mark.
    expect(oneLine(['', 'later', 'last'])).not.toContain('class="day"');
  });

  it('place hourly backfill rows then minute-cadence live rows by time, without breaking at each hourly step', () => {
    const times = [
      ...every('2026-11-19T00:00:00.000Z', HOUR, 24),
      ...every('2026-11-19T23:40:00.000Z', MINUTE, 30),
    ];
    const svg = oneLine(times);
    expect(paths(svg)[0]?.match(/M/g)).toHaveLength(1);
    expect(svg).not.toContain('gap');
    const at = shares(svg);
    timeShares(times).forEach((share, i) => expect(at[i]).toBeCloseTo(share, 2));
    // Before: 23 of 53 even steps for the hourly rows; by time they take 23 of 24 hours and 9 minutes.
    expect(at[23]).toBeGreaterThan(0.94);
  });

  it('find a pause right after hourly backfill rows and one between two minute-cadence stretches', () => {
    const times = [
      ...every('2026-11-19T00:00:00.000Z', HOUR, 12),
      ...every('2026-11-19T19:00:00.000Z', MINUTE, 15),
      ...every('2026-11-19T23:00:00.000Z', MINUTE, 15),
    ];
    const svg = oneLine(times);
    expect(paths(svg)[0]?.match(/M/g)).toHaveLength(3);
    expect(svg).toContain(
      '2 gaps in the runs: 2026-11-19 11:00 to 2026-11-19 19:00, 2026-11-19 19:14 to 2026-11-19 23:00 UTC',
    );
    expect(svg?.match(/<rect class="gap"/g)).toHaveLength(2);
  });

  it('give the sparklines of the home page their times: placed by time, broken and labelled at a gap', () => {
    const svg = sparklineSvg(
      GAP_TIMES.map((_, i) => 100 + (i % 5)),
      'BTC price over recent runs',
      { times: GAP_TIMES, color: '#E69F00' },
    );
    expect(paths(svg)[0]?.match(/M/g)).toHaveLength(2);
    expect(svg).toContain(`aria-label="BTC price over recent runs, ${GAP_LABEL}"`);
    expect(svg).toContain('stroke="#E69F00"');
    expect(svg).toContain('<title>no runs between 2026-11-20 03:00 and 2026-11-21 00:00 UTC</title>');
    const at = shares(svg);
    expect((at[20] ?? 0) - (at[19] ?? 0)).toBeGreaterThan(0.95);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});

describe('the regime band chart keeps time', () => {
  /** Each cell's x and width in the first band row, in run order. */
  const cells = (svg: string | null): Array<{ x: number; width: number }> =>
    [...(svg ?? '').matchAll(/<rect x="([\d.]+)" y="0" width="([\d.]+)"/g)].map((m) => ({
      x: Number(m[1]),
      width: Number(m[2]),
    }));
  const band = (times: readonly string[]) =>
    bandChartSvg(
      'Regime',
      times,
      [{ label: 'mode', values: times.map((_, i) => (i % 2 ? 'RISK_ON' : 'RISK_OFF')) }],
      () => '#0f0',
    );

  it('makes each run as wide as its time until the next run, the last one the usual step', () => {
    // Four hourly rows, then runs 20 minutes apart.
    const times = [
      ...every('2026-11-19T00:00:00.000Z', HOUR, 4),
      ...every('2026-11-19T03:20:00.000Z', 20 * MINUTE, 6),
    ];
    const c = cells(band(times));
    expect(c).toHaveLength(10);
    // Before: ten equal cells. Width is drawn 0.4 wider than the time (no hairline between cells).
    const hourly = (c[0]?.width ?? 0) - 0.4;
    expect(hourly).toBeGreaterThan(0);
    expect(((c[3]?.width ?? 0) - 0.4) / hourly).toBeCloseTo(1 / 3, 1);
    expect(((c[5]?.width ?? 0) - 0.4) / hourly).toBeCloseTo(1 / 3, 1);
    expect(((c[9]?.width ?? 0) - 0.4) / hourly).toBeCloseTo(1 / 3, 1);
    // Cells follow one another: each starts where the one before it ends.
    c.slice(1).forEach((cell, i) => expect(cell.x).toBeCloseTo((c[i]?.x ?? 0) + (c[i]?.width ?? 0) - 0.4, 0));
    expectFiniteInside(band(times));
  });

  it('leaves a pause empty, shaded and named instead of stretching the run before it', () => {
    const svg = band(GAP_TIMES);
    const c = cells(svg);
    // The run before the pause lasts one minute, like its neighbours; the pause is the space up to the next run.
    expect(c[19]?.width).toBeCloseTo(c[18]?.width ?? 0, 1);
    expect((c[20]?.x ?? 0) - (c[19]?.x ?? 0)).toBeGreaterThan(500);
    expect(svg).toContain(
      `aria-label="Regime, 40 runs from 2026-11-20 02:41 to 2026-11-21 00:19 UTC, ${GAP_LABEL}"`,
    );
    expect(svg).toMatch(
      /<rect class="gap"[^>]*><title>no runs between 2026-11-20 03:00 and 2026-11-21 00:00 UTC<\/title>/,
    );
    expectFiniteInside(svg);
  });
});

describe('zero and repeated time spans', () => {
  const same = ['2026-11-20T03:00:00.000Z', '2026-11-20T03:00:00.000Z', '2026-11-20T03:00:00.000Z'];

  it('give finite coordinates, runs with one time at one x, the same SVG for the same input', () => {
    const line = oneLine(same, [1, 2, 3]);
    expectFiniteInside(line);
    // Before: three even steps for runs at one instant.
    expect(new Set(points(paths(line)[0] ?? '').map(([x]) => x)).size).toBe(1);
    expect(oneLine(same, [1, 2, 3])).toBe(line);

    const repeated = ['2026-11-20T03:00:00.000Z', ...same, '2026-11-20T03:02:00.000Z'];
    const xs = points(paths(oneLine(repeated, [1, 2, 3, 4, 5]))[0] ?? '').map(([x]) => x);
    expect(xs[1]).toBe(xs[3]);
    expect(xs[2]).toBe(xs[3]);
    expectFiniteInside(oneLine(repeated, [1, 2, 3, 4, 5]));

    const spark = sparklineSvg([1, 2, 3], 'flat time', { times: same }) ?? '';
    expect(spark).not.toMatch(/NaN|Infinity/);
    expect(new Set(points(paths(spark)[0] ?? '').map(([x]) => x)).size).toBe(1);

    for (const times of [same, same.slice(0, 1)]) {
      const svg = bandChartSvg(
        'Regime',
        times,
        [{ label: 'mode', values: times.map(() => 'NEUTRAL') }],
        () => '#999',
      );
      expectFiniteInside(svg);
      expect(svg?.match(/<rect /g)).toHaveLength(times.length);
    }
  });
});

describe('the pages pass their runs’ times to the charts', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the home page names the pause in its line charts, band chart and sparklines', () => {
    const runs: HistoryRun[] = GAP_TIMES.map((generated_at, i) => ({
      generated_at,
      mode: 'simulated',
      market_mode: 'NEUTRAL',
      market_state: 'WAIT',
      confidence: 50 + (i % 4),
      risk_score: 40,
      coins: { BTC: { price: 90_000 + i, confidence: 60, bias: null } },
    }));
    const brain = buildFreeSnapshots(fixtureSnapshot(universe(uptrend)), FIXTURE_CLOCK).mainBrain;
    const view = buildHomeView(undefined, brain, runs);
    for (const svg of [view.charts.prices, view.charts.confidence, view.charts.regime]) {
      expect(svg).toContain(GAP_LABEL);
    }
    const btc = view.coins.find((row) => row.asset === 'BTC');
    expect(btc?.priceTrend).toContain(`aria-label="BTC price over recent runs, ${GAP_LABEL}"`);
    expect(btc?.confidenceTrend).toContain(`aria-label="BTC confidence over recent runs, ${GAP_LABEL}"`);
    expect(btc?.confidenceTrend).toContain('stroke="#E69F00"');
  });

  it('the track record names the pause in its hit-rate chart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-charts-time-'));
    const folder = join(dir, 'api/history/statistics');
    await mkdir(folder, { recursive: true });
    const rows = GAP_TIMES.map((run_at, i) => ({
      run_at,
      data_mode: 'simulated',
      source_status: 'ok',
      brain_hit_rate: 0.5 + (i % 3) / 100,
      crowd_hit_rate: 0.48,
    }));
    await writeFile(
      join(folder, 'latest.json'),
      JSON.stringify({
        resource: 'statistics',
        source_path: '/api/statistics.json',
        educational_notice: EDUCATIONAL_NOTICE,
        columns: Object.keys(rows[0] ?? {}),
        max_rows: 500,
        rows,
      }),
    );
    const view = await buildTrackRecordView(dir);
    expect(view.runs).toBe(40);
    expect(view.chart).toContain(GAP_LABEL);
    expect(paths(view.chart)[0]?.match(/M/g)).toHaveLength(2);
  });
});
