// /openapi.yaml is printed part by part and reused between builds; it must stay byte for byte what the yaml
// package prints for the whole document, whatever the examples hold and however often it is printed.
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { openApiYaml } from '../generator/discovery/openapi-yaml.ts';

const whole = (doc: Record<string, unknown>) =>
  YAML.stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });

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
