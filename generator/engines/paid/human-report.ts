// Atlas human report: the atlas retold for people, with a table and chart data a page can render directly.
import { DISCLAIMER, EDUCATIONAL_NOTICE, PROJECT } from '../../../schemas/common.ts';
import type { Atlas } from '../../../schemas/paid/atlas.ts';
import type { AtlasHumanReport } from '../../../schemas/paid/atlas-human-report.ts';
import { ATLAS_SCHEMA_VERSION } from '../../../schemas/paid/terms.ts';
import type { FreeSnapshots } from '../index.ts';
import { conflictWords, liquiditySentence, paidSourceOf, words, type AssetView } from './join.ts';

const MODE_WORDS: Readonly<Record<string, string>> = {
  RISK_ON: 'a risk-on market',
  RISK_OFF: 'a risk-off market',
  NEUTRAL: 'a mixed market',
  UNKNOWN: 'a market without enough evidence to read',
};

function dataNotice(free: FreeSnapshots): string {
  const source = free.marketRegime.source;
  if (source.simulated) {
    return `Simulated data: every number comes from a seeded market simulator (seed ${source.seed ?? 'unknown'}), not from real markets. The report shows how the methods read a market, not what markets are doing.`;
  }
  if (source.mode === 'replay')
    return `Replayed data: recorded venue responses from ${source.as_of}, not live prices.`;
  return `Live data from ${source.venues.join(', ')}, as of ${source.as_of}.`;
}

function row(view: AssetView): AtlasHumanReport['asset_table']['rows'][number] {
  const note = view.reasoning?.summary ?? view.coin.summary ?? `${view.asset}: no reading this run.`;
  return {
    asset: view.asset,
    price: view.coin.price,
    change_24h: view.coin.change_24h,
    bias: view.coin.bias,
    confidence: view.coin.confidence,
    liquidity: view.liquidity?.liquidity_context ?? null,
    positioning:
      view.derivatives?.state && view.derivatives.state !== 'unavailable'
        ? words(view.derivatives.state)
        : null,
    agreement: view.agreement,
    note,
    data_status: view.coin.data_status,
  };
}

export function atlasHumanReportBody(
  free: FreeSnapshots,
  atlas: Atlas,
  views: readonly AssetView[],
): AtlasHumanReport {
  const regime = free.marketRegime;
  const { breadth, strongest } = atlas.summary;
  const conflicting = views.filter((v) => v.agreement === 'conflicting');
  const simulated = regime.source.simulated;
  const headline =
    `${MODE_WORDS[regime.market_mode] ?? 'The market'}: ${breadth.bullish} of ${views.length} assets lean bullish, ${breadth.bearish} bearish` +
    (simulated ? ' (simulated data)' : '');
  const positioning = free.derivatives.summary ?? 'No derivatives positioning was available this run.';
  return {
    success: true,
    project: PROJECT,
    endpoint: 'x402-atlas-human-report',
    type: 'atlas_human_report',
    payment_status: 'settled',
    schema_version: ATLAS_SCHEMA_VERSION,
    title: 'Market atlas: an educational report',
    headline: headline.charAt(0).toUpperCase() + headline.slice(1),
    data_notice: dataNotice(free),
    source_mode: regime.source.mode,
    simulated,
    sections: [
      {
        id: 'overview',
        heading: 'The market as a whole',
        paragraphs: [regime.summary, ...regime.regime.evidence.slice(0, 3)],
      },
      {
        id: 'assets',
        heading: 'Asset by asset',
        paragraphs: [
          strongest.length
            ? `The evidence is strongest for ${strongest.join(', ')}.`
            : 'No asset had enough evidence for a confident reading.',
          conflicting.length
            ? `Readings point opposite ways for ${conflicting.map(conflictWords).join(', ')}: treat those readings with extra care.`
            : 'Where several readings exist, they do not point opposite ways.',
        ],
      },
      { id: 'positioning', heading: 'Derivatives positioning', paragraphs: [positioning] },
      {
        id: 'liquidity',
        heading: 'Liquidity',
        // Counts thin readings out of the assets with one, and says how many had no order book to read.
        paragraphs: [liquiditySentence(views)],
      },
      {
        id: 'how-to-read',
        heading: 'How to read this report',
        paragraphs: [
          atlas.confidence.meaning,
          'A bias is what the evidence leans to at this moment, never an instruction to buy, sell or hold.',
        ],
      },
    ],
    asset_table: {
      columns: [
        { key: 'asset', label: 'Asset' },
        { key: 'price', label: 'Price (USD)' },
        { key: 'change_24h', label: '24h change (%)' },
        { key: 'bias', label: 'Evidence leans' },
        { key: 'confidence', label: 'Confidence (0-100)' },
        { key: 'liquidity', label: 'Liquidity' },
        { key: 'positioning', label: 'Positioning' },
        { key: 'agreement', label: 'Readings agree?' },
        { key: 'note', label: 'In short' },
      ],
      rows: views.map(row),
    },
    charts: [
      {
        id: 'change-24h',
        title: 'Price change over 24 hours',
        kind: 'bar',
        unit: '%',
        series: [{ label: '24h change', points: views.map((v) => ({ x: v.asset, y: v.coin.change_24h })) }],
      },
      {
        id: 'confidence',
        title: 'Confidence of the evidence',
        kind: 'bar',
        unit: '0-100',
        series: [{ label: 'confidence', points: views.map((v) => ({ x: v.asset, y: v.coin.confidence })) }],
      },
      {
        id: 'breadth',
        title: 'How the assets lean',
        kind: 'stacked-bar',
        unit: 'assets',
        series: (['bullish', 'neutral', 'bearish'] as const).map((side) => ({
          label: side,
          points: [{ x: 'assets', y: breadth[side] }],
        })),
      },
    ],
    limitations: atlas.limitations,
    disclaimers: [DISCLAIMER, EDUCATIONAL_NOTICE, ...(simulated ? [dataNotice(free)] : [])],
    source_details: paidSourceOf(free, 'atlasHumanReport'),
    updated: atlas.updated,
    educational_only: true,
    disclaimer: DISCLAIMER,
  };
}
