// What a build derives from the code alone is kept between processes (generator/site/derived-cache.ts): a kept
// value is reused only while what it was derived from is unchanged, and a store that fails is only a miss.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import YAML from 'yaml';
import * as z from 'zod';
import { emittedSchemas, keepEmitted, toJsonSchema } from '../generator/discovery/json-schema.ts';
import type { SchemaEntry } from '../generator/discovery/json-schema.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import type { keepPrinted } from '../generator/discovery/openapi-yaml.ts';
import { NO_CACHE, codeCache, folderCache } from '../generator/site/derived-cache.ts';
import { loadSiteData } from '../generator/site/site-data.ts';
import { OPENAPI_YAML_OPTIONS } from '../generator/discovery/openapi-yaml.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-derived-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('folderCache', () => {
  it('gives back what was kept, and null for a name never kept or a file that is not JSON', async () => {
    const cache = folderCache(join(dir, 'cache'));
    expect(await cache.read('tools')).toBeNull();
    await cache.write('tools', [{ name: 'a' }]);
    expect(await cache.read('tools')).toEqual([{ name: 'a' }]);
    await writeFile(join(dir, 'cache', 'torn.json'), '{"half');
    expect(await cache.read('torn')).toBeNull();
    expect((await readdir(join(dir, 'cache'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('treats a store it cannot write as a miss, not an error', async () => {
    const blocked = join(dir, 'blocked');
    await writeFile(blocked, 'a file where the folder should be');
    const cache = folderCache(join(blocked, 'cache'));
    await expect(cache.write('tools', [1])).resolves.toBeUndefined();
    expect(await cache.read('tools')).toBeNull();
  });

  it('keeps nothing when the code runs from its TypeScript sources', () => {
    expect(codeCache).toBe(NO_CACHE);
  });
});

describe('kept JSON Schemas', () => {
  it('are taken instead of emitting again, for a schema not emitted yet in this process', () => {
    const entry = (name: string): SchemaEntry => ({
      name,
      fileName: `${name}.json`,
      title: name,
      schema: z.object({ price: z.number() }),
    });
    const emitted = entry('Emitted');
    const saved = emittedSchemas([emitted]);
    expect(saved.Emitted).toEqual(toJsonSchema(emitted.schema));

    const fresh = entry('Fresh');
    const marked = { ...saved.Emitted, description: 'kept from an earlier process' };
    keepEmitted([fresh], { Fresh: marked });
    expect(toJsonSchema(fresh.schema)).toEqual(marked);
  });

  it('leave out a name two different schemas share', () => {
    const a: SchemaEntry = { name: 'Same', fileName: 'a.json', title: 'a', schema: z.string() };
    const b: SchemaEntry = { name: 'Same', fileName: 'b.json', title: 'b', schema: z.number() };
    expect(emittedSchemas([a, b])).toEqual({});
    expect(Object.keys(emittedSchemas([a, a]))).toEqual(['Same']);
  });
});

describe('kept OpenAPI YAML', () => {
  const whole = (doc: Record<string, unknown>) => YAML.stringify(doc, OPENAPI_YAML_OPTIONS);
  const regime = (generatedAt: string) =>
    buildOpenApiDocument({
      baseUrl: 'https://kept.test',
      examples: { '/api/market-regime.php': { generated_at: generatedAt } },
    });

  /** The module as a new process meets it: nothing printed yet. */
  async function freshPrinter() {
    vi.resetModules();
    return import('../generator/discovery/openapi-yaml.ts');
  }

  it('is reused in a new process while an entry is unchanged, and printed again once its JSON changed', async () => {
    const first = await freshPrinter();
    const doc = regime('2026-01-05T12:00:00.000Z');
    expect(first.openApiYaml(doc)).toBe(whole(doc));
    const saved = first.printedEntries();
    expect(Object.keys(saved)).toContain('paths\n/api/market-regime.php');
    // Marked, to see which texts a later process takes from the store rather than printing them.
    const marked = Object.fromEntries(
      Object.entries(saved).map(([key, entry]) => [
        key,
        { ...entry, yaml: entry.yaml.replaceAll('kept.test', 'KEPT') },
      ]),
    );

    const later = await freshPrinter();
    later.keepPrinted(marked);
    expect(later.openApiYaml(doc)).toBe(whole(doc).replaceAll('kept.test', 'KEPT'));

    const again = await freshPrinter();
    again.keepPrinted(marked);
    const changed = regime('2026-01-05T12:20:00.000Z');
    const printed = again.openApiYaml(changed);
    // The changed path is printed anew; the unchanged entries still come from the store.
    const path = again.printedEntries()['paths\n/api/market-regime.php'];
    expect(path?.yaml).toContain('2026-01-05T12:20:00.000Z');
    expect(printed).toContain('KEPT');
    expect(printed).not.toContain('2026-01-05T12:00:00.000Z');
  });

  it('ignores kept entries that are not printed texts', async () => {
    const printer = await freshPrinter();
    printer.keepPrinted({ info: { digest: 1, yaml: null } } as unknown as Parameters<typeof keepPrinted>[0]);
    const doc = regime('2026-01-05T12:00:00.000Z');
    expect(printer.openApiYaml(doc)).toBe(whole(doc));
  });
});

describe('loadSiteData with a store', () => {
  const options = (baseUrl: string) => ({
    siteDir: 'site',
    publishedDir: join(dir, 'empty'),
    baseUrl,
    cache: folderCache(join(dir, 'cache')),
  });

  it('keeps one MCP tool list (the tools do not depend on the base URL) and reuses it while the code is unchanged', async () => {
    const first = await loadSiteData(options('https://one.test'));
    const kept = (await readdir(join(dir, 'cache'))).filter((name) => name.startsWith('mcp-tools'));
    expect(kept).toEqual(['mcp-tools.json']);
    expect(JSON.parse(await readFile(join(dir, 'cache', 'mcp-tools.json'), 'utf8'))).toEqual(first.mcpTools);
    expect(first.mcpTools.map((tool) => tool.name)).toContain('market_regime');

    // The kept list is what a later build shows, for any base URL (marked here to see that it is not asked for again).
    await writeFile(
      join(dir, 'cache', 'mcp-tools.json'),
      JSON.stringify([{ ...first.mcpTools[0], title: 'KEPT' }]),
    );
    expect((await loadSiteData(options('https://one.test'))).mcpTools[0]?.title).toBe('KEPT');
    expect((await loadSiteData(options('https://two.test'))).mcpTools[0]?.title).toBe('KEPT');
  });

  it('writes the printed YAML again only once something was printed anew', async () => {
    await loadSiteData(options('https://one.test'));
    const file = join(dir, 'cache', 'openapi-yaml.json');
    const written = JSON.parse(await readFile(file, 'utf8')) as Record<
      string,
      { digest: string; yaml: string }
    >;
    expect(Object.keys(written)).toContain('servers');
    await writeFile(file, JSON.stringify({ ...written, marker: { digest: 'x', yaml: 'x' } }));
    await loadSiteData(options('https://one.test')); // nothing new: the store is left as it is
    expect(JSON.parse(await readFile(file, 'utf8'))).toHaveProperty('marker');
    await loadSiteData(options('https://three.test')); // a new base URL: servers and more printed anew
    const rewritten = JSON.parse(await readFile(file, 'utf8')) as typeof written;
    expect(rewritten).not.toHaveProperty('marker');
    expect(rewritten.servers?.yaml).toContain('https://three.test');
  });

  it('writes the JSON Schemas and the printed YAML, and gives the same data as a build without a store', async () => {
    const withStore = await loadSiteData(options('https://one.test'));
    const without = await loadSiteData({ ...options('https://one.test'), cache: NO_CACHE });
    expect(JSON.stringify(withStore)).toBe(JSON.stringify(without));
    const names = await readdir(join(dir, 'cache'));
    expect(names).toEqual(expect.arrayContaining(['json-schemas.json', 'openapi-yaml.json']));
  });
});
