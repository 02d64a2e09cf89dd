// The `emi` command line. Each command is a thin shell over a module that does the work.
import { Command, Option } from 'commander';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAsOf, parseCount, parsePort, parsePositiveInt, parseSeed } from './cli-options.ts';
import { DEFAULT_CADENCE_SECONDS, DEFAULT_SEED, runPipeline } from './pipeline.ts';
import type { RunReport } from './pipeline.ts';
import { SOURCE_NAMES } from './market-source.ts';
import type { SourceName } from './market-source.ts';
import { DEFAULT_CRON, startSchedule } from './schedule.ts';
import { validatePaidOutput, validatePublicOutput } from './publish/validate-output.ts';
import { registerArenaCommands } from './state/cli.ts';
import { registerPaywallCommands } from '../paywall-worker/cli.ts';
import { DEFAULT_BACKFILL_DAYS, backfillAndReport, registerBackfillCommand } from './backfill-command.ts';
import { registerSourcesCommands, resolveSourceFlags } from './sources/cli.ts';

interface GenerateFlags {
  asOf?: number;
  cadence: number;
  seed: number;
  source: SourceName;
  out: string;
  paid: string;
  state: string;
}

type UpFlags = GenerateFlags & {
  cron: string;
  dist: string;
  port: number;
  host: string;
  backfillDays: number;
  devFacilitatorPort: number;
};

/** The Eleventy templates ship with the project, wherever `emi` is run from. */
const SITE_TEMPLATES = fileURLToPath(new URL('../site/', import.meta.url));

/**
 * The published files carry absolute URLs (sitemap, OpenAPI servers, schema ids, llms.txt), so a build that will be
 * deployed must say where: `emi build` and `emi schedule` refuse to run without `--base-url` or EMI_BASE_URL
 * rather than publish a development address. `emi up` and `emi serve` build for their own local origin.
 */
const defaultBaseUrl = (): string | undefined => process.env.EMI_BASE_URL;

function requireBaseUrl(baseUrl: string | undefined): string {
  if (baseUrl) return baseUrl;
  throw new Error(
    'refusing to build without a base URL: pass --base-url https://your.site (or set EMI_BASE_URL); ' +
      'for a local preview use --base-url http://127.0.0.1:8080',
  );
}

function addGenerateOptions(command: Command): Command {
  return command
    .option('--as-of <iso>', 'market time to describe (ISO 8601); defaults to the current minute', parseAsOf)
    .option('--seed <n>', 'simulator seed', parseSeed, DEFAULT_SEED)
    .addOption(
      new Option('--source <name>', 'where market data comes from').choices([...SOURCE_NAMES]).default('sim'),
    )
    .option('--out <dir>', 'public site folder (free endpoints go below it)', 'site')
    .option('--paid <dir>', 'private folder for the paid bodies', 'paid')
    .option('--state <dir>', 'folder for the arena store and run reports', process.env.EMI_STATE_DIR ?? 'var')
    .option(
      '--cadence <seconds>',
      'seconds until the next scheduled run, published as next_update_due',
      parsePositiveInt,
      DEFAULT_CADENCE_SECONDS,
    )
    .option('--record <dir>', 'live runs: save every raw venue response in this folder, for --source replay')
    .option('--replay <dir>', 'with --source replay: the recording folder to answer from')
    .option(
      '--config <file>',
      'JSON configuration file (default: EMI_CONFIG); see generator/sources/README.md',
    );
}

