// One publishing cycle, as `emi generate`, `emi build`, `emi schedule` and `emi up` run it: generate every
// snapshot, then build the site from what was published. `emi schedule` and `emi up` run it inside their own
// long-running process (no child processes), so after the first cycle every module is already loaded.
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oneLine, usageError } from './cli-options.ts';
import { markClaimsStopping } from './state/claims-held.ts';
import type { RunReport } from './pipeline.ts';
import { assertEleventyCanRead } from './site/load-eleventy.ts';
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
  if (missing.length === 0) return assertEleventyCanRead(site);
  throw new Error(
    `refusing to build: ${resolve(site)} is not a site folder (no ${missing.join(', ')}); ` +
      `leave --site out to use the project's templates (${SITE_TEMPLATES})`,
  );
}

/** The variable that sets collection's whole-run deadline (pipeline.ts DEFAULT_COLLECT_DEADLINE_MS: 120 s). */
export const COLLECT_DEADLINE_VARIABLE = 'EMI_COLLECT_DEADLINE_SECONDS';

/**
 * The longest collection deadline (s): a day. Node holds a timer of at most 2^31-1 ms (about 24.8 days) and fires a
 * longer one after 1 ms, so a larger value stopped collection at once "at its deadline"; and a run published every
 * minute that has not collected in a day is stuck, not slow.
 */
export const MAX_COLLECT_DEADLINE_SECONDS = 86_400;

/**
 * EMI_COLLECT_DEADLINE_SECONDS in ms, or undefined (unset or empty: the pipeline's default). Anything but a
 * positive number of seconds up to a day is a usage error: `emi generate` and `emi schedule` check it before
 * anything runs.
 */
export function collectDeadlineFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[COLLECT_DEADLINE_VARIABLE];
  if (raw === undefined || raw.trim() === '') return undefined;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw usageError(
      `${COLLECT_DEADLINE_VARIABLE} must be a positive number of seconds: ${JSON.stringify(raw)}`,
    );
  }
  if (seconds > MAX_COLLECT_DEADLINE_SECONDS) {
    throw usageError(
      `${COLLECT_DEADLINE_VARIABLE} must be a positive number of seconds, at most ` +
        `${MAX_COLLECT_DEADLINE_SECONDS} (a day): ${JSON.stringify(raw)}`,
    );
  }
  return Math.ceil(seconds * 1000);
}

/**
 * Runs `work` as a run that SIGINT and SIGTERM stop: the signal aborts the signal `work` is given (the pipeline
 * then stops before its switch and records itself as interrupted, see PipelineOptions.signal). Where nobody else
 * manages shutdown (a one-off `emi generate`, the first run of `emi up`), the process then ends the way the signal
 * asks, once `work` is done (its records written, its temporary files removed); a second signal ends it at once.
 * Under `emi schedule` and `emi up`, whose own handler stops the schedule, the cycle ends and their handler exits.
 */
