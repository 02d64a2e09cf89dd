// A server's Retry-After (RFC 9110 10.2.3: delay-seconds or an HTTP date) as seconds to wait, read the same way by
// every client of the paywall: `emi buy`, the buyer page and the MCP paid tools. Zod-free and DOM-free: the
// browser bundle imports it.

/** An HTTP date as servers send it (IMF-fixdate, or the obsolete RFC 850 and asctime forms): a weekday name first. */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/** Seconds from a Retry-After header, kept within 1..maxSeconds; null without a readable one. */
export function retryAfterSeconds(
  header: string | null | undefined,
  now: number,
  maxSeconds: number,
): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  // Only the two forms RFC 9110 allows: Date.parse alone would read "-5", "1.5" or "5, 10" as dates in the past.
  const seconds = /^\d+$/.test(trimmed)
    ? Number(trimmed)
    : HTTP_DATE.test(trimmed)
      ? (Date.parse(trimmed) - now) / 1000
      : NaN;
  return Number.isFinite(seconds) ? Math.min(maxSeconds, Math.max(1, Math.ceil(seconds))) : null;
}
