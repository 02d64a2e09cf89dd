// One publishing cycle, as `emi generate`, `emi build`, `emi schedule` and `emi up` run it: generate every
// snapshot, then build the site from what was published. `emi schedule` and `emi up` run it inside their own
// long-running process (no child processes), so after the first cycle every module is already loaded.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oneLine } from './cli-options.ts';
import type { RunReport } from './pipeline.ts';
import type { SourceName } from './market-source.ts';
import type { WarmSiteBuilder, WarmSiteOptions } from './site/warm-build.ts';

export interface GenerateFlags {
  asOf?: number;
  cadence: number;
  seed: number;
  source: SourceName;
  out: string;
  paid: string;
  state: string;
  record?: string;
  replay?: string;
  config?: string;
}

export interface BuildFlags {
  /** Eleventy input folder (templates, docs, buyer page). */
  site: string;
  /** Folder the generator published to. */
  published: string;
  out: string;
  baseUrl: string;
}

/** The Eleventy templates ship with the project, wherever `emi` is run from. */
export const SITE_TEMPLATES = fileURLToPath(new URL('../site/', import.meta.url));

/** Templates without which a build has no home page or no OpenAPI document: a site folder holds them all. */
export const REQUIRED_TEMPLATES = [
  'index.njk',
  '_includes/base.njk',
  'discovery/openapi-json.11ty.js',
] as const;

/** Throws one line unless `site` holds the project's templates (an empty or wrong --site would build no site). */
export function assertSiteTemplates(site: string): void {
  const missing = REQUIRED_TEMPLATES.filter((file) => !existsSync(resolve(site, file)));
  if (missing.length === 0) return;
  throw new Error(
    `refusing to build: ${resolve(site)} is not a site folder (no ${missing.join(', ')}); ` +
      `leave --site out to use the project's templates (${SITE_TEMPLATES})`,
  );
}

// The engines, Eleventy and the x402 stack are imported on first use, so commands that need none start quickly.
export async function generate(flags: GenerateFlags): Promise<RunReport> {
  const { resolveSourceFlags } = await import('./sources/cli.ts');
  const { runPipeline } = await import('./pipeline.ts');
  const { asOf, sourceOptions } = await resolveSourceFlags(flags);
  return runPipeline({
    outDir: resolve(flags.out),
    paidDir: resolve(flags.paid),
    stateDir: resolve(flags.state),
    source: flags.source,
    seed: flags.seed,
    asOf,
    cadenceSeconds: flags.cadence,
    sourceOptions,
  });
}

/** One line per run: its error (a zod dump too) cut to one readable line. */
export function summarise(report: RunReport): string {
  const issues = report.issues.length ? `, ${report.issues.length} source issue(s)` : '';
  const error = oneLine(report.error ?? '');
  if (report.status === 'failed') return `generate failed: ${error} (the last good files were left in place)`;
  if (report.status === 'stale') return `generate published nothing: ${error}${issues}`;
  return `generated ${report.files_written} files for ${report.as_of} [${report.mode}, ${report.status}${issues}] in ${report.duration_ms} ms`;
}

/** The browser bundles depend only on their sources: a long-running process bundles them once per site folder. */
const bundled = new Map<string, Promise<void>>();

function bundleSiteProgramsOnce(site: string): Promise<void> {
  let done = bundled.get(site);
  if (!done) {
    done = import('./buyer/bundle.ts').then(({ bundleSitePrograms }) => bundleSitePrograms(site));
    // A failed bundle is tried again on the next build rather than remembered.
    done.catch(() => bundled.delete(site));
    bundled.set(site, done);
  }
  return done;
}

/** The warm site builders of a long-running process, one per output (see site/warm-build.ts). */
const warmBuilders = new Map<string, WarmSiteBuilder>();

async function warmBuilder(options: WarmSiteOptions): Promise<WarmSiteBuilder> {
  const key = JSON.stringify(options);
  let builder = warmBuilders.get(key);
  if (!builder) {
    const { WarmSiteBuilder } = await import('./site/warm-build.ts');
    builder = new WarmSiteBuilder(options);
    warmBuilders.set(key, builder);
  }
  return builder;
}

/**
 * Builds the site; `warm` keeps the Eleventy instance for the next build of the same site (long-running
 * processes). `validated` says the run that has just published the files, in this process, checked them.
 */
export async function build(flags: BuildFlags, { warm = false, validated = false } = {}): Promise<void> {
  // A site is only built from a complete, valid set of published files.
  if (!validated) await refuseInvalidOutput(resolve(flags.published));
  if (existsSync(resolve(flags.site, 'x402-buyer', 'index.html')))
    await bundleSiteProgramsOnce(resolve(flags.site));
  if (warm) {
    const builder = await warmBuilder({
      siteDir: resolve(flags.site),
      publishedDir: resolve(flags.published),
      outDir: resolve(flags.out),
      baseUrl: flags.baseUrl,
    });
    return builder.build();
  }
  const { buildSite } = await import('./site/build.ts');
  await buildSite({
    siteDir: resolve(flags.site),
    publishedDir: resolve(flags.published),
    outDir: resolve(flags.out),
    baseUrl: flags.baseUrl,
    quiet: true,
  });
}

/** Throws when a published file is missing or fails its schema (a folder from elsewhere, or an older version). */
async function refuseInvalidOutput(folder: string): Promise<void> {
  const { validatePublicOutput } = await import('./publish/validate-output.ts');
  const invalid = (await validatePublicOutput(folder)).filter((check) => !check.ok);
  if (invalid.length === 0) return;
  const [first] = invalid;
  throw new Error(
    `refusing to build: ${invalid.length} published file(s) missing or invalid in ${folder} ` +
      `(${first?.file}: ${first?.problems[0]}); run emi generate first`,
  );
}

/**
 * One publishing cycle: generate, tell `onReport`, then build. A run that published is built from at once (it has
 * just checked its files); a failed or stale run still rebuilds the site around the last good files, so that the
 * served /status.json (hosts serve the built folder, not the published one) says what the last run did. A folder
 * with no complete published site (a first run that failed) has nothing to rebuild. `warm` as for `build`.
 */
export async function publishCycle(
  flags: GenerateFlags & { dist: string; baseUrl: string },
  onReport: (report: RunReport) => void = () => {},
  { warm = true } = {},
): Promise<RunReport> {
  const report = await generate(flags);
  onReport(report);
  const published = report.status === 'ok' || report.status === 'degraded';
  if (published || (await holdsPublishedSite(flags.out))) {
    const site = { site: SITE_TEMPLATES, published: flags.out, out: flags.dist, baseUrl: flags.baseUrl };
    await build(site, { warm, validated: true });
  }
  return report;
}

/** Whether `folder` holds a complete set of valid published files (the last good run's). */
async function holdsPublishedSite(folder: string): Promise<boolean> {
  const { validatePublicOutput } = await import('./publish/validate-output.ts');
  return (await validatePublicOutput(resolve(folder))).every((check) => check.ok);
}
