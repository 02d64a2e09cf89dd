// CSV twins of the history files (RFC 4180): the same columns in the same order, null as an empty field.
import type { HistoryValue } from '../../schemas/history.ts';

const quote = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

function field(value: HistoryValue | undefined): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'number' ? String(value) : quote(value);
}

export function toCsv(columns: readonly string[], rows: ReadonlyArray<Record<string, HistoryValue>>): string {
  const lines = [
    columns.map(quote).join(','),
    ...rows.map((row) => columns.map((c) => field(row[c])).join(',')),
  ];
  return `${lines.join('\r\n')}\r\n`;
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
