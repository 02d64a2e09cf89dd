// A generated and built site in a temporary folder, for the site and discovery tests: the checkout's templates,
// a few simulated generator runs (the real pipeline), then `buildSite`. Nothing is written into the checkout.
import { cp, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';

export const TEST_BASE_URL = 'https://emi.test/';
export const FIRST_RUN = Date.parse('2026-01-05T12:00:00Z');
export const RUN_SPACING_MS = 20 * 60_000;

/** Generated folders of the checkout's site/ that a test must never read from or write to. */
const GENERATED = new Set(['api', 'arena', 'x402-buyer']);

export interface BuiltSite {
  root: string;
  siteDir: string;
  paidDir: string;
  stateDir: string;
  distDir: string;
  cleanup(): Promise<void>;
}

export async function copyTemplates(siteDir: string): Promise<void> {
  const source = resolve('site');
  await cp(source, siteDir, {
    recursive: true,
    filter: (path) => !GENERATED.has(path.slice(source.length + 1).split('/')[0] ?? ''),
  });
}

/** `runs` simulated runs, 20 minutes apart, then one build (for `baseUrl`, by default TEST_BASE_URL). */
export async function generateAndBuild(options: {
  runs: number;
  seed?: number;
  baseUrl?: string;
}): Promise<BuiltSite> {
  const root = await mkdtemp(join(tmpdir(), 'emi-site-'));
  const site: BuiltSite = {
    root,
    siteDir: join(root, 'site'),
    paidDir: join(root, 'paid'),
    stateDir: join(root, 'state'),
    distDir: join(root, 'dist'),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
  await mkdir(site.siteDir, { recursive: true });
  await copyTemplates(site.siteDir);
  for (let run = 0; run < options.runs; run += 1) {
    const report = await runPipeline({
      outDir: site.siteDir,
      paidDir: site.paidDir,
      stateDir: site.stateDir,
      source: 'sim',
      seed: options.seed ?? 7,
      asOf: FIRST_RUN + run * RUN_SPACING_MS,
    });
    if (report.status === 'failed') throw new Error(`pipeline run failed: ${report.error}`);
  }
  await buildSite({
    siteDir: site.siteDir,
    outDir: site.distDir,
    baseUrl: options.baseUrl ?? TEST_BASE_URL,
  });
  return site;
}

/**
 * One simulated run (seed 7) per time in `asOfs`, published into `root`'s site/, paid/ and state/ folders (no
 * build); throws if a run failed.
 */
export async function publishSimulatedRuns(root: string, asOfs: readonly number[]): Promise<void> {
  for (const asOf of asOfs) {
    const report = await runPipeline({
      outDir: join(root, 'site'),
      paidDir: join(root, 'paid'),
      stateDir: join(root, 'state'),
      source: 'sim',
      seed: 7,
      asOf,
    });
    if (report.status === 'failed') throw new Error(`pipeline run failed: ${report.error}`);
  }
}

/** The URL path of every HTML page in a built folder ("/docs/api/" for docs/api/index.html), sorted. */
export async function htmlPages(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.html'))
    .map((e) => `/${relative(dir, join(e.parentPath, e.name))}`.replace(/index\.html$/, ''))
    .sort();
}

/** Entities as the site's templates write them, decoded as a reader sees the text. */
export const decodeEntities = (text: string): string =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&gt;/g, '>')
    .replace(/&lt;/g, '<')
    .replace(/&amp;/g, '&');

/** A built page's HTML (`docs/agents` for dist/docs/agents/index.html). */
export const pageHtml = (site: BuiltSite, page: string): Promise<string> =>
  readFile(join(site.distDir, page, 'index.html'), 'utf8');

/** The text of every <pre><code> block of a built page, entities decoded as a reader copies them. */
export async function codeBlocks(site: BuiltSite, page: string): Promise<string[]> {
  const html = await pageHtml(site, page);
  return [...html.matchAll(/<pre[^>]*><code[^>]*>([\s\S]*?)<\/code><\/pre>/g)].map((m) =>
    decodeEntities(m[1]!),
  );
}