async function interruptible<T>(
  work: (signal: AbortSignal) => Promise<T>,
  describe: (value: T) => string,
): Promise<T> {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  let othersManage = false;
  // Counted before this run listens: a `process.once` handler is gone by the time the signal reaches this one.
  const others = { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM') };
  const stopListening = () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (received === null) {
      received = signal;
      othersManage = (others[signal as keyof typeof others] ?? 0) > 0;
      if (!othersManage) {
        markClaimsStopping(); // the first run of `emi up`: the process ends after it
        console.error(`emi: ${signal}: stopping the run; it is recorded as interrupted`);
      }
      controller.abort(new Error(`interrupted by ${signal}`));
    } else if (process.listenerCount(signal) === 1) {
      // Asked twice, with nobody else to stop the process: it ends now, the way the signal asks.
      stopListening();
      process.kill(process.pid, signal);
    }
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let outcome: { value: T } | { error: unknown };
  try {
    outcome = { value: await work(controller.signal) };
  } catch (error) {
    outcome = { error };
  } finally {
    stopListening();
  }
  const signal = received as NodeJS.Signals | null;
  if (signal !== null && !othersManage) {
    const said =
      'value' in outcome ? describe(outcome.value) : oneLine((outcome.error as Error)?.message ?? '');
    console.error(`emi: ${said}`);
    process.kill(process.pid, signal);
    // The process ends with the signal; should a listener added meanwhile catch it, with the signal's exit code.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1_000);
    return new Promise<never>(() => undefined);
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

/** One run, stopped (and recorded as interrupted) by SIGINT or SIGTERM; see interruptible. */
export function generate(flags: GenerateFlags): Promise<RunReport> {
  return interruptible((signal) => runOnce(flags, signal), summarise);
}

// The engines, Eleventy and the x402 stack are imported on first use, so commands that need none start quickly.
async function runOnce(flags: GenerateFlags, signal: AbortSignal): Promise<RunReport> {
  const collectDeadlineMs = collectDeadlineFromEnv();
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
    ...(collectDeadlineMs === undefined ? {} : { collectDeadlineMs }),
    signal,
  });
}

/**
 * One line per run: its error (a zod dump too) cut to one readable line. A run that published nothing names its
 * status as last-run.json does (`stale`, `failed`) and the market time it was to describe, so that an alert on the
 * word finds it.
 */
export function summarise(report: RunReport): string {
  const issues = report.issues.length ? `, ${report.issues.length} source issue(s)` : '';
  const error = oneLine(report.error ?? '');
  if (report.status === 'failed') return `generate failed: ${error} (the last good files were left in place)`;
  if (report.status === 'stale') {
    return (
      `generate stale (as of ${report.as_of}): published nothing: ${error}${issues} (the last good files were ` +
      'left in place)'
    );
  }
  return `generated ${report.files_written} files for ${report.as_of} [${report.mode}, ${report.status}${issues}] in ${report.duration_ms} ms`;
}

/** Whether the run published its files (`ok` or `degraded`); a `stale` or `failed` one left the last good ones. */
export const published = (report: RunReport): boolean =>
  report.status === 'ok' || report.status === 'degraded';

/**
 * Writes a run's line as every command does (emi generate, emi schedule, emi up): a run that published, on stdout as
 * is; one that published nothing, on stderr after `emi: `.
 */
export function sayRun(report: RunReport): void {
  if (published(report)) console.log(summarise(report));
  else console.error(`emi: ${summarise(report)}`);
}

const NO_SPACE_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/**
 * The line for a site build that failed after its run had ended (the run's own line already said): the build's
 * cause, and for a full disk the folder whose space to check, since the run's folders had room.
 */
export function buildFailureLine(error: unknown, dist: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = oneLine(error instanceof Error ? error.message : String(error));
  const full = (typeof code === 'string' && NO_SPACE_CODES.has(code)) || /^(ENOSPC|EDQUOT)\b/.test(message);
  const dir = resolve(dist);
  return `emi: the build after the run failed: ${message}${full ? `; check the free space of ${dir} (\`df ${dir}\`)` : ''}`;
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
 * processes). `validated` says the run that has just published the files, in this process, checked them. A build
 * that fails is recorded (publish/status.ts recordBuildFailure): the published and the served status.json, and
 * the run's last-run.json in `state`, say that the site was not rebuilt, why, and which build is still served;
 * the next good build clears it. A refused build (invalid published files) changes nothing.
 */
export async function build(
  flags: BuildFlags,
  { warm = false, validated = false, state }: { warm?: boolean; validated?: boolean; state?: string } = {},
): Promise<void> {
  // A site is only built from a complete, valid set of published files.
  if (!validated) await refuseInvalidOutput(resolve(flags.published));
  const { clearBuildFailure, recordBuildFailure } = await import('./publish/status.ts');
  const paths = {
    published: resolve(flags.published),
    dist: resolve(flags.out),
    ...(state === undefined ? {} : { state: resolve(state) }),
  };
  await clearBuildFailure(paths);
  try {
    await buildInto(flags, warm);
  } catch (error) {
    await recordBuildFailure(paths, error).catch((recordError: Error) =>
      console.error(`emi: the failed build could not be recorded: ${recordError.message}`),
    );
    throw error;
  }
}

async function buildInto(flags: BuildFlags, warm: boolean): Promise<void> {
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
 * with no complete published site (a first run that failed) has nothing to rebuild. `warm` as for `build`;
 * `onBuilt` is told once a site was built (`emi up` serves its first one only then).
 */
export function publishCycle(
  flags: GenerateFlags & { dist: string; baseUrl: string },
  onReport: (report: RunReport) => void = () => {},
  { warm = true, onBuilt = () => {} }: { warm?: boolean; onBuilt?: () => void } = {},
): Promise<RunReport> {
  // A stop during the run records it as interrupted, and the build still serves that status.
  return interruptible(async (signal) => {
    // The history versions the last build checked: the files this run rewrites from them are then known to pass,
    // and the build after it reads none of them again.
    await (await import('./site/history-check.ts')).loadPassedRecord(flags.dist);
    const report = await runOnce(flags, signal);
    onReport(report);
    if (published(report) || (await holdsPublishedSite(flags.out))) {
      const site = { site: SITE_TEMPLATES, published: flags.out, out: flags.dist, baseUrl: flags.baseUrl };
      await build(site, { warm, validated: true, state: flags.state });
      onBuilt();
    }
    return report;
  }, summarise);
}

/** Whether `folder` holds a complete set of valid published files (the last good run's). */
async function holdsPublishedSite(folder: string): Promise<boolean> {
  const { validatePublicOutput } = await import('./publish/validate-output.ts');
  return (await validatePublicOutput(resolve(folder))).every((check) => check.ok);
}
