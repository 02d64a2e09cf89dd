// Number formatting for plain-language evidence statements.

/** A fraction as a signed percent: 0.0123 -> "+1.23%". */
export const signedPct = (fraction: number, digits = 2): string =>
  `${fraction >= 0 ? '+' : '-'}${Math.abs(fraction * 100).toFixed(digits)}%`;

/** A fraction as a percent: 0.0123 -> "1.23%". */
export const pct = (fraction: number, digits = 2): string => `${(fraction * 100).toFixed(digits)}%`;

export const usd = (x: number): string => {
  const abs = Math.abs(x);
  if (abs >= 1e9) return `$${(x / 1e9).toFixed(2)}B`;
  if (abs >= 1e6) return `$${(x / 1e6).toFixed(2)}M`;
  if (abs >= 1e3) return `$${(x / 1e3).toFixed(1)}K`;
  return `$${x.toFixed(0)}`;
};

export const listWords = (words: readonly string[]): string =>
  words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;

export const confidenceWord = (confidence: number): string =>
  confidence >= 65 ? 'high' : confidence >= 35 ? 'moderate' : 'low';
