// A human report with three assets, a negative change and a stacked chart: enough to exercise every part of the
// page's rendering. Rows are built from the schema's own example row, so the fixture follows the schema as it
// evolves; the paywall serves only files that pass AtlasHumanReport, and buyer-stack.ts checks this one up front.
import { atlasHumanReportExample } from '../schemas/paid/examples.ts';
import type { AtlasHumanReport } from '../schemas/paid/atlas-human-report.ts';

type Row = AtlasHumanReport['asset_table']['rows'][number];
const exampleRow = atlasHumanReportExample.asset_table.rows[0] as Row;

const row = (asset: string, price: number, change: number, bias: Row['bias'], note: string): Row => ({
  ...exampleRow,
  asset,
  price,
  change_24h: change,
  bias,
  note,
});

export const humanReportFixture: AtlasHumanReport = {
  ...atlasHumanReportExample,
  headline: 'Test headline: a quiet, mixed market <b>not bold</b>.',
  sections: [
    { id: 'overview', heading: 'Overview', paragraphs: ['Prices moved little.', 'Evidence was mixed.'] },
    { id: 'risk', heading: 'Risk context', paragraphs: ['Leverage stayed moderate.'] },
  ],
  asset_table: {
    columns: [
      { key: 'asset', label: 'Asset' },
      { key: 'price', label: 'Price (USD)' },
      { key: 'change_24h', label: '24h change (%)' },
      { key: 'bias', label: 'Bias' },
      { key: 'note', label: 'Note' },
    ],
    rows: [
      row('BTC', 97000, 0.4, 'neutral', 'Range-bound.'),
      row('ETH', 3400, -1.2, 'bearish', 'Slightly weaker.'),
      row('ALGO', 0.31, 2.5, 'bullish', 'Firmer.'),
    ],
  },
  charts: [
    {
      id: 'change-24h',
      title: '24h change',
      kind: 'bar',
      unit: '%',
      series: [
        {
          label: '24h change',
          points: [
            { x: 'BTC', y: 0.4 },
            { x: 'ETH', y: -1.2 },
            { x: 'ALGO', y: 2.5 },
          ],
        },
      ],
    },
    {
      id: 'evidence-mix',
      title: 'Evidence mix',
      kind: 'stacked-bar',
      unit: 'signals',
      series: [
        {
          label: 'supportive',
          points: [
            { x: 'BTC', y: 2 },
            { x: 'ETH', y: 1 },
            { x: 'ALGO', y: 3 },
          ],
        },
        {
          label: 'against',
          points: [
            { x: 'BTC', y: 2 },
            { x: 'ETH', y: 3 },
            { x: 'ALGO', y: null },
          ],
        },
      ],
    },
  ],
};
