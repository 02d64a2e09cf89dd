// llms.txt against the OpenAPI document: a link to an API path is labelled as the operation it reaches.
import { describe, expect, it } from 'vitest';
import { buildLlmsTxt } from '../generator/discovery/llms-txt.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';

const BASE_URL = 'https://emi.test';
const llms = buildLlmsTxt({ baseUrl: BASE_URL, hasBuyer: true });
const paths = buildOpenApiDocument({ baseUrl: BASE_URL }).paths as Record<
  string,
  { get: { summary: string } }
>;

/** A path template as a pattern: `{date}` is a UTC day, any other parameter one path segment. */
const templatePattern = (template: string) =>
  new RegExp(
    `^${template
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace('{date}', '\\d{4}-\\d{2}-\\d{2}')
      .replace(/\{[a-z]+\}/g, '[^/]+')}$`,
  );

describe('llms.txt', () => {
  it('labels every link to an API path with the summary of the operation it reaches', () => {
    const links = [...llms.matchAll(/^- \[([^\]]+)\]\(([^)]+)\)/gm)].map((m) => ({
      label: m[1] ?? '',
      path: new URL(m[2] ?? '').pathname,
    }));
    const apiLinks = links.filter((link) => link.path.startsWith('/api/') || link.path.startsWith('/arena/'));
    expect(apiLinks.map((link) => link.path)).toContain('/api/history/index.json');
    for (const { label, path } of apiLinks) {
      const template = Object.keys(paths).find((t) => templatePattern(t).test(path));
      expect(template, path).toBeDefined();
      expect(paths[template ?? '']?.get.summary.startsWith(label), `${label} -> ${path}`).toBe(true);
    }
  });
});
