// llms.txt against the OpenAPI document: a link to an API path is labelled as the operation it reaches.
import { describe, expect, it } from 'vitest';
import { buildLlmsTxt } from '../generator/discovery/llms-txt.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { endpointDocsPath } from '../generator/discovery/docs-paths.ts';
import { MCP_PATH } from '../schemas/delivery.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';

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

describe('llms.txt lists what an agent needs', () => {
  const linked = [...llms.matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map((m) => new URL(m[1] ?? '').pathname);

  it('links the MCP guide, the arena rules and track record, and every paid endpoint’s docs page', () => {
    const needed = [
      '/docs/agents/',
      '/docs/arena-rules/',
      '/docs/track-record/',
      ...PAID_RESOURCES.map((resource) => endpointDocsPath(resource)),
      ...FREE_RESOURCES.map((resource) => endpointDocsPath(resource)),
    ];
    for (const path of needed) expect(linked, path).toContain(path);
  });

  it('names the MCP endpoint by its full URL, on this site’s origin', () => {
    expect(llms).toContain(`${BASE_URL}${MCP_PATH}`);
    expect(llms).toMatch(/MCP/);
  });
});

describe('llms.txt weighs the OpenAPI document for an agent', () => {
  const openApiLine = (openapiBytes?: number) =>
    buildLlmsTxt({ baseUrl: BASE_URL, hasBuyer: true, openapiBytes })
      .split('\n')
      .find((line) => line.includes('/openapi.json)')) ?? '';

  it('says its size in kilobytes, rounded to tens from 10 KB, rounded up below', () => {
    expect(openApiLine(793_073)).toContain('(about 790 KB;');
    expect(openApiLine(796_000)).toContain('(about 800 KB;');
    expect(openApiLine(4_032)).toContain('(about 5 KB;');
  });

  it('says no size it was not given (the MCP server’s fallback copy)', () => {
    expect(openApiLine()).not.toMatch(/KB/);
    expect(openApiLine()).toMatch(/every path, schema, example and payment term$/);
  });
});
