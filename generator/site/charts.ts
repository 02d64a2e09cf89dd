// Inline SVG charts rendered at build time: no browser library, readable without JavaScript, scaled by the
// viewBox so that they fit a phone. Every chart carries a <title> and an aria-label for screen readers.

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

function extent(series: readonly Series[]): [number, number] | null {
  const values = series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  if (values.length === 0) return null;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const pad = min === max ? Math.max(Math.abs(min) * 0.05, 1) : (max - min) * 0.08;
  return [min - pad, max + pad];
}

/** Path data for one series, with a new segment after every gap. */
function pathOf(
  values: ReadonlyArray<number | null>,
  x: (i: number) => number,
  y: (v: number) => number,
): string {
  let d = '';
  let drawing = false;
  values.forEach((value, i) => {
    if (value === null || !Number.isFinite(value)) {
      drawing = false;
      return;
    }
    d += `${drawing ? 'L' : 'M'}${round1(x(i))} ${round1(y(value))}`;
    drawing = true;
  });
  return d;
}

/**
 * A line chart with a y grid, first/last time on the x axis and one line per series; null under two runs. The y
 * axis title sits above the plot (a rotated one would cover the tick labels on a phone), the tick labels get the
 * room they need, and the times take two lines under the plot.
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
  const x = (i: number) => left + (i / (times.length - 1)) * plotW;
  const y = (v: number) => top + (1 - (v - lo) / (hi - lo || 1)) * (bottom - top);

  const grid = ticks
    .map(
      (t, i) =>
        `<line x1="${left}" x2="${WIDTH - RIGHT}" y1="${round1(y(t))}" y2="${round1(y(t))}" class="grid"/>` +
        `<text x="${left - 8}" y="${round1(y(t))}" text-anchor="end" dominant-baseline="central">${escapeXml(tickLabels[i] ?? '')}</text>`,
    )
    .join('');
  // Axis titles: the unit above the y axis, the time zone under the middle of the x axis.
  const axisTitles =
    (options.yLabel
      ? `<text x="4" y="0" dy="1em" class="axis-title">${escapeXml(options.yLabel)}</text>`
      : '') +
    `<text x="${round1(left + plotW / 2)}" y="${bottom}" dy="2.55em" text-anchor="middle" class="axis-title">run time (UTC)</text>`;
  const lines = series
    .map(
      (s) =>
        `<path d="${pathOf(s.values, x, y)}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round">` +
        `<title>${escapeXml(s.label)}</title></path>`,
    )
    .join('');
  const unit = options.yLabel ? ` (${options.yLabel})` : '';
  const label = `${options.title}${unit}, ${times.length} runs from ${shortUtc(times[0] ?? '')} to ${shortUtc(times.at(-1) ?? '')} UTC`;
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${LINE_CHART_HEIGHT}" role="img" aria-label="${escapeXml(label)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(label)}</title>${grid}` +
    `${timeLabels(times, left, bottom, '1.3em')}${axisTitles}${lines}</svg>`
  );
}

/** A tiny trend line for a table cell; null under two values. */
export function sparklineSvg(
  values: ReadonlyArray<number | null>,
  label: string,
  color = '#0072B2',
): string | null {
  const numbers = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (values.length < 2 || numbers.length < 2) return null;
  const w = 100;
  const h = 24;
  const min = Math.min(...numbers);
  const max = Math.max(...numbers);
  const x = (i: number) => 1 + (i / (values.length - 1)) * (w - 2);
  const y = (v: number) => (max === min ? h / 2 : 2 + (1 - (v - min) / (max - min)) * (h - 4));
  return (
    `<svg class="spark" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeXml(label)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(label)}</title>` +
    `<path d="${pathOf(values, x, y)}" fill="none" stroke="${color}" stroke-width="1.5"/></svg>`
  );
}

/**
 * Bands of coloured cells, one column per run and one row per band (e.g. market mode and market state):
 * the regime over time at a glance. Colours come from `colorOf`; the legend is left to the page.
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
  const cellW = (WIDTH - left - RIGHT) / times.length;
  const rowsEnd = bands.length * (rowH + gap);
  const height = rowsEnd + 3 * FONT;
  const rows = bands
    .map((band, row) => {
      const top = row * (rowH + gap);
      const cells = band.values
        .map(
          (value, i) =>
            `<rect x="${round1(left + i * cellW)}" y="${top}" width="${round1(cellW + 0.4)}" height="${rowH}" ` +
            `fill="${colorOf(value)}"><title>${escapeXml(`${shortUtc(times[i] ?? '')} UTC: ${value}`)}</title></rect>`,
        )
        .join('');
      return `<text x="${left - 8}" y="${top + rowH / 2}" text-anchor="end" dominant-baseline="central">${escapeXml(band.label)}</text>${cells}`;
    })
    .join('');
  const label = `${title}, ${times.length} runs from ${shortUtc(times[0] ?? '')} to ${shortUtc(times.at(-1) ?? '')} UTC`;
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(label)}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title>${escapeXml(label)}</title>${rows}` +
    `${timeLabels(times, left, rowsEnd - gap, '1.2em')}</svg>`
  );
}
