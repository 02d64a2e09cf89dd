// What every tool result states besides its body: the educational notice, the data mode and the data's age.
import * as z from 'zod';
import { DataMode, EDUCATIONAL_NOTICE } from '../schemas/common.ts';
import { generatedAtOf } from '../generator/discovery/run-files.ts';

export const DataFacts = {
  educational_notice: z.literal(EDUCATIONAL_NOTICE),
  data_mode: DataMode.nullable().describe(
    'live, replay or simulated (simulated and replayed data are not current market data); null when unknown',
  ),
  generated_at: z
    .string()
    .nullable()
    .describe('when the data was generated (ISO 8601, UTC); null when unknown'),
  data_age_seconds: z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe('seconds between the generation time and this answer; null when unknown'),
};

export type DataFacts = {
  educational_notice: typeof EDUCATIONAL_NOTICE;
  data_mode: DataMode | null;
  generated_at: string | null;
  data_age_seconds: number | null;
};

/** The output schema of a tool answering one published body. */
export const bodyEnvelope = (body: z.ZodType) => z.object({ ...DataFacts, body });

const MODE_KEYS = ['source_mode', 'mode', 'data_mode'] as const;

/** The data mode a body states, whichever of the published spellings it uses. */
export function dataModeOf(body: unknown): DataMode | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as Record<string, unknown>;
  const nested = (record.source as Record<string, unknown> | undefined)?.mode;
  for (const candidate of [nested, ...MODE_KEYS.map((key) => record[key])]) {
    const parsed = DataMode.safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return null;
}

export function factsOf(mode: DataMode | null, generatedAt: string | null, now: number): DataFacts {
  const time = generatedAt === null ? Number.NaN : Date.parse(generatedAt);
  return {
    educational_notice: EDUCATIONAL_NOTICE,
    data_mode: mode,
    generated_at: Number.isNaN(time) ? null : generatedAt,
    data_age_seconds: Number.isNaN(time) ? null : Math.max(0, Math.round((now - time) / 1000)),
  };
}

export const factsOfBody = (body: unknown, now: number): DataFacts =>
  factsOf(dataModeOf(body), generatedAtOf(body), now);
