// Prints JSON data as the yaml package prints it (`YAML.stringify(value, YAML_OPTIONS)`), byte for byte, at a
// fraction of its cost: the OpenAPI document's examples change on every run, and printing them with the yaml
// package was the largest step of a build after `emi generate`. The layout of block mappings and sequences is
// written here; each string is printed by the yaml package itself (its quoting rules are the part
// worth not copying), once per distinct string. Anything else returns null and the caller prints with the yaml
// package. test/discovery-yaml-block.test.ts and test/discovery-openapi-yaml.test.ts compare both on random and
// on real documents.
import YAML from 'yaml';
import type { ScalarTag, Tags } from 'yaml';

/**
 * YAML 1.1's "value" type, a plain `=`, which PyYAML and SnakeYAML refuse to load; the yaml package's YAML 1.1
 * schema leaves it out.
 */
const YAML_1_1_VALUE: ScalarTag = {
  tag: 'tag:yaml.org,2002:value',
  default: true,
  test: /^=$/,
  resolve: (text) => text,
};

/** The yaml package's YAML 1.1 schema, and the "value" type. */
const YAML_1_1_TAGS: Tags = [
  ...(new YAML.Document(null, { compat: 'yaml-1.1' }).schema.compat ?? []),
  YAML_1_1_VALUE,
];

/**
 * The yaml package's options, read the same by YAML 1.2 and YAML 1.1 readers (PyYAML, SnakeYAML behind
 * swagger-parser, Ruby's Psych): with its `compat` option the package also quotes a string that the YAML 1.1
 * schema would read as something else, such as `51:00` (sexagesimal 3060), `2026-01-05T12:00:00Z` (a timestamp),
 * `yes`, `off`, `n`, `0777` or `=`.
 */
export const YAML_OPTIONS = { aliasDuplicateObjects: false, lineWidth: 0, compat: YAML_1_1_TAGS } as const;

/**
 * Strings the yaml package prints as they are, known without asking it (a call per string is most of the cost):
 * one line of common characters that starts with no YAML indicator, holds no `: ` or ` #`, ends in neither a
 * space nor `:`, and cannot be read as a null, a boolean or a number, nor as any type of the YAML 1.1 schema
 * (COMPAT_TESTS: the package's own tests decide that). The tests check this against the package.
 */
