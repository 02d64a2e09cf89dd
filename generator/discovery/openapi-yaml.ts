// /openapi.yaml: the OpenAPI document as YAML. Printing the whole document with the yaml package took a large
// part of each build, although most of it (the component schemas, most paths) is the same from run to run. A
// block mapping prints as its entries one after another, and a nested entry as the same text indented by two
// spaces, so each top-level entry and each path is printed on its own and reused while its JSON is unchanged;
// the result is byte for byte what `YAML.stringify(document, OPENAPI_YAML_OPTIONS)` prints for the whole document
// (a test compares them). Those options quote every string a YAML 1.1 reader would read as something else (a
// timestamp, `51:00`, `yes`...), so that PyYAML or swagger-parser read the same document as /openapi.json.
// The texts can also be kept between processes (`printedEntries`, `keepPrinted`; see site/derived-cache.ts).
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { YAML_OPTIONS, printBlockEntry } from './yaml-block.ts';

/** The yaml package's options /openapi.yaml is printed with: read the same under YAML 1.2 and YAML 1.1. */
export const OPENAPI_YAML_OPTIONS = YAML_OPTIONS;

/** Entries split one level further: each path is printed on its own. */
const SPLIT = new Set(['paths']);

/** The text printed for an entry, with a digest of the JSON it was printed from. */
export interface PrintedEntry {
  digest: string;
  yaml: string;
}

/** The last text printed for each entry. */
const printed = new Map<string, PrintedEntry>();
/** How many entries were printed (not reused) in this process. */
let printedAnew = 0;

function printEntry(cacheKey: string, key: string, value: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(value)).digest('base64');
  const kept = printed.get(cacheKey);
  if (kept?.digest === digest) return kept.yaml;
  // The layout printed here, the yaml package for whatever that printer does not know (see yaml-block.ts).
  const yaml = printBlockEntry(key, value) ?? YAML.stringify({ [key]: value }, OPENAPI_YAML_OPTIONS);
  printed.set(cacheKey, { digest, yaml });
  printedAnew += 1;
  return yaml;
}

/** How many entries were printed rather than reused so far: the texts to keep changed when it did. */
export const printCount = (): number => printedAnew;

/** The texts of the entries of the last document printed. */
export function printedEntries(): Record<string, PrintedEntry> {
  const entries: Record<string, PrintedEntry> = {};
  for (const key of lastEntries) {
    const entry = printed.get(key);
    if (entry) entries[key] = entry;
  }
  return entries;
}

/** Takes texts saved by `printedEntries` (printed by the same code), reused while their JSON is unchanged. */
export function keepPrinted(saved: Readonly<Record<string, PrintedEntry>>): void {
  for (const [key, entry] of Object.entries(saved))
    if (!printed.has(key) && typeof entry?.digest === 'string' && typeof entry.yaml === 'string')
      printed.set(key, entry);
}

/** Indents every non-empty line by two spaces (empty lines inside block scalars stay empty, as yaml prints them). */
const indent = (text: string): string => text.replace(/^(?=.)/gm, '  ');

const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;

/** The entries of the last document printed. */
let lastEntries: string[] = [];

export function openApiYaml(document: Readonly<Record<string, unknown>>): string {
  let out = '';
  const entries: string[] = [];
  for (const [key, value] of Object.entries(document)) {
    if (SPLIT.has(key) && isMapping(value)) {
      out += `${key}:\n`;
      for (const [child, childValue] of Object.entries(value)) {
        entries.push(`${key}\n${child}`);
        out += indent(printEntry(`${key}\n${child}`, child, childValue));
      }
    } else {
      entries.push(key);
      out += printEntry(key, key, value);
    }
  }
  lastEntries = entries;
  return out;
}
