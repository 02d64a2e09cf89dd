// Where long names may wrap: `teacher_brain.metrics.calibration[].mean_forecast_probability` or
// `/api/x402-market-regime.php` in a table cell is one unbreakable word to the browser, so either the table grows
// wider than its column or, with `overflow-wrap: anywhere`, it is cut every few letters. A <wbr> after each
// separator lets it wrap between its parts and nowhere else; copied text is unchanged (a <wbr> adds no character).

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Separators after which a field name may break: the dots of a path and the `[]` of an array item. */
export const FIELD_SEPARATORS = '.]';
/** Separators after which a URL path or an identifier may break. */
export const PATH_SEPARATORS = '/.-_]';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
const escapeClass = (chars: string): string => chars.replace(/[\]\\^-]/g, (c) => `\\${c}`);

/**
 * `text` as HTML, escaped, with a <wbr> after every run of `separators` that stands between two other characters
 * (never at either end: "/api" does not break after its leading slash, "calibration[]." breaks after the dot only).
 */
export function withBreakPoints(text: unknown, separators: string = PATH_SEPARATORS): string {
  const source = text === null || text === undefined ? '' : String(text);
  if (separators.length === 0) return escapeHtml(source);
  const set = escapeClass(separators);
  const runs = new RegExp(`(?<=[^${set}])([${set}]+)(?=[^${set}])`, 'g');
  return source
    .split(runs)
    .map((part, i) => (i % 2 === 1 ? `${escapeHtml(part)}<wbr>` : escapeHtml(part)))
    .join('');
}
