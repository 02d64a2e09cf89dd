// Every URL llms.txt gives an agent answers on the built site as `emi up` serves it (the preview with the paywall,
// the development facilitator and the MCP endpoint): a page or a free file 200, a paid path its 402, and the MCP
// endpoint an MCP initialize.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';
import { startLocalStack } from '../generator/local-stack.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { MCP_PATH } from '../schemas/delivery.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { MCP_INITIALIZE } from './helpers/mcp-initialize.ts';
import { copyTemplates } from './site-fixture.ts';

const BASE = 'https://emi.test';

describe('llms.txt on the served site', () => {
  let root: string;
  let stack: LocalStack;
  let llms: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-llms-links-'));
    const siteDir = join(root, 'site');
    await mkdir(siteDir, { recursive: true });
    await copyTemplates(siteDir);
    // A run of a minute ago: its paid files are fresh enough to be offered (a 402), as on a running `emi up`.
    const report = await runPipeline({
      outDir: siteDir,
      paidDir: join(root, 'paid'),
      stateDir: join(root, 'var'),
      source: 'sim',
      seed: 7,
      asOf: Date.now() - 60_000,
    });
    expect(report.status).not.toBe('failed');
    await buildSite({ siteDir, outDir: join(root, 'dist'), baseUrl: BASE });
    llms = await readFile(join(root, 'dist/llms.txt'), 'utf8');
    stack = await startLocalStack({
      port: 0,
      host: '127.0.0.1',
      dir: join(root, 'dist'),
      paid: join(root, 'paid'),
      devFacilitatorPort: 0,
      ledgerFile: join(root, 'var/publishers.sqlite'),
      voteStorePath: join(root, 'var/arena-votes.sqlite'),
      log: () => undefined,
    });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** A URL of the built site, asked of the running stack instead. */
  const served = (url: string) => `${stack.url}${url.slice(BASE.length)}`;

  it('answers every linked URL: 200, or the 402 of a paid path', async () => {
    const urls = [...llms.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1] ?? '');
    expect(urls.length).toBeGreaterThan(30);
    const paid = new Set(PAID_RESOURCES.map((resource) => `${BASE}${resource.path}`));
    const failures: string[] = [];
    for (const url of urls) {
      expect(url.startsWith(`${BASE}/`), url).toBe(true);
      const response = await fetch(served(url), { redirect: 'manual' });
      await response.arrayBuffer();
      const expected = paid.has(url) ? 402 : 200;
      if (response.status !== expected) failures.push(`${url}: ${response.status}, not ${expected}`);
    }
    expect(failures).toEqual([]);
  });

  it('names the MCP endpoint, and it answers an MCP initialize there', async () => {
    const mcpUrl = `${BASE}${MCP_PATH}`;
    expect(llms).toContain(mcpUrl);
    const response = await fetch(served(mcpUrl), MCP_INITIALIZE);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/"serverInfo"/);
  });
});
