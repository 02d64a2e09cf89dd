// A site as `emi up` makes and serves it, for the browser tests: a simulated run (seed 7) into a fresh folder, the
// browser programs bundled (what `emi build` does before Eleventy), the site built for its own origin on a free
// loopback port (the pages sign for the site they were built for), and the local stack's composition serving it
// with a development facilitator on a free port.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { bundleSitePrograms } from '../../generator/buyer/bundle.ts';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../generator/local-stack.ts';
import { runPipeline } from '../../generator/pipeline.ts';
import { buildSite } from '../../generator/site/build.ts';
import { freePort } from '../free-port.ts';
import { copyTemplates } from '../site-fixture.ts';

export interface EmiUpSite {
  root: string;
  dirs: { site: string; paid: string; state: string; dist: string };
  stack: LocalStack;
  /** One more generator run into the same folders (as the next scheduled cycle), its files not rebuilt. */
  generate(): Promise<void>;
  close(): Promise<void>;
}

export interface EmiUpSiteOptions {
  /** Files to add to the site folder after the templates, before the first run (a page's own sources). */
  prepare?: (siteDir: string) => Promise<void>;
  /** More of the local stack's options (a vote store in the state folder). */
  stack?: (dirs: EmiUpSite['dirs']) => Partial<LocalStackOptions>;
}

export async function startEmiUpSite(prefix: string, options: EmiUpSiteOptions = {}): Promise<EmiUpSite> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const dirs = {
    site: join(root, 'site'),
    paid: join(root, 'paid'),
    state: join(root, 'state'),
    dist: join(root, 'dist'),
  };
  const generate = async () => {
    const report = await runPipeline({
      outDir: dirs.site,
      paidDir: dirs.paid,
      stateDir: dirs.state,
      source: 'sim',
      seed: 7,
      asOf: Date.now(),
    });
    expect(report.status).not.toBe('failed');
  };
  await mkdir(dirs.site, { recursive: true });
  await copyTemplates(dirs.site);
  await options.prepare?.(dirs.site);
  await generate();
  await bundleSitePrograms(dirs.site);
  const port = await freePort();
  await buildSite({
    siteDir: dirs.site,
    outDir: dirs.dist,
    baseUrl: `http://127.0.0.1:${port}/`,
    quiet: true,
  });
  const stack = await startLocalStack({
    port,
    host: '127.0.0.1',
    dir: dirs.dist,
    paid: dirs.paid,
    devFacilitatorPort: 0,
    ledgerFile: join(root, 'publishers.sqlite'),
    log: () => {},
    ...options.stack?.(dirs),
  });
  return {
    root,
    dirs,
    stack,
    generate,
    close: async () => {
      await stack.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