async function generate(
  flags: GenerateFlags & { record?: string; replay?: string; config?: string },
): Promise<RunReport> {
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

function summarise(report: RunReport): string {
  const issues = report.issues.length ? `, ${report.issues.length} source issue(s)` : '';
  if (report.status === 'failed')
    return `generate failed: ${report.error} (the last good files were left in place)`;
  if (report.status === 'stale') return `generate published nothing: ${report.error}${issues}`;
  return `generated ${report.files_written} files for ${report.as_of} [${report.mode}, ${report.status}${issues}] in ${report.duration_ms} ms`;
}

async function generateOnce(flags: GenerateFlags): Promise<void> {
  const report = await generate(flags);
  if (report.status === 'failed' || report.status === 'stale') throw new Error(summarise(report));
  console.log(summarise(report));
}

// Eleventy and the x402 stack load only for the commands that use them, so the others start quickly.
async function build(site: string, published: string, out: string, baseUrl: string, state: string) {
  // A site is only built from a complete, valid set of published files.
  const invalid = (await validatePublicOutput(resolve(published))).filter((check) => !check.ok);
  if (invalid.length > 0) {
    const [first] = invalid;
    throw new Error(
      `refusing to build: ${invalid.length} published file(s) missing or invalid in ${resolve(published)} ` +
        `(${first?.file}: ${first?.problems[0]}); run emi generate first`,
    );
  }
  const { buildSite } = await import('./site/build.ts');
  const { bundleBuyerPage } = await import('./buyer/bundle.ts');
  if (existsSync(resolve(site, 'x402-buyer', 'index.html'))) {
    await bundleBuyerPage({ outFile: resolve(site, 'x402-buyer', 'app.js') });
  }
  await buildSite({
    siteDir: resolve(site),
    publishedDir: resolve(published),
    outDir: resolve(out),
    baseUrl,
    historyFile: resolve(state, 'run-history.json'),
    quiet: true,
  });
}

/** Regenerates and rebuilds on a cron expression until SIGINT or SIGTERM. */
async function scheduleRuns(flags: GenerateFlags & { cron: string; dist: string; baseUrl: string }) {
  const schedule = startSchedule(
    flags.cron,
    async () => {
      // One bad tick is reported and the schedule goes on; the last good files stay published meanwhile.
      try {
        // A scheduled run describes the current minute: --as-of only applies to one-off runs.
        const report = await generate({ ...flags, asOf: undefined });
        const published = report.status === 'ok' || report.status === 'degraded';
        (published ? console.log : console.error)(summarise(report));
        if (published) await build(SITE_TEMPLATES, flags.out, flags.dist, flags.baseUrl, flags.state);
      } catch (error) {
        console.error(`emi: scheduled run failed: ${(error as Error).message.split('\n')[0]}`);
      }
    },
    () => console.log('previous run still in progress: this tick was skipped'),
  );
  console.log(`scheduled: "${flags.cron}" (Ctrl-C to stop)`);
  return schedule;
}

function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: finishing the run in progress, then stopping`);
    stop().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(`emi: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => handler('SIGINT'));
  process.once('SIGTERM', () => handler('SIGTERM'));
}

