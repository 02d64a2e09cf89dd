// `emi build` as a whole process, as an operator's cron job or CI step runs it: it keeps what it derives from the
// code alone in build/.cache/ (generator/site/derived-cache.ts) and loads only what the build needs, and what it
// publishes is byte for byte what a build from the TypeScript sources (which keeps nothing) publishes.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSite } from '../generator/site/build.ts';
import { chunksOf } from './helpers/bundled-chunks.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const EMI = join(ROOT, 'bin', 'emi.js');
const RECORDER = join(import.meta.dirname, 'helpers', 'record-imports.mjs');
const BASE_URL = 'https://process.emi.test';

async function tree(dir: string): Promise<Map<string, Buffer>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  return new Map(await Promise.all(files.map(async (f) => [relative(dir, f), await readFile(f)] as const)));
}

describe('emi build as a whole process', () => {
  let dir: string;
  const path = (name: string) => join(dir, name);
  const build = (out: string, record?: string) =>
    run(
      process.execPath,
      [
        ...(record ? ['--import', RECORDER] : []),
        EMI,
        'build',
        '--published',
        path('published'),
        '--out',
        path(out),
        '--base-url',
        BASE_URL,
      ],
      { env: { ...process.env, EMI_RECORD_IMPORTS: record ?? '' }, timeout: 120_000 },
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-build-process-'));
    await run(
      process.execPath,
      [EMI, 'generate', '--out', path('published'), '--paid', path('paid'), '--state', path('state')],
      { timeout: 120_000 },
    );
  }, 180_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('publishes what a build from the sources publishes, with the kept values and without', async () => {
    await build('first'); // derives (or, if an earlier test built for this URL, reuses) and keeps
    const cache = await readdir(join(ROOT, 'build', '.cache'));
    expect(cache).toEqual(expect.arrayContaining(['json-schemas.json', 'openapi-yaml.json']));
    expect(cache).toContain('mcp-tools.json');

    const record = path('imports.txt');
    await build('second', record); // reuses what the first kept
    const modules = (await readFile(record, 'utf8')).trim().split('\n');
    // The MCP SDK is only needed to list the tools, and esbuild only when a browser bundle is out of date.
    const mcpChunks = await chunksOf('@modelcontextprotocol/sdk');
    expect(modules.filter((url) => mcpChunks.has(url))).toEqual([]);
    expect(modules.filter((url) => /node_modules\/esbuild\//.test(url))).toEqual([]);
    // Eleventy is bundled: loaded from its chunks in build/, not module by module from node_modules.
    const eleventyChunks = await chunksOf('@11ty/eleventy');
    expect(modules.some((url) => eleventyChunks.has(url))).toBe(true);
    expect(modules.filter((url) => /node_modules\/@11ty\/eleventy\//.test(url))).toEqual([]);

    await buildSite({
      siteDir: join(ROOT, 'site'),
      publishedDir: path('published'),
      outDir: path('sources'),
      baseUrl: BASE_URL,
    });
    const [first, second, sources] = await Promise.all(
      ['first', 'second', 'sources'].map((name) => tree(path(name))),
    );
    expect([...(first as Map<string, Buffer>).keys()].sort()).toEqual(
      [...(sources as Map<string, Buffer>).keys()].sort(),
    );
    for (const [file, bytes] of sources as Map<string, Buffer>) {
      expect((first as Map<string, Buffer>).get(file)?.equals(bytes), file).toBe(true);
      expect((second as Map<string, Buffer>).get(file)?.equals(bytes), file).toBe(true);
    }
  }, 240_000);
});
