// Prints JSON data as the yaml package prints it (`YAML.stringify(value, options)` with one of the options below),
// byte for byte, at a fraction of its cost: the OpenAPI document's examples change on every run, and printing them
// with the yaml package was the largest step of a build after `emi generate`. The layout of block mappings and
// sequences is written here; each string is printed by the yaml package itself (its quoting rules are the part
// worth not copying), once per distinct string. Anything else returns null and the caller prints with the yaml
// package. test/discovery-yaml-block.test.ts and test/discovery-openapi-yaml.test.ts compare both on random and
// on real documents.
import YAML from 'yaml';
import type { ScalarTag, Tags } from 'yaml';

/** The yaml package's output for YAML 1.2 readers. */
export const YAML_1_2 = { aliasDuplicateObjects: false, lineWidth: 0 } as const;

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
 * The same, read the same by YAML 1.1 readers too (PyYAML, SnakeYAML behind swagger-parser, Ruby's Psych): the
 * yaml package (its `compat` option) also quotes a string that the YAML 1.1 schema would read as something else,
 * such as `51:00` (sexagesimal 3060), `2026-01-05T12:00:00Z` (a timestamp), `yes`, `off`, `n`, `0777` or `=`.
 */
export const YAML_1_1_SAFE = { ...YAML_1_2, compat: YAML_1_1_TAGS } as const;

export type YamlOptions = typeof YAML_1_2 | typeof YAML_1_1_SAFE;

/**
 * Strings the yaml package prints as they are, known without asking it (a call per string is most of the cost):
 * one line of common characters that starts with no YAML indicator, holds no `: ` or ` #`, ends in neither a
 * space nor `:`, and cannot be read as a null, a boolean or a number (nor, with a `compat` schema, as any of its
 * types: the package's own tests decide that). The tests check this against the package.
 */
const PLAIN_CHARS = /^[A-Za-z0-9(/$][\x20-\x7E\u00C0-\u024F\u2010-\u2027\u2030-\u205E]*$/;
const NOT_PLAIN = /: | #|[ :]$/;
const RESERVED = /^(?:true|false|null|True|False|Null|TRUE|FALSE|NULL)$/;
/** A number-like start is plain only with a character no YAML 1.2 core number has. */
const NUMBER_START = /^[0-9]/;
const NUMBER_CHARS = /^[0-9a-fA-FxXoO.+\-_]*$/;

/** How strings are printed under one of the options: known plain strings, and the texts the package printed. */
interface Style {
  options: YamlOptions;
  /** The tests of the `compat` schema's scalar types (null, bool, int, float, timestamp...), from the package. */
  compatTests: readonly RegExp[];
  values: Map<string, string>;
  keys: Map<string, string>;
}

/**
 * The same tests the yaml package makes before printing a string plain (stringify/stringifyString.js): a string
 * that one of the `compat` schema's default tags would read as something else is quoted.
 */
function compatTestsOf(options: YamlOptions): RegExp[] {
  const { compat } = new YAML.Document(null, options).schema;
  return (compat ?? []).flatMap((tag) =>
    tag.default && tag.tag !== 'tag:yaml.org,2002:str' && 'test' in tag && tag.test ? [tag.test] : [],
  );
}

/** One style for each of the options above. */
const styles = new Map<YamlOptions, Style>();
function styleOf(options: YamlOptions): Style {
  let style = styles.get(options);
  if (style === undefined) {
    style = { options, compatTests: compatTestsOf(options), values: new Map(), keys: new Map() };
    styles.set(options, style);
  }
  return style;
}

const isPlain = (text: string, style: Style): boolean =>
  text.length <= 1000 &&
  PLAIN_CHARS.test(text) &&
  !NOT_PLAIN.test(text) &&
  !RESERVED.test(text) &&
  !(NUMBER_START.test(text) && NUMBER_CHARS.test(text)) &&
  !style.compatTests.some((test) => test.test(text));

/**
 * A string as the yaml package prints it as a mapping's value (not at the top of a document, where a line such as
 * `---` would end the document): one line, or a block scalar whose lines are indented by two spaces.
 */
function valueText(text: string, style: Style): string {
  if (isPlain(text, style)) return text;
  let printed = style.values.get(text);
  if (printed === undefined) {
    printed = YAML.stringify({ k: text }, style.options).slice('k: '.length).replace(/\n$/, '');
    style.values.set(text, printed);
  }
  return printed;
}

/**
 * A string as the yaml package prints it as a mapping's key, at the top of the document or nested (at the top, a
 * key such as `---` would start a document), or null when not on one line.
 */
function keyText(text: string, atTop: boolean, style: Style): string | null {
  if (isPlain(text, style)) return text;
  const cacheKey = `${atTop ? 't' : 'n'}${text}`;
  let printed = style.keys.get(cacheKey);
  if (printed === undefined) {
    const prefix = atTop ? '' : 'k:\n  ';
    const whole = YAML.stringify(atTop ? { [text]: null } : { k: { [text]: null } }, style.options);
    const line = whole.startsWith(prefix) ? whole.slice(prefix.length) : '';
    printed = line.endsWith(': null\n') && line.indexOf('\n') === line.length - 1 ? line.slice(0, -7) : '\n';
    style.keys.set(cacheKey, printed);
  }
  return printed === '\n' ? null : printed;
}

/**
 * A scalar placed after `key:` or `- ` at `indent`: a block scalar's lines move to two spaces deeper than
 * `indent`. Null when the scalar is not one this printer knows.
 */
function scalarText(value: unknown, indent: string, style: Style): string | null {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number')
    return Number.isFinite(value) && !Object.is(value, -0) ? String(value) : null;
  if (typeof value !== 'string') return null;
  const text = valueText(value, style);
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
function afterMarker(value: unknown, indent: string, style: Style): string | null {
  if (Array.isArray(value)) {
    if (value.length === 0) return ' []\n';
    const items = sequence(value, `${indent}  `, style);
    return items === null ? null : `\n${items}`;
  }
  if (isPlainObject(value)) {
    if (Object.keys(value).length === 0) return ' {}\n';
    const entries = mapping(value, `${indent}  `, style);
    return entries === null ? null : `\n${entries}`;
  }
  const scalar = scalarText(value, indent, style);
  return scalar === null ? null : ` ${scalar}\n`;
}

function mapping(value: Record<string, unknown>, indent: string, style: Style): string | null {
  let out = '';
  for (const [key, child] of Object.entries(value)) {
    const printedKey = keyText(key, indent === '', style);
    if (printedKey === null || child === undefined) return null;
    const rest = afterMarker(child, indent, style);
    if (rest === null) return null;
    out += `${indent}${printedKey}:${rest}`;
  }
  return out;
}

function sequence(value: unknown[], indent: string, style: Style): string | null {
  let out = '';
  for (const item of value) {
    if (item === undefined) return null;
    const nonEmpty =
      (Array.isArray(item) && item.length > 0) || (isPlainObject(item) && Object.keys(item).length);
    if (nonEmpty) {
      // A nested mapping or sequence starts on the dash's line: its first indentation becomes the dash.
      const nested = Array.isArray(item)
        ? sequence(item, `${indent}  `, style)
        : mapping(item as Record<string, unknown>, `${indent}  `, style);
      if (nested === null) return null;
      out += `${indent}- ${nested.slice(indent.length + 2)}`;
    } else {
      const rest = afterMarker(item, indent, style);
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
export function printBlockEntry(key: string, value: unknown, options: YamlOptions = YAML_1_2): string | null {
  return mapping({ [key]: value }, '', styleOf(options));
}
