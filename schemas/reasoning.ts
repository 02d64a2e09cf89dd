// GET /api/reasoning.php?asset=X: the brain's reading of one asset in plain language (spec 2.7).
import { z } from 'zod';
import {
  AssetSymbol,
  Confidence,
  DataMode,
  DISCLAIMER,
  EDUCATIONAL_NOTICE,
  IsoTimestamp,
  Limitation,
  PROJECT,
  SourceInfo,
} from './common.ts';

/** Upper case, like the arena's consensus values, so that brain and crowd compare directly. */
export const Prediction = z.enum(['BULLISH', 'BEARISH', 'NEUTRAL']);
export type Prediction = z.infer<typeof Prediction>;

const Reasoning = z
  .strictObject({
    prediction: Prediction.describe('the side the evidence leans to, never an instruction'),
    confidence: Confidence.nullable().describe(
      'strength and agreement of the evidence; null without evidence',
    ),
    summary: z.string(),
    reason_points: z.array(z.string()).describe('what the evidence shows, in plain language'),
    limitations: z.array(Limitation).describe('evidence that was missing, mixed or estimated'),
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
