// Numbers and readings as a reader should see them in the paid report: thousands grouped, sub-dollar prices with
// their significant digits (0.05234, never 0.05), and each reading with a tone that matches its words.

/** 1234567 -> "1,234,567"; 43210.5 -> "43,210.5"; 0.052341 -> "0.05234"; 0.000012345 -> "0.00001235". */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (Number.isInteger(value)) return value.toLocaleString('en');
  if (Math.abs(value) >= 1) return value.toLocaleString('en', { maximumFractionDigits: 2 });
  return value.toLocaleString('en', { maximumSignificantDigits: 4 });
}

export type Tone = 'up' | 'down' | 'neutral' | 'caution';

const TONES: Record<string, Tone> = {
  bullish: 'up',
  risk_on: 'up',
  up: 'up',
  opportunity: 'up',
  bearish: 'down',
  risk_off: 'down',
  down: 'down',
  caution: 'caution',
  crowded_longs: 'caution',
  crowded_shorts: 'caution',
  neutral: 'neutral',
  wait: 'neutral',
  flat: 'neutral',
  balanced: 'neutral',
};

/** The tone of a reading such as "BEARISH" or "risk_off" (bearish is never coloured as good); null for others. */
export const toneOf = (value: unknown): Tone | null =>
  typeof value === 'string' ? (TONES[value.toLowerCase()] ?? null) : null;
