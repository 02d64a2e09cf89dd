// /openapi.yaml is printed part by part and reused between builds; it must stay byte for byte what the yaml
// package prints for the whole document, whatever the examples hold and however often it is printed, and read as
// /openapi.json does under YAML 1.2 and under YAML 1.1 (PyYAML, SnakeYAML behind swagger-parser, Ruby's Psych).
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { OPENAPI_YAML_OPTIONS, openApiYaml } from '../generator/discovery/openapi-yaml.ts';
import { printBlockEntry } from '../generator/discovery/yaml-block.ts';

const whole = (doc: Record<string, unknown>) => YAML.stringify(doc, OPENAPI_YAML_OPTIONS);

const example = (generatedAt: string) => ({
  generated_at: generatedAt,
  // Block scalars: an empty line, leading spaces, a trailing newline and characters that need quoting.
  note: 'first line\n\n  indented line\nlast: line\n',
  empty: {},
  list: [],
  nested: { 'key: with colon': ['- dash', '#hash', ''], n: null, t: true },
});

describe('openApiYaml', () => {
  it('prints what YAML.stringify prints for the whole document, on a first and on a repeated call', () => {
    const doc = buildOpenApiDocument({
      baseUrl: 'https://emi.test',
      examples: { '/api/market-regime.php': example('2026-01-05T12:00:00.000Z') },
    });
    expect(openApiYaml(doc)).toBe(whole(doc));
    expect(openApiYaml(doc)).toBe(whole(doc));
  });

  it('prints a changed example and a changed base URL, not the text kept from the last call', () => {
    const first = buildOpenApiDocument({
      baseUrl: 'https://emi.test',
      examples: { '/api/main-brain.php': example('2026-01-05T12:00:00.000Z') },
    });
    const second = buildOpenApiDocument({
      baseUrl: 'https://other.test/base',
      examples: { '/api/main-brain.php': example('2026-01-05T12:20:00.000Z') },
    });
    expect(openApiYaml(first)).toBe(whole(first));
    const printed = openApiYaml(second);
    expect(printed).toBe(whole(second));
    expect(printed).toContain('2026-01-05T12:20:00.000Z');
    expect(printed).not.toContain('2026-01-05T12:00:00.000Z');
    expect(printed).not.toContain('https://emi.test');
  });
});

/** Strings a YAML 1.2 reader takes as strings when plain, and a YAML 1.1 reader as something else. */
const YAML_1_1_TRAPS = {
  timer: '51:00', // sexagesimal: 3060
  clock: '1:02:03.5', // sexagesimal float
  updated: '2026-11-26T04:09:00.000Z', // timestamp
  spaced: '2026-11-26 04:09:00',
  day: '2026-11-26',
  answers: ['yes', 'no', 'Yes', 'NO', 'on', 'Off', 'y', 'n', 'Y', 'N'],
  numbers: ['0777', '1_000', '0b101', '+12', '.5', '3.', '1e5', '0x1F', '0o17', '.NaN'],
  value: '=', // YAML 1.1's "value" type: PyYAML and SnakeYAML refuse to load it
  y: 'key that YAML 1.1 reads as true',
  on: { n: 'nested keys too', '12:30': 'a sexagesimal key' },
};

/** /openapi.json as a client reads it. */
const asJson = (doc: unknown): unknown => JSON.parse(`${JSON.stringify(doc, null, 2)}\n`);

describe('openapi.yaml under YAML 1.1 and 1.2', () => {
  /** openapi.yaml as a build prints it, with a run's examples: a countdown and timestamps. */
  const built = (examples: Record<string, unknown>) => {
    const doc = buildOpenApiDocument({ baseUrl: 'https://emi.test', examples });
    // Twice: the second text comes from the entries kept from the first.
    return { json: asJson(doc), texts: [openApiYaml(doc), openApiYaml(doc)] };
  };

  it('reads as openapi.json with YAML.parse in version 1.1 and in the default 1.2', () => {
    const run = { timer: '51:00', updated: '2026-11-26T04:09:00.000Z', day: '2026-11-26', signal: 'on' };
    const { json, texts } = built({
      '/api/market-regime.php': { ...example('2026-11-26T04:09:00.000Z'), ...run },
    });
    for (const text of texts) {
      expect(YAML.parse(text, { version: '1.1' })).toEqual(json);
      expect(YAML.parse(text)).toEqual(json);
      // Readable: quoted, neither escaped nor folded.
      expect(text).toContain('timer: "51:00"');
      expect(text).toContain('updated: "2026-11-26T04:09:00.000Z"');
    }
  });

  it('reads the same under both for every kind of string YAML 1.1 reads as something else, keys too', () => {
    const { json, texts } = built({
      '/api/market-regime.php': { ...example('2026-11-26T04:09:00.000Z'), ...YAML_1_1_TRAPS },
      '/api/main-brain.php': YAML_1_1_TRAPS,
    });
    for (const text of texts) {
      expect(YAML.parse(text, { version: '1.1' })).toEqual(json);
      expect(YAML.parse(text)).toEqual(json);
    }
  });

  it('prints random strings that YAML 1.1 reads specially as the yaml package does, and they read back', () => {
    const ATOMS = [
      '0',
      '1',
      '5',
      '7',
      '9',
      '_',
      ':',
      '.',
      '-',
      '+',
      'e',
      'x',
      'b',
      'o',
      'T',
      'Z',
      ' ',
      'y',
      'n',
    ];
    const WORDS = ['yes', 'No', 'ON', 'off', '~', '2026', '-01', '-5', '12:00', 'inf', 'NaN', '<<', '=', 'a'];
    let state = 2026;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    const pick = (items: readonly string[]) => items[Math.floor(next() * items.length)] ?? '';
    let printed = 0;
    for (let i = 0; i < 8000; i += 1) {
      const text = Array.from({ length: 1 + Math.floor(next() * 6) }, () =>
        pick(next() < 0.7 ? ATOMS : WORDS),
      ).join('');
      for (const [key, value] of [
        ['k', text],
        [text, [text]],
      ] as const) {
        const mine = printBlockEntry(key, value);
        const expected = YAML.stringify({ [key]: value }, OPENAPI_YAML_OPTIONS);
        if (mine !== null) {
          printed += 1;
          expect(mine, JSON.stringify({ key, value })).toBe(expected);
        }
        for (const version of ['1.1', '1.2'] as const)
          expect(YAML.parse(expected, { version }), `${version} ${JSON.stringify({ key, value })}`).toEqual({
            [key]: value,
          });
      }
    }
    expect(printed).toBeGreaterThan(12000);
  });
});
