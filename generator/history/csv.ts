// CSV twins of the history files (RFC 4180): the same columns in the same order, null as an empty field.
import type { HistoryValue } from '../../schemas/history.ts';

const quote = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

function field(value: HistoryValue | undefined): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'number' ? String(value) : quote(value);
}

export function toCsv(
  columns: readonly string[],
  rows: ReadonlyArray<Record<string, HistoryValue>>,
  record: (row: Record<string, HistoryValue>) => string = (row) => csvRecord(columns, row),
): string {
  return `${[columns.map(quote).join(','), ...rows.map(record)].join('\r\n')}\r\n`;
}

/** One row's record (its fields in the order of `columns`), without the line break. */
export function csvRecord(columns: readonly string[], row: Record<string, HistoryValue>): string {
  return columns.map((c) => field(row[c])).join(',');
}

/** Splits CSV text into records of raw fields (quoted fields unquoted); used by tests and readers of the twins. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        current += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else current += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(current);
      current = '';
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      if (c === '\r') i += 1;
      record.push(current);
      records.push(record);
      record = [];
      current = '';
    } else current += c;
  }
  if (current !== '' || record.length > 0) records.push([...record, current]);
  return records;
}
