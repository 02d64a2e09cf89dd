// Inline SVG charts rendered at build time: no browser library, readable without JavaScript, scaled by the
// viewBox so that they fit a phone. Every chart carries a <title> and an aria-label for screen readers.
// Runs sit at their time, not at their index: hourly backfill rows and minute-cadence live rows are told apart
// by their spacing, and a pause in the runs (a stopped publisher, failed runs) is a marked gap, never a straight
// line drawn across it (runTimeline).
import { median } from '../engines/math.ts';

export interface Series {
  label: string;
  color: string;
  /** One value per run; null breaks the line. */
  values: ReadonlyArray<number | null>;
}

export interface LineChartOptions {
  title: string;
  /** ISO times of the runs, oldest first (same length as every series). */
  times: readonly string[];
  series: readonly Series[];
  /** Fixed y range (e.g. 0-100 for confidence); otherwise taken from the data. */
  yDomain?: readonly [number, number];
  formatY?: (value: number) => string;
  /** Title of the y axis with its unit, e.g. "change, %" or "score, 0-100". */
  yLabel?: string;
}

export interface Band {
  label: string;
  /** One category per run. */
  values: readonly string[];
}

/** Okabe-Ito colours: distinguishable for the common forms of colour blindness. */
export const PALETTE = ['#E69F00', '#0072B2', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#555555'];

const WIDTH = 640;
/**
 * The largest size site.css gives chart text, in viewBox units (`.chart text` on phones, where a 640-unit chart is
 * drawn about 330 px wide). Room for labels is measured at this size, so none is clipped or overlaps at any width.
 */
const FONT = 22;
const RIGHT = 12;
/** A line chart's height in viewBox units: the plot, a title line above it and two time lines under it. */
const LINE_CHART_HEIGHT = 280;

export const escapeXml = (text: string): string =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&quot;' })[c] ?? c,
  );

