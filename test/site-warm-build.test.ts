// The warm build of `emi schedule` and `emi up` (generator/site/warm-build.ts) against a cold `buildSite` of the
// same published files: byte for byte the same site, over two runs with different data, unchanged files carried
// over by hard link, and a failed build that leaves the last good site served.
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';
import { WarmSiteBuilder } from '../generator/site/warm-build.ts';
import { FIRST_RUN, RUN_SPACING_MS, TEST_BASE_URL, copyTemplates } from './site-fixture.ts';

/** Every file under `dir` (through the dist/ symlink), by relative path, with its bytes. */
async function tree(dir: string): Promise<Map<string, Buffer>> {
  const root = await realpath(dir);
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = new Map<string, Buffer>();
  for (const entry of entries.filter((e) => e.isFile())) {
    const path = join(entry.parentPath, entry.name);
    files.set(relative(root, path), await readFile(path));
  }
  return files;
}

function expectSameTree(warm: Map<string, Buffer>, cold: Map<string, Buffer>): void {
  expect([...warm.keys()].sort()).toEqual([...cold.keys()].sort());
  const differing = [...cold].filter(([path, bytes]) => !warm.get(path)?.equals(bytes)).map(([path]) => path);
  expect(differing).toEqual([]);
}

describe('warm site build', () => {
  let root: string;
  let siteDir: string;
  let publishedDir: string;
  let warm: WarmSiteBuilder;
  const warmDist = () => join(root, 'dist');
  const failFlag = () => join(root, 'fail');

  async function publishRun(run: number): Promise<void> {
    const report = await runPipeline({
      outDir: publishedDir,
      paidDir: join(root, 'paid'),
      stateDir: join(root, 'state'),
      source: 'sim',
      seed: 7,
      asOf: FIRST_RUN + run * RUN_SPACING_MS,
    });
    expect(report.status).toBe('ok');
  }

  async function coldTree(name: string): Promise<Map<string, Buffer>> {
    const outDir = join(root, name);
    await buildSite({ siteDir, publishedDir, outDir, baseUrl: TEST_BASE_URL });
    return tree(outDir);
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-warm-'));
    siteDir = join(root, 'site');
    publishedDir = join(root, 'published');
    await mkdir(join(siteDir, 'x402-buyer'), { recursive: true });
    await copyTemplates(siteDir);
    // The buyer page is copied through file by file: a page and a stylesheet, no bundle.
    await writeFile(
      join(siteDir, 'x402-buyer', 'index.html'),
      '<!doctype html><p>{{ not a template }}</p>\n',
    );
    await writeFile(join(siteDir, 'x402-buyer', 'buyer.css'), 'p { color: teal }\n');
    // A page that fails to render while a flag file exists: a build that fails inside Eleventy, on demand.
    await writeFile(
      join(siteDir, 'probe.11ty.js'),
      `import { existsSync } from 'node:fs';\n` +
        `export default () => { if (existsSync(${JSON.stringify(failFlag())})) throw new Error('probe'); return 'ok'; };\n`,
    );
    warm = new WarmSiteBuilder({ siteDir, publishedDir, outDir: warmDist(), baseUrl: TEST_BASE_URL });
  }, 60_000);
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('renders what a cold build renders, run after run, with one instance', async () => {
    await publishRun(0);
    await warm.build();
    const first = await tree(warmDist());
    expectSameTree(first, await coldTree('cold-1'));

    await publishRun(1);
    await warm.build();
    expect(warm.warmBuilds).toBe(2);
    const second = await tree(warmDist());
    expectSameTree(second, await coldTree('cold-2'));
    // The second run's data reached the warm instance: its pages are not the first run's.
    expect(second.get('index.html')?.equals(first.get('index.html') as Buffer)).toBe(false);
    expect(second.get('sitemap.xml')?.equals(first.get('sitemap.xml') as Buffer)).toBe(false);
  }, 120_000);

  it('carries a file whose bytes did not change over by hard link, and writes a changed one', async () => {
    const served = await realpath(warmDist());
    const unchanged = join('docs', 'educational-notice', 'index.html');
    const before = await stat(join(served, unchanged));
    const homeBefore = await stat(join(served, 'index.html'));
    await publishRun(2);
    await warm.build();
    const next = await realpath(warmDist());
    expect(next).not.toBe(served);
    expect((await stat(join(next, unchanged))).ino).toBe(before.ino);
    expect((await stat(join(next, 'index.html'))).ino).not.toBe(homeBefore.ino);
    expectSameTree(await tree(warmDist()), await coldTree('cold-3'));

    // Served meanwhile by another build (a one-off `emi build`): its files are compared on disk, then linked.
    await buildSite({ siteDir, publishedDir, outDir: warmDist(), baseUrl: TEST_BASE_URL });
    const other = await realpath(warmDist());
    const otherHome = await stat(join(other, 'index.html'));
    await warm.build();
    expect((await stat(join(await realpath(warmDist()), 'index.html'))).ino).toBe(otherHome.ino);
    expectSameTree(await tree(warmDist()), await coldTree('cold-3b'));
  }, 120_000);

  it('links an untouched copied-through file and copies one rewritten in place, even at the same size', async () => {
    const served = await realpath(warmDist());
    const stylesheet = join('x402-buyer', 'buyer.css');
    const page = join('x402-buyer', 'index.html');
    const pageBefore = await stat(join(served, page));
    // Rewritten in place (same inode), same length: only its modification time says it changed.
    await writeFile(join(siteDir, stylesheet), 'p { color: navy }\n');
    await warm.build();
    const next = await realpath(warmDist());
    expect(await readFile(join(next, stylesheet), 'utf8')).toBe('p { color: navy }\n');
    expect((await stat(join(next, page))).ino).toBe(pageBefore.ino);
    expectSameTree(await tree(warmDist()), await coldTree('cold-copies'));
  }, 120_000);

  it('leaves the last good site served when a build fails, and the next build still matches', async () => {
    const served = await realpath(warmDist());
    const before = await tree(warmDist());
    await publishRun(3);
    await writeFile(failFlag(), '');
    try {
      await expect(warm.build()).rejects.toThrow(/probe/);
    } finally {
      await rm(failFlag());
    }
    expect(warm.warmBuilds).toBe(5);
    expect(await realpath(warmDist())).toBe(served);
    expectSameTree(await tree(warmDist()), before);

    await warm.build();
    expect(warm.warmBuilds).toBe(6);
    expectSameTree(await tree(warmDist()), await coldTree('cold-4'));
  }, 120_000);
});
