// The paywall's log: one JSON line per event on stderr, every level written (a sale is `info` and is the only
// record of it on the host once the payment book forgets the payment), and two guards the core applies before a
// line is written: the same (event, txid) at most once per window, with a count of the repeats it left out, and no
// payer's address in a detail (the txid identifies the payment; the payer is on chain for whoever needs it).
import type { PaywallLogEntry } from './decide.ts';

/** Writes one entry as a JSON line on stderr, stamped with the time. */
export const logToStderr = (entry: PaywallLogEntry): void => {
  console.error(JSON.stringify({ at: new Date().toISOString(), ...entry }));
};

/** An Algorand address: 58 characters of base32 (a txid has 52). */
const ALGORAND_ADDRESS = /\b[A-Z2-7]{58}\b/g;

/** The detail without Algorand addresses other than `keep` (the payees, whom the operator knows). */
export const redactAddresses = (detail: string, keep: ReadonlySet<string>): string =>
  detail.replace(ALGORAND_ADDRESS, (address) => (keep.has(address) ? address : '[address]'));

/** How long the same (event, txid) is written once: a buyer's loop of retries is one line per window. */
export const REPEAT_WINDOW_MS = 10_000;
/** Bound on the (event, txid) pairs remembered: past it the oldest are forgotten (and may be written again). */
const MAX_REMEMBERED = 10_000;

/**
 * The core's logger: `warn` and `error` entries naming a txid are written once per REPEAT_WINDOW_MS for each
 * (event, txid), the next one written after the window carrying `suppressed` (how many were left out since the
 * last). `info` entries (a sale, a redelivery, sales resumed) are always written: each is a delivery. Details lose
 * every address but the payees'. Per process (per isolate on a Worker, where the window is per isolate too).
 */
export function guardedLog(
  write: (entry: PaywallLogEntry) => void,
  payees: ReadonlySet<string>,
  now: () => number,
): (entry: PaywallLogEntry) => void {
  const recent = new Map<string, { since: number; suppressed: number }>();
  return (entry) => {
    const redacted =
      entry.detail === undefined ? entry : { ...entry, detail: redactAddresses(entry.detail, payees) };
    if (entry.level === 'info' || entry.txid === undefined) return write(redacted);
    const key = `${entry.event} ${entry.txid}`;
    const at = now();
    const seen = recent.get(key);
    if (seen && at - seen.since < REPEAT_WINDOW_MS) {
      seen.suppressed += 1;
      return;
    }
    recent.delete(key); // re-inserted: insertion order stays age order
    recent.set(key, { since: at, suppressed: 0 });
    if (recent.size > MAX_REMEMBERED) recent.delete(recent.keys().next().value as string);
    write(seen?.suppressed ? { ...redacted, suppressed: seen.suppressed } : redacted);
  };
}
