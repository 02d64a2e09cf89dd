// GET /api/reasoning.php?asset=X: the brain's reading of one asset in plain language (spec 2.7).
import * as z from 'zod';
import {
  AssetSymbol,
  Confidence,
  DataMode,
  DataStatus,
  DISCLAIMER,
  EDUCATIONAL_NOTICE,
  IsoTimestamp,
  Limitation,
  PROJECT,
  SourceInfo,
} from './common.ts';

/**
 * Upper case, like the arena's consensus values, so that brain and crowd compare directly. Decision: `NONE` when
 * there was no evidence for the asset (the spec types prediction as a string, so it cannot be null); before, such
 * an asset read NEUTRAL, which looks like a reading.
 */
export const Prediction = z.enum(['BULLISH', 'BEARISH', 'NEUTRAL', 'NONE']);
export type Prediction = z.infer<typeof Prediction>;

const Reasoning = z
  .strictObject({
    prediction: Prediction.describe(
      'the side the evidence leans to: `BULLISH` (up), `BEARISH` (down), `NEUTRAL` (neither), `NONE` (no ' +
        'evidence this run, no reading). Never an instruction',
    ),
    confidence: Confidence.nullable().describe(
      'strength and agreement of the evidence; null without evidence',
    ),
    summary: z.string(),
    reason_points: z.array(z.string()).describe('what the evidence shows, in plain language'),
    limitations: z.array(Limitation).describe('evidence that was missing, mixed or estimated'),
    data_status: DataStatus,
  })
  .describe('the reading for this asset and the evidence behind it');

export const ReasoningResponse = z.strictObject({
  success: z.boolean(),
  project: z.literal(PROJECT),
  type: z.literal('reasoning'),
  mode: DataMode.describe('simulated, live or replay: where the numbers came from'),
  asset: AssetSymbol,
  reasoning: Reasoning,
  supported_assets: z.array(AssetSymbol),
  developer_note: z.string(),
  educational_notice: z.literal(EDUCATIONAL_NOTICE),
  updated_utc: IsoTimestamp,
  // Honest labelling, shared with the other free endpoints.
  source_mode: DataMode,
  source: SourceInfo,
  truth_statement: z.string(),
  disclaimer: z.literal(DISCLAIMER),
});
export type ReasoningResponse = z.infer<typeof ReasoningResponse>;