/** "2026-05-21 14:00" in UTC: the year included, unambiguous about the zone through the caption or a "UTC". */
export const shortUtc = (iso: string): string => iso.slice(0, 16).replace('T', ' ');

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * A generous width of a label in viewBox units at FONT: per character, as wide as DejaVu Sans (Linux's system-ui,
 * wider than the other systems' fonts) draws it, rounded up.
 */
function labelWidth(text: string): number {
  const em = [...text].reduce(
    (sum, c) => sum + (/[%+mwMW@]/.test(c) ? 1 : /[\s.,:;'|!()\-ijlrtf]/.test(c) ? 0.42 : 0.7),
    0,
  );
  return Math.ceil(em * FONT);
}

/**
 * The first and last run times under the x axis, each as a date line and a time line (the last one says UTC),
 * starting `dy` below `y`. Two short lines leave room at phone sizes that one long line would not.
 */
function timeLabels(times: readonly string[], left: number, y: number, dy: string): string {
  const label = (iso: string, x: number, anchor: string, zone: string) =>
    `<text x="${x}" y="${y}" text-anchor="${anchor}"><tspan x="${x}" dy="${dy}">${escapeXml(iso.slice(0, 10))}</tspan>` +
    `<tspan x="${x}" dy="1.25em">${escapeXml(iso.slice(11, 16))}${zone}</tspan></text>`;
  return label(times[0] ?? '', left, 'start', '') + label(times.at(-1) ?? '', WIDTH - RIGHT, 'end', ' UTC');
}

/** A step must be longer than this to be a gap: shorter pauses are never marked. */
const MIN_GAP_MS = 10 * 60_000;
/** A step longer than this many times the usual step on both sides of it is a gap. */
const GAP_FACTOR = 3;
/** How many steps on each side of a step give its usual step. */
const NEIGHBOUR_STEPS = 5;
const GAP_FILL = 'fill="#9E9E9E" fill-opacity="0.2"';

/** Where each run sits in time and which steps between runs are gaps. */
interface RunTimeline {
  /** One instant per run, in ms; runs without readable times get their index (evenly spaced, no gaps). */
  ms: readonly number[];
  /** steps[i]: from run i to run i + 1, never negative. */
  steps: readonly number[];
  /** gapAfter[i]: the runs paused between run i and run i + 1. */
  gapAfter: readonly boolean[];
  /** Whether `ms` are times (every run had a readable one), not indexes. */
  timed: boolean;
}

/**
 * Whether the step from run i to run i + 1 is a gap: longer than GAP_FACTOR times the usual step on both sides
 * (the median of up to NEIGHBOUR_STEPS steps before it, and of as many after it) and longer than MIN_GAP_MS.
 * - 3 times: one or two missed runs (a step of 2 or 3 cadences) and a schedule's jitter stay a drawn line, whose
 *   spacing by time already shows them; three missed runs in a row are a pause a reader should see named.
 * - The usual step of both sides: where hourly backfill rows meet minute-cadence live rows, the last hourly steps
 *   are the cadence of their own stretch, not gaps; a median, so that one gap among the neighbours does not
 *   raise the usual step and hide a second one.
 * - 10 minutes: a few missed one-minute runs would otherwise be marked, cluttering a chart of 200 minute runs.
 * - A step with no neighbours (two runs) has no cadence to compare with and is never a gap.
 */
function isGap(steps: readonly number[], i: number): boolean {
  const before = median(steps.slice(Math.max(0, i - NEIGHBOUR_STEPS), i));
  const after = median(steps.slice(i + 1, i + 1 + NEIGHBOUR_STEPS));
  if (before === null && after === null) return false;
  const usual = Math.max(before ?? 0, after ?? 0);
  return (steps[i] ?? 0) > Math.max(GAP_FACTOR * usual, MIN_GAP_MS);
}

/** The runs' timeline from their ISO times, oldest first; without a readable time for every run, by index. */
function runTimeline(times: readonly string[] | undefined, count: number): RunTimeline {
  const parsed = times?.slice(0, count).map((iso) => Date.parse(iso));
  const timed = parsed !== undefined && parsed.length === count && parsed.every(Number.isFinite);
  const ms = timed ? parsed : Array.from({ length: count }, (_, i) => i);
  const steps = ms.slice(1).map((t, i) => Math.max(0, t - (ms[i] ?? t)));
  return { ms, steps, gapAfter: steps.map((_, i) => timed && isGap(steps, i)), timed };
}

const gapIndexes = (timeline: RunTimeline): number[] =>
  timeline.gapAfter.flatMap((gap, i) => (gap ? [i] : []));

/** "no runs between … and … UTC": a gap marker's <title>. */
const gapTitle = (times: readonly string[], i: number): string =>
  `no runs between ${shortUtc(times[i] ?? '')} and ${shortUtc(times[i + 1] ?? '')} UTC`;

/** The gaps for a chart's aria-label and <title>: ", 1 gap in the runs: A to B UTC", or "" without one. */
function gapsText(times: readonly string[], timeline: RunTimeline): string {
  const gaps = gapIndexes(timeline);
  if (gaps.length === 0) return '';
  const listed = gaps
    .slice(0, 3)
    .map((i) => `${shortUtc(times[i] ?? '')} to ${shortUtc(times[i + 1] ?? '')}`)
    .join(', ');
  const more = gaps.length > 3 ? ` and ${gaps.length - 3} more` : '';
  return `, ${gaps.length} gap${gaps.length === 1 ? '' : 's'} in the runs: ${listed} UTC${more}`;
}

/**
 * A light band over a gap from x1 to x2, at least `minWidth` wide so that a short gap in a long chart still
 * shows, kept between `lo` and `hi`. Its fill is an attribute: the chart reads the same without the stylesheet.
 */
function gapBand(
  x1: number,
  x2: number,
  [lo, hi]: readonly [number, number],
  y: number,
  height: number,
  minWidth: number,
  title: string,
): string {
  const width = Math.min(Math.max(x2 - x1, minWidth), hi - lo);
  const x = Math.min(Math.max((x1 + x2) / 2 - width / 2, lo), hi - width);
  return (
    `<rect class="gap" x="${round1(x)}" y="${round1(y)}" width="${round1(width)}" height="${round1(height)}" ` +
    `${GAP_FILL}><title>${escapeXml(title)}</title></rect>`
  );
}

/** x of an instant between `left` and `left + width`, proportional to its time since the earliest run. */
function instantScale(ms: readonly number[], left: number, width: number): (t: number) => number {
  const lo = Math.min(...ms);
  const span = Math.max(...ms) - lo;
  return (t) => (span > 0 ? left + ((t - lo) / span) * width : left + width / 2);
}

/**
 * Maps a run's time to x between `left` and `left + width`, proportional to the time since the earliest run;
 * every run in the middle when all share one time.
 */
function timeScale(ms: readonly number[], left: number, width: number): (i: number) => number {
  const at = instantScale(ms, left, width);
  return (i) => at(ms[i] ?? Math.min(...ms));
}

const DAY_MS = 86_400_000;
/** Past this many UTC midnights a day line per day would crowd a phone-sized chart: none is drawn. */
const MAX_DAY_LINES = 14;
const DAY_LINE = 'stroke="#9E9E9E" stroke-dasharray="4 4" stroke-width="1"';

/**
 * A dashed line at each UTC midnight inside the runs' span, titled with its date, so that a week of runs reads by
 * day between the first and last time labels; none for runs without times or past MAX_DAY_LINES midnights.
 */
function dayLines(timeline: RunTimeline, left: number, width: number, top: number, bottom: number): string {
  if (!timeline.timed) return '';
  const first = Math.min(...timeline.ms);
  const last = Math.max(...timeline.ms);
  const midnights: number[] = [];
  for (let t = Math.floor(first / DAY_MS) * DAY_MS + DAY_MS; t < last; t += DAY_MS) midnights.push(t);
  if (midnights.length > MAX_DAY_LINES) return '';
  const x = instantScale(timeline.ms, left, width);
  return midnights
    .map((t) => {
      const at = round1(x(t));
      const date = new Date(t).toISOString().slice(0, 10);
      return (
        `<line class="day" x1="${at}" x2="${at}" y1="${round1(top)}" y2="${round1(bottom)}" ${DAY_LINE}>` +
        `<title>${date} 00:00 UTC</title></line>`
      );
    })
    .join('');
}

function extent(series: readonly Series[]): [number, number] | null {
  const values = series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  if (values.length === 0) return null;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const pad = min === max ? Math.max(Math.abs(min) * 0.05, 1) : (max - min) * 0.08;
  return [min - pad, max + pad];
}

/** Path data for one series, with a new segment after every missing value and across every gap in the runs. */
function pathOf(
  values: ReadonlyArray<number | null>,
  timeline: RunTimeline,
  x: (i: number) => number,
  y: (v: number) => number,
): string {
  let d = '';
  let drawing = false;
  values.slice(0, timeline.ms.length).forEach((value, i) => {
    if (value === null || !Number.isFinite(value)) {
      drawing = false;
      return;
    }
    const continues = drawing && !timeline.gapAfter[i - 1];
    d += `${continues ? 'L' : 'M'}${round1(x(i))} ${round1(y(value))}`;
    drawing = true;
  });
  return d;
}

/**
 * A line chart with a y grid, first/last time on the x axis and one line per series; null under two runs. Runs
 * sit at their time, UTC midnights are dashed lines; gaps in the runs are shaded and named in the label. The y axis
 * title sits above the plot (a rotated one would cover the tick labels on a phone), the tick labels get the room
 * they need, and the times take two lines under the plot.
 */
export function lineChartSvg(options: LineChartOptions): string | null {
  const { times, series } = options;
  const domain = options.yDomain ?? extent(series);
  if (times.length < 2 || !domain) return null;
  const format = options.formatY ?? ((v: number) => String(round1(v)));
  const [lo, hi] = domain;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => lo + f * (hi - lo));
  const tickLabels = ticks.map(format);
  const top = 2 * FONT;
  const bottom = LINE_CHART_HEIGHT - 3 * FONT;
  const left = Math.max(...tickLabels.map(labelWidth)) + 10;
  const plotW = WIDTH - left - RIGHT;
  const timeline = runTimeline(times, times.length);
  const x = timeScale(timeline.ms, left, plotW);
  const y = (v: number) => top + (1 - (v - lo) / (hi - lo || 1)) * (bottom - top);

  const grid = ticks
    .map(
      (t, i) =>
        `<line x1="${left}" x2="${WIDTH - RIGHT}" y1="${round1(y(t))}" y2="${round1(y(t))}" class="grid"/>` +
        `<text x="${left - 8}" y="${round1(y(t))}" text-anchor="end" dominant-baseline="central">${escapeXml(tickLabels[i] ?? '')}</text>`,
    )
    .join('');
  const gaps = gapIndexes(timeline)
    .map((i) => gapBand(x(i), x(i + 1), [left, WIDTH - RIGHT], top, bottom - top, 4, gapTitle(times, i)))
    .join('');
  const days = dayLines(timeline, left, plotW, top, bottom);
  // Axis titles: the unit above the y axis, the time zone under the middle of the x axis.
  const axisTitles =
    (options.yLabel
      ? `<text x="4" y="0" dy="1em" class="axis-title">${escapeXml(options.yLabel)}</text>`
      : '') +
    `<text x="${round1(left + plotW / 2)}" y="${bottom}" dy="2.55em" text-anchor="middle" class="axis-title">run time (UTC)</text>`;
  const lines = series
    .map(
      (s) =>
        `<path d="${pathOf(s.values, timeline, x, y)}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round">` +
        `<title>${escapeXml(s.label)}</title></path>`,
    )
    .join('');
  const unit = options.yLabel ? ` (${options.yLabel})` : '';
  const label =
    `${options.title}${unit}, ${times.length} runs from ${shortUtc(times[0] ?? '')} to ${shortUtc(times.at(-1) ?? '')} UTC` +
    gapsText(times, timeline);
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${LINE_CHART_HEIGHT}" role="img" aria-label="${escapeXml(label)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(label)}</title>${grid}${gaps}${days}` +
    `${timeLabels(times, left, bottom, '1.3em')}${axisTitles}${lines}</svg>`
  );
}

export interface SparklineOptions {
  color?: string;
  /** ISO times of the values, oldest first: the values sit at their time and the line breaks at gaps. */
  times?: readonly string[];
}

/** A tiny trend line for a table cell; null under two values. Without times the values are evenly spaced. */
export function sparklineSvg(
  values: ReadonlyArray<number | null>,
  label: string,
  options: SparklineOptions = {},
): string | null {
  const numbers = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (values.length < 2 || numbers.length < 2) return null;
  const w = 100;
  const h = 24;
  const min = Math.min(...numbers);
  const max = Math.max(...numbers);
  const times = options.times ?? [];
  const timeline = runTimeline(options.times, values.length);
  const x = timeScale(timeline.ms, 1, w - 2);
  const y = (v: number) => (max === min ? h / 2 : 2 + (1 - (v - min) / (max - min)) * (h - 4));
  const gaps = gapIndexes(timeline)
    .map((i) => gapBand(x(i), x(i + 1), [0, w], 0, h, 2, gapTitle(times, i)))
    .join('');
  const fullLabel = label + gapsText(times, timeline);
  return (
    `<svg class="spark" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeXml(fullLabel)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(fullLabel)}</title>${gaps}` +
    `<path d="${pathOf(values, timeline, x, y)}" fill="none" stroke="${options.color ?? '#0072B2'}" stroke-width="1.5"/></svg>`
  );
}

/**
 * How long each run's cell lasts: until the next run; before a gap and for the last run, the usual step of its
 * own stretch (the median of the steps before it, or after the gap when none precede), so that a gap stays
 * empty and the last run is as wide as its neighbours.
 */
function cellDurations(timeline: RunTimeline): number[] {
  const { ms, steps, gapAfter } = timeline;
  return ms.map((_, i) => {
    const step = steps[i];
    if (step !== undefined && !gapAfter[i]) return step;
    const own =
      median(steps.slice(Math.max(0, i - NEIGHBOUR_STEPS), i)) ??
      median(steps.slice(i + 1, i + 1 + NEIGHBOUR_STEPS)) ??
      0;
    return step === undefined ? own : Math.min(own, step);
  });
}

/**
 * Bands of coloured cells, one column per run and one row per band (e.g. market mode and market state):
 * the regime over time at a glance. Each run's cell is as wide as its time until the next run, gaps in the runs
 * are left empty and shaded; runs that all share one time (or a single run) share the width equally. Colours
 * come from `colorOf`; the legend is left to the page.
 */
export function bandChartSvg(
  title: string,
  times: readonly string[],
  bands: readonly Band[],
  colorOf: (value: string) => string,
): string | null {
  if (times.length === 0 || bands.length === 0) return null;
  const rowH = 28;
  const gap = 6;
  const left = Math.max(...bands.map((band) => labelWidth(band.label))) + 10;
  const plotW = WIDTH - left - RIGHT;
  const timeline = runTimeline(times, times.length);
  const durations = cellDurations(timeline);
  const start = Math.min(...timeline.ms);
  const span = Math.max(...timeline.ms.map((t, i) => t + (durations[i] ?? 0))) - start;
  const cellX = (i: number) =>
    span > 0
      ? left + (((timeline.ms[i] ?? start) - start) / span) * plotW
      : left + (i / times.length) * plotW;
  const cellW = (i: number) => (span > 0 ? ((durations[i] ?? 0) / span) * plotW : plotW / times.length);
  const rowsEnd = bands.length * (rowH + gap);
  const height = rowsEnd + 3 * FONT;
  const rows = bands
    .map((band, row) => {
      const top = row * (rowH + gap);
      const cells = band.values
        .slice(0, times.length)
        .map(
          (value, i) =>
            `<rect x="${round1(cellX(i))}" y="${top}" width="${round1(cellW(i) + 0.4)}" height="${rowH}" ` +
            `fill="${colorOf(value)}"><title>${escapeXml(`${shortUtc(times[i] ?? '')} UTC: ${value}`)}</title></rect>`,
        )
        .join('');
      return `<text x="${left - 8}" y="${top + rowH / 2}" text-anchor="end" dominant-baseline="central">${escapeXml(band.label)}</text>${cells}`;
    })
    .join('');
  const gaps = gapIndexes(timeline)
    .map((i) =>
      gapBand(
        cellX(i) + cellW(i),
        cellX(i + 1),
        [left, WIDTH - RIGHT],
        0,
        rowsEnd - gap,
        4,
        gapTitle(times, i),
      ),
    )
    .join('');
  const label =
    `${title}, ${times.length} runs from ${shortUtc(times[0] ?? '')} to ${shortUtc(times.at(-1) ?? '')} UTC` +
    gapsText(times, timeline);
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(label)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(label)}</title>${rows}${gaps}` +
    `${timeLabels(times, left, rowsEnd - gap, '1.2em')}</svg>`
  );
}
