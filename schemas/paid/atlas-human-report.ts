// Atlas human report: the atlas written for people reading in a browser. A headline, short narrative sections,
// one table row per asset, series ready for charts, and the disclaimers in full. The spec gives no body: documented
// in the README's Decisions.
import * as z from 'zod';
import {
  AssetSymbol,
  Bias,
  Confidence,
  DataMode,
  DataStatus,
  DISCLAIMER,
  IsoTimestamp,
  Limitation,
  PROJECT,
  SourceInfo,
} from '../common.ts';
import { ATLAS_SCHEMA_VERSION, PaymentStatus, PublisherBlock } from './terms.ts';

export const ReportSection = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  heading: z.string(),
  paragraphs: z.array(z.string()).min(1),
});

export const ReportRow = z.strictObject({
  asset: AssetSymbol,
  price: z.number().positive().nullable(),
  change_24h: z.number().nullable().describe('percent'),
  bias: Bias.nullable(),
  confidence: Confidence.nullable(),
  liquidity: z.string().nullable().describe('in words, e.g. "deep"'),
  positioning: z.string().nullable().describe('derivatives positioning in words, e.g. "new longs"'),
  agreement: z.string(),
  note: z.string(),
  data_status: DataStatus,
});

export const ChartSeries = z.strictObject({
  label: z.string(),
  points: z.array(z.strictObject({ x: z.string(), y: z.number().nullable() })),
});

export const ReportChart = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  title: z.string(),
  kind: z.enum(['bar', 'stacked-bar']),
  unit: z.string(),
  series: z.array(ChartSeries).min(1),
});

export const AtlasHumanReport = z.strictObject({
  success: z.literal(true),
  project: z.literal(PROJECT),
  endpoint: z.literal('x402-atlas-human-report'),
  type: z.literal('atlas_human_report'),
  payment_status: PaymentStatus,
  publisher: PublisherBlock.optional(),
  schema_version: z.literal(ATLAS_SCHEMA_VERSION),
  title: z.string(),
  headline: z.string(),
  data_notice: z.string().describe('says plainly whether the numbers are simulated, replayed or live'),
  source_mode: DataMode,
  simulated: z.boolean(),
  sections: z.array(ReportSection).min(1),
  asset_table: z.strictObject({
    columns: z.array(z.strictObject({ key: z.string(), label: z.string() })),
    rows: z.array(ReportRow),
  }),
  charts: z.array(ReportChart),
  limitations: z.array(Limitation),
  disclaimers: z.array(z.string()).min(1),
  source_details: SourceInfo,
  updated: IsoTimestamp,
  educational_only: z.literal(true),
  disclaimer: z.literal(DISCLAIMER),
});
export type AtlasHumanReport = z.infer<typeof AtlasHumanReport>;
