// The YAML layout printer (generator/discovery/yaml-block.ts) must print what the yaml package prints, byte for
// byte, or give up (null) so that the yaml package prints it: checked on random JSON full of characters that YAML
// quotes, indents or reads specially, and on the real OpenAPI document.
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { YAML_OPTIONS, printBlockEntry } from '../generator/discovery/yaml-block.ts';

const yamlPackage = (key: string, value: unknown) => YAML.stringify({ [key]: value }, YAML_OPTIONS);

/** A small deterministic generator (linear congruential), so that a failure can be replayed. */
function randomJson(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const ATOMS = [
    'a',
    'B',
    'x1',
    ' ',
    ':',
    '#',
    '-',
    '?',
    '"',
    "'",
    '\\',
    '{',
    '}',
    '[',
    ']',
    ',',
    '&',
    '*',
    '!',
    '|',
    '>',
    '%',
    '@',
    '`',
    'é',
    '’',
    '\t',
    '\n',
    '0',
    '1',
    '.',
    'e',
    'true',
    'null',
    '~',
    'yes',
    '2026-01-05T12:00:00Z',
    '  ',
    '\n\n',
    ' \n',
    'http://x',
    '$',
    '=',
    '<',
    '+',
    '_',
    '/',
    '---',
    '...',
    'Z',
    'T',
    '12',
    '0x',
    'e5',
    '.inf',
    'Infinity',
    'NaN',
    "it's",
    '(',
    ')',
    'x',
    'o',
    'F',
    '2026-01-05',
    ' or ',
    '\u2028',
    '\u00a0',
    '\ufeff',
    'ü',
    '—',
    '…',
    '😀',
    '\u0007',
    'False',
    'NULL',
    'TRUE',
  ];
  const text = () => Array.from({ length: Math.floor(next() * 10) }, () => pick(ATOMS)).join('');
  const NUMBERS = [0, 1, -1, 1.5, 1e21, 1e-7, 0.1 + 0.2, 123456789, -0.25, 2 ** 53, 5e-324, -0];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.5) return pick([text, () => pick(NUMBERS), () => null, () => true, () => false])();
    if (r < 0.75)
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 4) }, () => [text(), value(depth + 1)]),
      );
    return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
  };
  return { key: text, value: () => value(0), text };
}

describe('printBlockEntry', () => {
  it('prints random JSON as the yaml package does, or gives up', () => {
    let printed = 0;
    for (const seed of [1, 7, 99]) {
      const random = randomJson(seed);
      for (let i = 0; i < 4000; i += 1) {
        const key = random.key();
        const value = random.value();
        const mine = printBlockEntry(key, value);
        if (mine === null) continue;
        printed += 1;
        expect(mine, JSON.stringify({ seed, i, key, value })).toBe(yamlPackage(key, value));
      }
    }
    expect(printed).toBeGreaterThan(6000); // most of them: giving up is the exception
  });

  it('prints random strings, as keys and as values, as the yaml package does', () => {
    const random = randomJson(2026);
    for (let i = 0; i < 30000; i += 1) {
      const text = random.text();
      for (const [key, value] of [
        ['k', text],
        [text, 1],
        ['k', { [text]: [text] }],
      ] as const) {
        const mine = printBlockEntry(key, value);
        if (mine !== null) expect(mine, JSON.stringify({ key, value })).toBe(yamlPackage(key, value));
      }
    }
  });

  it('prints every entry of the OpenAPI document itself, identical to the yaml package', () => {
    const doc = buildOpenApiDocument({
      baseUrl: 'https://emi.test',
      examples: {
        '/api/main-brain.php': {
          note: 'first line\n\n  indented line\nlast: line\n',
          directive: '%YAML looks like a directive\n--- and a document start',
          nested: { 'key: with colon': ['- dash', '#hash', ''], n: null, t: true, z: -0 },
        },
      },
    }) as Record<string, unknown> & { paths: Record<string, unknown> };
    const entries = [...Object.entries(doc).filter(([key]) => key !== 'paths'), ...Object.entries(doc.paths)];
    const given = entries.filter(([key, value]) => printBlockEntry(key, value) !== null);
    // Only the path holding -0 (which the yaml package prints as "-0") is left to the yaml package.
    expect(entries.length - given.length).toBe(1);
    for (const [key, value] of given) expect(printBlockEntry(key, value), key).toBe(yamlPackage(key, value));
  });

  it('gives up on what it does not know', () => {
    expect(printBlockEntry('zero', -0)).toBeNull();
    expect(printBlockEntry('missing', [undefined])).toBeNull();
    expect(printBlockEntry('date', new Date(0))).toBeNull();
    expect(printBlockEntry('fn', () => 1)).toBeNull();
  });
});