export function createProgram(): Command {
  const program = new Command('emi')
    .description(
      'Educational market-intelligence publisher: generate, build and serve the API (educational only, not advice)',
    )
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text.split('\n')[0] + '\n') });

  addGenerateOptions(
    program.command('generate').description('compute every snapshot once and publish it atomically'),
  ).action(generateOnce);

  program
    .command('build')
    .description('build the static site (Eleventy) from the published files into a deployable folder')
    .option('--site <dir>', 'Eleventy input folder (templates, docs, buyer page)', SITE_TEMPLATES)
    .option('--published <dir>', 'folder `emi generate --out` wrote to', 'site')
    .option('--out <dir>', 'output folder', 'dist')
    .option('--state <dir>', 'folder holding the run history', process.env.EMI_STATE_DIR ?? 'var')
    .option(
      '--base-url <url>',
      'absolute base URL of the deployed site, required (env EMI_BASE_URL)',
      defaultBaseUrl(),
    )
    .action(async (o: { site: string; published: string; out: string; baseUrl?: string; state: string }) => {
      await build(o.site, o.published, o.out, requireBaseUrl(o.baseUrl), o.state);
      console.log(`built ${resolve(o.out)}`);
    });

  program
    .command('serve')
    .description('preview the built site on one origin, with the paywall worker on the four x402 paths')
    .option('--port <n>', 'port to listen on', parsePort, 8080)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--dir <dir>', 'folder to serve', 'dist')
    .option('--paid <dir>', 'folder holding the paid bodies', 'paid')
    .option('--dev-facilitator-port <n>', 'port of the development facilitator', parsePort, 4021)
    .action(
      async (o: { port: number; host: string; dir: string; paid: string; devFacilitatorPort: number }) => {
        const { startLocalStack } = await import('./local-stack.ts');
        const stack = await startLocalStack({ ...o, dir: resolve(o.dir), paid: resolve(o.paid) });
        onShutdown(stack.close);
      },
    );

  addGenerateOptions(program.command('schedule').description('regenerate and rebuild on a schedule'))
    .option('--cron <expr>', 'cron expression', DEFAULT_CRON)
    .option('--dist <dir>', 'build output folder', 'dist')
    .option(
      '--base-url <url>',
      'absolute base URL of the deployed site, required (env EMI_BASE_URL)',
      defaultBaseUrl(),
    )
    .action(async (o: GenerateFlags & { cron: string; dist: string; baseUrl?: string }) => {
      const schedule = await scheduleRuns({ ...o, baseUrl: requireBaseUrl(o.baseUrl) });
      onShutdown(schedule.stop);
    });

  addGenerateOptions(
    program
      .command('up')
      .description('the whole local service: generate, build, serve, then regenerate every minute'),
  )
    .option('--port <n>', 'port to listen on', parsePort, 8080)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--cron <expr>', 'cron expression', DEFAULT_CRON)
    .option('--dist <dir>', 'build output folder', 'dist')
    .option('--dev-facilitator-port <n>', 'port of the development facilitator', parsePort, 4021)
    .option(
      '--backfill-days <n>',
      'simulated source only: replay this many days of arena rounds first (0 to skip)',
      parseCount,
      DEFAULT_BACKFILL_DAYS,
    )
    .action(async (o: UpFlags) => {
      const baseUrl = process.env.EMI_BASE_URL ?? `http://${o.host}:${o.port}`;
      if (o.source === 'sim' && o.backfillDays > 0) {
        // Rounds already on record are skipped, so only a fresh store pays for the replay.
        await backfillAndReport({
          stateDir: resolve(o.state),
          days: o.backfillDays,
          seed: o.seed,
          asOf: o.asOf,
        });
      }
      await generateOnce(o);
      await build(SITE_TEMPLATES, o.out, o.dist, baseUrl, o.state);
      const { startLocalStack } = await import('./local-stack.ts');
      const stack = await startLocalStack({
        port: o.port,
        host: o.host,
        dir: resolve(o.dist),
        paid: resolve(o.paid),
        devFacilitatorPort: o.devFacilitatorPort,
      });
      const schedule = await scheduleRuns({ ...o, baseUrl });
      onShutdown(async () => {
        await schedule.stop();
        await stack.close();
      });
    });

  program
    .command('validate')
    .description('check a folder of published output against the schemas (non-zero exit on any failure)')
    .argument('[dir]', 'public site folder', 'site')
    .option('--paid <dir>', 'also check the paid bodies in this folder')
    .action(async (dir: string, o: { paid?: string }) => {
      const checks = [
        ...(await validatePublicOutput(resolve(dir))),
        ...(o.paid ? await validatePaidOutput(resolve(o.paid)) : []),
      ];
      for (const check of checks) {
        console.log(
          `${check.ok ? 'ok  ' : 'FAIL'} ${check.file}${check.ok ? '' : `: ${check.problems.slice(0, 3).join('; ')}`}`,
        );
      }
      const failed = checks.filter((c) => !c.ok).length;
      console.log(`${checks.length - failed} passed, ${failed} failed`);
      if (failed > 0) process.exitCode = 1;
    });

  registerArenaCommands(program, {
    storePath: () => resolve(process.env.EMI_STATE_DIR ?? 'var', 'arena.sqlite'),
  });
  registerBackfillCommand(program);
  registerSourcesCommands(program);
  registerPaywallCommands(program);
  return program;
}

/** Runs the CLI: errors become one line on stderr and a non-zero exit, never a stack trace. */
export async function main(argv: string[]): Promise<void> {
  try {
    await createProgram().parseAsync(argv);
  } catch (error) {
    console.error(`emi: ${(error as Error).message.split('\n')[0]}`);
    process.exitCode = process.exitCode || 1;
  }
}