const PLAIN_CHARS = /^[A-Za-z0-9(/$][\x20-\x7E\u00C0-\u024F\u2010-\u2027\u2030-\u205E]*$/;
const NOT_PLAIN = /: | #|[ :]$/;
const RESERVED = /^(?:true|false|null|True|False|Null|TRUE|FALSE|NULL)$/;
/** A number-like start is plain only with a character no YAML 1.2 core number has. */
const NUMBER_START = /^[0-9]/;
const NUMBER_CHARS = /^[0-9a-fA-FxXoO.+\-_]*$/;

/**
 * The tests of the `compat` schema's scalar types (null, bool, int, float, timestamp...), which the yaml package
 * makes before printing a string plain (stringify/stringifyString.js): a string one of them matches is quoted.
 */
const COMPAT_TESTS: readonly RegExp[] = (new YAML.Document(null, YAML_OPTIONS).schema.compat ?? []).flatMap(
  (tag) =>
    tag.default && tag.tag !== 'tag:yaml.org,2002:str' && 'test' in tag && tag.test ? [tag.test] : [],
);

/** The texts the yaml package printed, per string. */
const printedValues = new Map<string, string>();
const printedKeys = new Map<string, string>();

const isPlain = (text: string): boolean =>
  text.length <= 1000 &&
  PLAIN_CHARS.test(text) &&
  !NOT_PLAIN.test(text) &&
  !RESERVED.test(text) &&
  !(NUMBER_START.test(text) && NUMBER_CHARS.test(text)) &&
  !COMPAT_TESTS.some((test) => test.test(text));

/**
 * A string as the yaml package prints it as a mapping's value (not at the top of a document, where a line such as
 * `---` would end the document): one line, or a block scalar whose lines are indented by two spaces.
 */
function valueText(text: string): string {
  if (isPlain(text)) return text;
  let printed = printedValues.get(text);
  if (printed === undefined) {
    printed = YAML.stringify({ k: text }, YAML_OPTIONS).slice('k: '.length).replace(/\n$/, '');
    printedValues.set(text, printed);
  }
  return printed;
}

/**
 * A string as the yaml package prints it as a mapping's key, at the top of the document or nested (at the top, a
 * key such as `---` would start a document), or null when not on one line.
 */
function keyText(text: string, atTop: boolean): string | null {
  if (isPlain(text)) return text;
  const cacheKey = `${atTop ? 't' : 'n'}${text}`;
  let printed = printedKeys.get(cacheKey);
  if (printed === undefined) {
    const prefix = atTop ? '' : 'k:\n  ';
    const whole = YAML.stringify(atTop ? { [text]: null } : { k: { [text]: null } }, YAML_OPTIONS);
    const line = whole.startsWith(prefix) ? whole.slice(prefix.length) : '';
    printed = line.endsWith(': null\n') && line.indexOf('\n') === line.length - 1 ? line.slice(0, -7) : '\n';
    printedKeys.set(cacheKey, printed);
  }
  return printed === '\n' ? null : printed;
}

/**
 * A scalar placed after `key:` or `- ` at `indent`: a block scalar's lines move to two spaces deeper than
 * `indent`. Null when the scalar is not one this printer knows.
 */
function scalarText(value: unknown, indent: string): string | null {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number')
    return Number.isFinite(value) && !Object.is(value, -0) ? String(value) : null;
  if (typeof value !== 'string') return null;
  const text = valueText(value);
  if (!text.includes('\n')) return text;
  const [header, ...lines] = text.split('\n');
  if (!/^[|>][-+]?$/.test(header ?? '')) return null; // e.g. an indentation indicator: left to the yaml package
  if (!lines.every((line) => line === '' || line.startsWith('  '))) return null;
  // Two spaces deeper than `indent`: the yaml package indents the first line even when it is empty, and leaves
  // later empty lines empty.
  const moved = lines.map((line, i) => (line === '' && i > 0 ? '' : `${indent}${line === '' ? '  ' : line}`));
  return [header, ...moved].join('\n');
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;

/** `key:` or `-` followed by the value, for a value at `indent`; null when the value is not JSON it knows. */
function afterMarker(value: unknown, indent: string): string | null {
  if (Array.isArray(value)) {
    if (value.length === 0) return ' []\n';
    const items = sequence(value, `${indent}  `);
    return items === null ? null : `\n${items}`;
  }
  if (isPlainObject(value)) {
    if (Object.keys(value).length === 0) return ' {}\n';
    const entries = mapping(value, `${indent}  `);
    return entries === null ? null : `\n${entries}`;
  }
  const scalar = scalarText(value, indent);
  return scalar === null ? null : ` ${scalar}\n`;
}

function mapping(value: Record<string, unknown>, indent: string): string | null {
  let out = '';
  for (const [key, child] of Object.entries(value)) {
    const printedKey = keyText(key, indent === '');
    if (printedKey === null || child === undefined) return null;
    const rest = afterMarker(child, indent);
    if (rest === null) return null;
    out += `${indent}${printedKey}:${rest}`;
  }
  return out;
}

function sequence(value: unknown[], indent: string): string | null {
  let out = '';
  for (const item of value) {
    if (item === undefined) return null;
    const nonEmpty =
      (Array.isArray(item) && item.length > 0) || (isPlainObject(item) && Object.keys(item).length);
    if (nonEmpty) {
      // A nested mapping or sequence starts on the dash's line: its first indentation becomes the dash.
      const nested = Array.isArray(item)
        ? sequence(item, `${indent}  `)
        : mapping(item as Record<string, unknown>, `${indent}  `);
      if (nested === null) return null;
      out += `${indent}- ${nested.slice(indent.length + 2)}`;
    } else {
      const rest = afterMarker(item, indent);
      if (rest === null) return null;
      out += `${indent}-${rest}`;
    }
  }
  return out;
}

/**
 * `{ [key]: value }` as the yaml package prints it with `options` (YAML 1.2 alone unless told), or null when it is
 * not data this printer knows.
 */
export function printBlockEntry(key: string, value: unknown): string | null {
  return mapping({ [key]: value }, '');
}
