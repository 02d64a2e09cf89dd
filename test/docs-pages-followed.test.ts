// The built docs pages, followed word for word, do what they say on the site they are read on: the agents page's
// stdio configuration sends paid tools to this site's paywall (it named 127.0.0.1:8080 on every site), every
// `emi publisher` line of the publishers page checks its id against the configuration (without --config a typo
// credited an id no publisher has), and a paid endpoint's cache hint is not offered as a shared-cache time (paid
// answers are sent no-store; its page said "Cache 60 seconds").
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks, generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

const BASE = 'https://desk.emi.test';

describe('commands on the built docs pages', () => {
  let site: BuiltSite;
  beforeAll(async () => {
    site = await generateAndBuild({ runs: 1, baseUrl: `${BASE}/` });
  }, 180_000);
  afterAll(async () => {
    await site?.cleanup();
  });

  it("the agents page's stdio configuration names this site for paid tools and discovery", async () => {
    const configs = (await codeBlocks(site, 'docs/agents'))
      .filter((block) => block.includes('"mcpServers"'))
      .map((block) => JSON.parse(block) as { mcpServers: Record<string, { args?: string[]; url?: string }> });
    const servers = configs.flatMap((config) => Object.values(config.mcpServers));
    const stdio = servers.find((server) => server.args?.includes('mcp'));
    expect(stdio?.args).toEqual(['emi', 'mcp', '--dir', 'dist', '--base-url', BASE, '--paywall-url', BASE]);
    expect(servers.find((server) => server.url)?.url).toBe(`${BASE}/mcp`);
  });

  it('every emi publisher line of the publishers page that names an id checks it against the configuration', async () => {
    const lines = (await codeBlocks(site, 'docs/publishers'))
      .flatMap((block) => block.split('\n'))
      .filter((line) => /^emi publisher (credit|close|statement|list)\b/.test(line));
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) expect(line).toMatch(/ --config emi\.config\.json\b/);
  });

  it("a paid endpoint's page says its answers are sent no-store, and the hint is the buyer's", async () => {
    for (const page of ['docs/endpoints/paid-market-regime', 'docs/endpoints/atlas']) {
      const html = await readFile(join(site.distDir, page, 'index.html'), 'utf8');
      const cache = /<dt>Cache<\/dt><dd>([\s\S]*?)<\/dd>/.exec(html)?.[1];
      expect(cache, page).toMatch(
        /^sent with <code>Cache-Control: no-store<\/code>.* the buyer may keep it /,
      );
    }
    const free = await readFile(join(site.distDir, 'docs/endpoints/market-regime', 'index.html'), 'utf8');
    expect(/<dt>Cache<\/dt><dd>([\s\S]*?)<\/dd>/.exec(free)?.[1]).toBe('60 seconds');
  });
});
