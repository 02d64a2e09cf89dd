// What the data on sale is, read from the unpaid 402 so the buyer knows it before paying: live, replayed or
// simulated, and when it was generated. The 402 body carries it as `data: { mode, simulated, generated_at }`; the
// PAYMENT-REQUIRED header carries it in words at the end of `resource.description` ("SIMULATED (not live) data
// generated <time>"). Both are read; when they disagree, the less live answer wins. Pure: no DOM, no I/O.

export type DataMode = 'simulated' | 'replay' | 'live';

export interface DataFacts {
  /** null when the server did not say (then the page treats the data as not live). */
  mode: DataMode | null;
  /** ISO time the data was generated, when stated. */
  generatedAt: string | null;
}

/** The least live first: the order in which a disagreement between header and body is settled. */
const CAUTION: readonly DataMode[] = ['simulated', 'replay', 'live'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const asMode = (value: unknown): DataMode | null =>
  typeof value === 'string' && (CAUTION as readonly string[]).includes(value.toLowerCase())
    ? (value.toLowerCase() as DataMode)
    : null;

const asTime = (value: unknown): string | null =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? value : null;

/** The body's `data` block. A block saying `simulated: true` beside `mode: "live"` is not trusted as live. */
function fromBody(bodyText: string): DataFacts | null {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return null;
  }
  const data = isRecord(body) ? body.data : undefined;
  if (!isRecord(data)) return null;
  let mode = asMode(data.mode);
  if (mode === 'live' && data.simulated === true) mode = null;
  return { mode, generatedAt: asTime(data.generated_at) };
}

const DESCRIPTION =
  /\b(live|simulated|replay(?:ed)?)\b(?:\s*\(not live\))?\s+data generated\s+(\S+?)[.;,)]?(?:\s|$)/i;

/** The words the paywall puts at the end of `resource.description`. */
function fromDescription(paymentRequired: unknown): DataFacts | null {
  const resource = isRecord(paymentRequired) ? paymentRequired.resource : undefined;
  const description = isRecord(resource) ? resource.description : undefined;
  if (typeof description !== 'string') return null;
  const match = DESCRIPTION.exec(description);
  if (!match) return null;
  const word = (match[1] ?? '').toLowerCase();
  return { mode: word.startsWith('replay') ? 'replay' : asMode(word), generatedAt: asTime(match[2]) };
}

/** What the 402 says about the data; `{ mode: null }` when it says nothing readable. */
export function readDataFacts(paymentRequired: unknown, bodyText: string): DataFacts {
  const found = [fromBody(bodyText), fromDescription(paymentRequired)].filter(
    (facts): facts is DataFacts => facts !== null,
  );
  const modes = found.map((facts) => facts.mode);
  // One source stating no mode while another says live is not enough to call it live.
  const mode = modes.includes(null) ? null : (CAUTION.find((candidate) => modes.includes(candidate)) ?? null);
  const generatedAt = found.map((facts) => facts.generatedAt).find((time) => time !== null) ?? null;
  return { mode, generatedAt };
}

/** "2026-11-25 23:31 UTC". */
export function utcMinute(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** How long before `now` the data was generated, in words ("4 minutes ago"); a time ahead of the clock is "just now". */
export function ageInWords(iso: string, now: number): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 60) return seconds < 0 ? 'just now (by this device’s clock)' : 'less than a minute ago';
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? plural(hours, 'hour') : plural(Math.floor(hours / 24), 'day');
}

export interface DataDescription {
  /** `simulated`, `replay`, `live` or `unknown`: the style the page gives it. */
  kind: DataMode | 'unknown';
  /** The headline, in capitals when the data is not live. */
  label: string;
  /** What that means for the report, and when the data was generated. */
  detail: string;
  /** For the sentence just above the pay button: "built from SIMULATED data (not real market data), generated …". */
  clause: string;
}

const WHAT: Record<DataMode | 'unknown', { label: string; meaning: string; words: string }> = {
  simulated: {
    label: 'SIMULATED DATA: not real market data',
    meaning:
      'Every price and reading in this report comes from a seeded market simulator, not from exchanges. ' +
      'It shows what the report looks like; it says nothing about the market.',
    words: 'SIMULATED data (not real market data)',
  },
  replay: {
    label: 'REPLAYED DATA: not live',
    meaning:
      'This report is built from venue answers recorded earlier and played back, not from current prices.',
    words: 'REPLAYED data (recorded earlier, not live)',
  },
  live: {
    label: 'Live data',
    meaning: 'This report is built from market data collected from the venues.',
    words: 'live data',
  },
  unknown: {
    label: 'DATA MODE NOT STATED: treat it as not live',
    meaning:
      'The payment request does not say whether the data is live, replayed or simulated. ' +
      'Do not rely on it as live market data.',
    words: 'data the server did not say is live',
  },
};

/** The words the page shows for the data on sale, with its age at `now`. */
export function describeData(facts: DataFacts, now: number): DataDescription {
  const kind = facts.mode ?? 'unknown';
  const what = WHAT[kind];
  const when = facts.generatedAt
    ? `Generated ${utcMinute(facts.generatedAt)} (${ageInWords(facts.generatedAt, now)}).`
    : 'The payment request does not say when the data was generated.';
  const clauseWhen = facts.generatedAt ? `, generated ${utcMinute(facts.generatedAt)}` : '';
  return {
    kind,
    label: what.label,
    detail: `${what.meaning} ${when}`,
    clause: `${what.words}${clauseWhen}`,
  };
}
