// `emi schedule` and `emi up` rebuild the site in one long-running Eleventy instance (warm-build.ts); its benchmark
// warnings ("[11ty] Benchmark 210ms 29% 1169× (Configuration) "breakable" Nunjucks Filter") reached the operator's
// log on about a third of the cycles, while the one-off `emi build` stays silent. Here a filter made slow on purpose
// crosses Eleventy's warning threshold (50 ms and 8 % of the build) on every build: nothing may be printed.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import type * as BreakPoints from '../generator/site/break-points.ts';
import { WarmSiteBuilder } from '../generator/site/warm-build.ts';
import { buildSite } from '../generator/site/build.ts';
import { FIRST_RUN, TEST_BASE_URL, copyTemplates } from './site-fixture.ts';

vi.mock('../generator/site/break-points.ts', async (importOriginal) => {
  const original = await importOriginal<typeof BreakPoints>();
  return {
    ...original,
    // Half a millisecond a call: the docs call it about a thousand times a build.
    withBreakPoints: (...args: Parameters<typeof original.withBreakPoints>) => {
      const until = performance.now() + 0.5;
      while (performance.now() < until);
      return original.withBreakPoints(...args);
    },
  };
});

/** Everything written to the console or the process streams while `work` runs. */
async function printedDuring(work: () => Promise<void>): Promise<string[]> {
  const printed: string[] = [];
  const keep = (...parts: unknown[]) => void printed.push(parts.map(String).join(' '));
  const spies = [
    ...(['log', 'info', 'warn', 'error'] as const).map((name) =>
      vi.spyOn(console, name).mockImplementation(keep),
    ),
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (keep(chunk), true)),
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (keep(chunk), true)),
  ];
  try {
    await work();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return printed;
}

describe('site builds print nothing, even when a filter is slow', () => {
  let root: string;
  let siteDir: string;
  let publishedDir: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-warm-quiet-'));
    siteDir = join(root, 'site');
    publishedDir = join(root, 'published');
    await mkdir(join(siteDir, 'x402-buyer'), { recursive: true });
    await copyTemplates(siteDir);
    await writeFile(join(siteDir, 'x402-buyer', 'index.html'), '<!doctype html><p>buyer</p>\n');
    // A page that fails to render while a flag file exists: a build that fails inside Eleventy, on demand.
    await writeFile(
      join(siteDir, 'probe.11ty.js'),
      `import { existsSync } from 'node:fs';\n` +
        `export default () => { if (existsSync(${JSON.stringify(join(root, 'fail'))})) throw new Error('probe failed'); return 'ok'; };\n`,
    );
    const report = await runPipeline({
      outDir: publishedDir,
      paidDir: join(root, 'paid'),
      stateDir: join(root, 'state'),
      source: 'sim',
      seed: 7,
      asOf: FIRST_RUN,
    });
    expect(report.status).toBe('ok');
  }, 60_000);
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('the warm build of emi schedule and emi up, build after build', async () => {
    const warm = new WarmSiteBuilder({
      siteDir,
      publishedDir,
      outDir: join(root, 'warm'),
      baseUrl: TEST_BASE_URL,
    });
    expect(await printedDuring(() => warm.build())).toEqual([]);
    expect(await printedDuring(() => warm.build())).toEqual([]);
    expect(warm.warmBuilds).toBe(2);
  }, 120_000);

  it('a warm build that fails: nothing printed, and its error starts with the cause', async () => {
    const warm = new WarmSiteBuilder({
      siteDir,
      publishedDir,
      outDir: join(root, 'warm-failing'),
      baseUrl: TEST_BASE_URL,
    });
    await printedDuring(() => warm.build());
    await writeFile(join(root, 'fail'), '');
    let failure: unknown;
    try {
      expect(
        await printedDuring(() => warm.build().catch((error: unknown) => void (failure = error))),
      ).toEqual([]);
    } finally {
      await rm(join(root, 'fail'));
    }
    expect((failure as Error).message).toMatch(/^probe failed \(/);
  }, 120_000);

  it('the one-off emi build', async () => {
    const build = () =>
      buildSite({ siteDir, publishedDir, outDir: join(root, 'cold'), baseUrl: TEST_BASE_URL });
    expect(await printedDuring(build)).toEqual([]);
  }, 120_000);
});
