// One report chart as inline SVG: bars per category, stacked when the chart has several series. Negative values
// hang below a zero line. Each bar carries a <title>, and the figure a caption, for screen readers.
import type { AtlasHumanReport } from '../../../schemas/paid/atlas-human-report.ts';
import { formatNumber } from './format.ts';
import { h, svg } from './dom.ts';

type Chart = AtlasHumanReport['charts'][number];

const WIDTH = 480;
const HEIGHT = 220;
const PAD = { top: 16, right: 8, bottom: 36, left: 48 };

interface Segment {
  series: number;
  label: string;
  from: number;
  to: number;
  value: number;
}

/** Stacks the series per category: positive values upward from zero, negative ones downward. */
function stack(chart: Chart): { categories: string[]; segments: Segment[][] } {
  const categories = [...new Set(chart.series.flatMap((s) => s.points.map((p) => p.x)))];
  const segments = categories.map((category) => {
    let up = 0;
    let down = 0;
    const column: Segment[] = [];
    chart.series.forEach((series, index) => {
      const y = series.points.find((p) => p.x === category)?.y;
      if (y === null || y === undefined || !Number.isFinite(y)) return;
      const from = y >= 0 ? up : down;
      const to = from + y;
      if (y >= 0) up = to;
      else down = to;
      column.push({ series: index, label: series.label, from, to, value: y });
    });
    return column;
  });
  return { categories, segments };
}

const format = (value: number, unit: string): string => `${formatNumber(value)}${unit ? ` ${unit}` : ''}`;

export function renderChart(chart: Chart): HTMLElement {
  const { categories, segments } = stack(chart);
  const ends = segments.flat().flatMap((s) => [s.from, s.to]);
  const max = Math.max(0, ...ends);
  const min = Math.min(0, ...ends);
  const span = max - min || 1;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const y = (value: number) => PAD.top + ((max - value) / span) * plotHeight;
  const band = (WIDTH - PAD.left - PAD.right) / Math.max(1, categories.length);
  const titleId = `chart-${chart.id}-title`;

  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-labelledby': titleId,
    class: 'chart',
    preserveAspectRatio: 'xMidYMid meet',
  });
  root.append(svg('title', { id: titleId }, `${chart.title} (${chart.unit})`));
  root.append(svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(0), y2: y(0), class: 'chart-zero' }));
  root.append(
    svg(
      'text',
      { x: PAD.left - 6, y: y(max) + 4, class: 'chart-axis', 'text-anchor': 'end' },
      format(max, ''),
    ),
  );
  if (min < 0) {
    root.append(
      svg('text', { x: PAD.left - 6, y: y(min), class: 'chart-axis', 'text-anchor': 'end' }, format(min, '')),
    );
  }
  categories.forEach((category, i) => {
    const x = PAD.left + i * band + band * 0.15;
    for (const segment of segments[i] ?? []) {
      const top = y(Math.max(segment.from, segment.to));
      const height = Math.max(1, Math.abs(y(segment.from) - y(segment.to)));
      root.append(
        svg(
          'rect',
          { x, y: top, width: band * 0.7, height, class: `chart-bar series-${segment.series % 4}` },
          svg('title', {}, `${category}, ${segment.label}: ${format(segment.value, chart.unit)}`),
        ),
      );
    }
    root.append(
      svg(
        'text',
        { x: x + band * 0.35, y: HEIGHT - PAD.bottom + 16, class: 'chart-axis', 'text-anchor': 'middle' },
        category,
      ),
    );
  });

  const legend =
    chart.series.length > 1
      ? h(
          'ul',
          { class: 'chart-legend' },
          ...chart.series.map((s, i) =>
            h('li', {}, h('span', { class: `swatch series-${i % 4}`, 'aria-hidden': 'true' }), s.label),
          ),
        )
      : null;
  return h(
    'figure',
    { class: 'report-chart', 'data-chart': chart.id },
    root,
    legend,
    h('figcaption', {}, `${chart.title} (${chart.unit})`),
  );
}
