// What every tool result states besides its body: the educational notice, the data mode, the data's age and
// whether it is fresh, late or stale.
import * as z from 'zod';
import { DataMode, EDUCATIONAL_NOTICE, MAX_CLOCK_SKEW_SECONDS } from '../schemas/common.ts';
import { generatedAtOf } from '../generator/discovery/run-files.ts';
import { oncePerBody, publishedObject } from './json-schema.ts';

/** The states of /docs/freshness/: before next_update_due, within one more interval after it, or later. */
export const Freshness = z.enum(['fresh', 'late', 'stale']);
export type Freshness = z.infer<typeof Freshness>;

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
    .describe(
      'seconds between the generation time and this answer; null when unknown, or when the data is dated more than ' +
        `${MAX_CLOCK_SKEW_SECONDS} s ahead of this server's clock (the clocks disagree, so its age cannot be told)`,
    ),
  freshness: Freshness.nullable().describe(
    'fresh (before next_update_due), late (less than one more update interval past it) or stale (the ' +
      'generator has stopped: treat the data as history, not the current market); null when the data states ' +
      'no next_update_due or its age cannot be told (see data_age_seconds)',
  ),
};

export type DataFacts = {
  educational_notice: typeof EDUCATIONAL_NOTICE;
  data_mode: DataMode | null;
  generated_at: string | null;
  data_age_seconds: number | null;
  freshness: Freshness | null;
};

/** The output schema of a tool answering one published body. */
export const bodyEnvelope = oncePerBody((body) => publishedObject({ ...DataFacts, body }));

const MODE_KEYS = ['source_mode', 'mode', 'data_mode'] as const;

const field = (record: Record<string, unknown>, key: string, inner: string): unknown => {
  const value = record[key];
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[inner] : undefined;
};

/** The data mode a body states, whichever of the published spellings it uses. */
export function dataModeOf(body: unknown): DataMode | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as Record<string, unknown>;
  // The paid atlas states its mode only inside intelligence_layer.
  const nested = [field(record, 'source', 'mode'), field(record, 'intelligence_layer', 'source_mode')];
  for (const candidate of [...nested, ...MODE_KEYS.map((key) => record[key])]) {
    const parsed = DataMode.safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return null;
}

/** When the next run should replace the body (source, source_details or top level), or null. */
export function nextUpdateDueOf(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as Record<string, unknown>;
  const candidates = [
    field(record, 'source', 'next_update_due'),
    field(record, 'source_details', 'next_update_due'),
    record.next_update_due,
  ];
  const found = candidates.find((v): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v)));
  return found ?? null;
}

/** The freshness rule of /docs/freshness/, with the interval between generation and the due time. */
export function freshnessOf(
  generatedAt: string | null,
  nextUpdateDue: string | null,
  now: number,
): Freshness | null {
  if (generatedAt === null || nextUpdateDue === null) return null;
  const due = Date.parse(nextUpdateDue);
  const interval = due - Date.parse(generatedAt);
  if (!(interval > 0)) return null;
  const lateBy = now - due;
  return lateBy <= 0 ? 'fresh' : lateBy <= interval ? 'late' : 'stale';
}

export function factsOf(
  mode: DataMode | null,
  generatedAt: string | null,
  now: number,
  nextUpdateDue: string | null = null,
): DataFacts {
  const time = generatedAt === null ? Number.NaN : Date.parse(generatedAt);
  const known = Number.isNaN(time) ? null : generatedAt;
  // Dated ahead of this clock by more than the skew hosts may have: its age is unknown, never "fresh" (the paywall
  // refuses to sell such a file).
  const aged = known !== null && time - now <= MAX_CLOCK_SKEW_SECONDS * 1000;
  return {
    educational_notice: EDUCATIONAL_NOTICE,
    data_mode: mode,
    generated_at: known,
    data_age_seconds: aged ? Math.max(0, Math.round((now - time) / 1000)) : null,
    freshness: aged ? freshnessOf(known, nextUpdateDue, now) : null,
  };
}

export const factsOfBody = (body: unknown, now: number): DataFacts =>
  factsOf(dataModeOf(body), generatedAtOf(body), now, nextUpdateDueOf(body));
