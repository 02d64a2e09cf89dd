// Day files this process has already read or written, by file identity. A day file gains a row every run, and each
// run would otherwise read and re-check it whole; a long-running process (`emi up`, `emi schedule`) now reads each
// version once. Identity is safe here: the generator never rewrites a file in place (a new file is renamed over
// it) and each generation hard-links the previous one's files, so the same device, inode, size and modification
// time mean the same bytes.
import type { HistoryRow } from '../../schemas/history.ts';

/** Versions kept: a few per resource (the day being written and the one before it). */
const KEPT_FILES = 64;
const rowsByFile = new Map<string, readonly HistoryRow[]>();

export function rememberRows(identity: string, rows: readonly HistoryRow[]): void {
  rowsByFile.delete(identity);
  rowsByFile.set(identity, rows);
  const oldest = rowsByFile.keys().next().value;
  if (rowsByFile.size > KEPT_FILES && oldest !== undefined) rowsByFile.delete(oldest);
}

/** The rows of a file version read or written before (a copy), or undefined. */
export function knownRows(identity: string): HistoryRow[] | undefined {
  const rows = rowsByFile.get(identity);
  return rows && [...rows];
}
