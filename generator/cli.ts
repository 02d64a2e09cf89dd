// The `emi` command line. Each command is a thin shell over a module that does the work, and loads that module
// only when it runs: `emi --help` and `emi --version` load no engine, no Eleventy, no SQLite and no x402 package.
import { Command, Help, Option } from 'commander';
import type { CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { guardOutput } from './output.ts';
import { markClaimsStopping } from './state/claims-held.ts';
import {
  USAGE_EXIT_CODE,
  aheadOfClock,
  checkBaseUrl,
  commanderErrorLine,
  httpUrlOrNull,
  isUsageError,
  MAX_CADENCE_SECONDS,
  oneLine,
  parseAsOf,
  parseCadence,
  parseCount,
  parsePort,
  parsePositiveInt,
  parseSeed,
  requireFolder,
  requireFolderPath,
  usageError,
} from './cli-options.ts';
import {
  DEFAULT_BACKFILL_DAYS,
  DEFAULT_CADENCE_SECONDS,
  DEFAULT_CRON,
  DEFAULT_DEV_FACILITATOR_PORT,
  DEFAULT_PORT,
  DEFAULT_SEED,
  MAX_BACKFILL_DAYS,
  SOURCE_NAMES,
  stateFolder,
} from './defaults.ts';
import {
  SITE_TEMPLATES,
  assertSiteTemplates,
  build,
  buildFailureLine,
  generate,
  publishCycle,
  published,
  sayRun,
} from './cycle.ts';
import type { GenerateFlags } from './cycle.ts';
import type { RunReport } from './pipeline.ts';
import { COMMAND_GROUPS, addPlaceholders, commandGroupFor } from './cli-groups.ts';
import { DEFAULT_BASE_URL } from './discovery/urls.ts';
import { isPermissionFault } from './publish/writable.ts';
import type { CommandGroup, RegisterCommands } from './cli-groups.ts';

type UpFlags = GenerateFlags & {
  cron: string;
  dist: string;
  port: number;
  host: string;
  backfillDays: number;
  devFacilitatorPort: number;
  config?: string;
};

/** `emi up --backfill-days`: 0 skips the backfill; above the most `emi backfill` replays is a usage mistake. */
function parseBackfillDays(value: string): number {
  const days = parseCount(value);
  if (days > MAX_BACKFILL_DAYS)
    throw usageError(`at most ${MAX_BACKFILL_DAYS} days can be replayed: ${value}`);
  return days;
}

/**
 * The published files carry absolute URLs (sitemap, OpenAPI servers, schema ids, llms.txt), so a build that will be
 * deployed must say where: `emi build`, `emi schedule` and `emi generate --dist` refuse to run without
 * `--base-url` or EMI_BASE_URL rather than publish a development address, and refuse one that is not an absolute
 * http(s) URL: usage mistakes (exit code 2), said before anything is written. `emi up` and `emi serve` build for
 * their own local origin.
 */
const defaultBaseUrl = (): string | undefined => process.env.EMI_BASE_URL || undefined;

function requireBaseUrl(baseUrl: string | undefined): string {
  if (baseUrl) return checkBaseUrl(baseUrl);
  throw usageError(
    'refusing to build without a base URL: pass --base-url https://your.site (or set EMI_BASE_URL); ' +
      'for a local preview use --base-url http://127.0.0.1:8080',
  );
}

/**
 * The longest `emi mcp --paywall-timeout`: an hour. Node's timers hold at most about 24.8 days (a longer one fires at
 * once, a far longer one throws), and a paid call waiting an hour for its answer is waiting for nothing.
 */
export const MAX_PAYWALL_TIMEOUT_SECONDS = 3600;

function parsePaywallTimeout(value: string): number {
  const seconds = parsePositiveInt(value);
  if (seconds > MAX_PAYWALL_TIMEOUT_SECONDS) {
    throw usageError(
      `"${value}" is more than an hour: --paywall-timeout is from 1 to ${MAX_PAYWALL_TIMEOUT_SECONDS} seconds.`,
    );
  }
  return seconds;
}

/**
 * `--port 0` asks for any free port. Without EMI_BASE_URL the server's own address is the base URL, which the built
 * files and the paywall's answers carry: the port is chosen now, before the claim, the build and the listen, so that
 * they all name the port really bound (never :0). With EMI_BASE_URL the listen picks one, as before.
 */
async function chosenPort(port: number, host: string): Promise<number> {
  if (port !== 0 || process.env.EMI_BASE_URL) return port;
  return (await import('./state/instance-lock.ts')).pickFreePort(host);
}

/**
 * `emi mcp --paywall-url`: an absolute http(s) URL with a host, or a usage error (exit code 2) before the server
 * starts, so that a paid call never reports a payment "sent" to an address fetch cannot even try.
 */
function parsePaywallUrl(value: string): string {
  if (!httpUrlOrNull(value)) {
    throw usageError(
      `--paywall-url "${value}" is not an absolute http(s) URL: use one such as http://127.0.0.1:8080`,
    );
  }
  return value;
}

/** Templates Eleventy can build from, from this working folder, or a usage error (exit code 2). */
function checkTemplates(site: string): void {
  try {
    assertSiteTemplates(site);
  } catch (error) {
    throw usageError((error as Error).message);
  }
}

/** The project's templates, as `emi up` and `emi schedule` build from them at every cycle. */
const assertTemplatesReadable = (): void => checkTemplates(SITE_TEMPLATES);

/**
 * `emi build`'s folders to read, checked before anything is written: a --site folder without the project's
 * templates, or a --published path that is no folder at all, is a bad option value (exit code 2). A published
 * folder whose files are missing or invalid (a first run that failed) is the build's to refuse (exit 1).
 */
function checkBuildFolders(site: string, published: string): void {
  checkTemplates(site);
  requireFolder(published, {
    refusal: 'nothing to build from',
    option: '--published',
    writtenBy: ['emi generate', '--out'],
  });
}

/** Every time emi publishes is UTC, so the schedule's fields are too (a DST night neither skips nor doubles runs). */
const CRON_HELP = "cron expression, read in UTC whatever the host's time zone";

/** The options of a run; `asOf: false` for a command whose runs describe the clock's time (emi schedule). */
function addGenerateOptions(command: Command, { asOf = true } = {}): Command {
  if (asOf) {
    command.option(
      '--as-of <iso>',
      'market time to describe (ISO 8601, at most a day ahead of the clock); defaults to the current minute',
      parseAsOf,
    );
  }
  return command
    .option('--seed <n>', 'simulator seed', parseSeed, DEFAULT_SEED)
    .addOption(
      new Option('--source <name>', 'where market data comes from').choices([...SOURCE_NAMES]).default('sim'),
    )
    .option('--out <dir>', 'public site folder (free endpoints go below it)', 'site')
    .option('--paid <dir>', 'private folder for the paid bodies', 'paid')
    .option('--state <dir>', 'folder for the arena store and run reports (env EMI_STATE_DIR)', stateFolder())
    .option(
      '--cadence <seconds>',
      `seconds until the next scheduled run, published as next_update_due (at most ${MAX_CADENCE_SECONDS}, a day)`,
      parseCadence,
      DEFAULT_CADENCE_SECONDS,
    )
    .option('--record <dir>', 'live runs: save every raw venue response in this folder, for --source replay')
    .option('--replay <dir>', 'with --source replay: the recording folder to answer from')
    .option(
      '--config <file>',
      'JSON configuration file (default: EMI_CONFIG); see generator/sources/README.md',
    );
}

/** What one run and the build after it came to; their lines are said. */
interface CycleOutcome {
  report: RunReport;
  /** A site was built after the run (with `site`: always after one that published, else around the last good files). */
  built: boolean;
  /** The build after the run failed (said in its own line). */
  buildFailed: boolean;
}

/**
 * One run; with `site`, the site is built after it, after a failed or stale run too (see publishCycle), so that a
 * one-shot job (a systemd unit, a CI step) keeps the served /status.json true. The run's line is said as every
 * command says it (cycle.ts sayRun), then the build's failure, if any. A run that ended without a report (its state
 * folder not writable, a lock held) rejects, for `main` to say.
 */
async function runCycle(
  flags: GenerateFlags,
  site?: { dist: string; baseUrl: string },
): Promise<CycleOutcome> {
  const startedAt = Date.now();
  let finished: RunReport | undefined;
  let built = false;
  const run = site
    ? publishCycle({ ...flags, ...site }, (report) => void (finished = report), {
        warm: false,
        onBuilt: () => void (built = true),
      })
    : generate(flags);
  try {
    const report = await run;
    sayRun(report);
    return { report, built, buildFailed: false };
  } catch (error) {
    // The run ended and the build after it failed: the run's own outcome is said first, then the build's.
    if (finished && site) {
      sayRun(finished);
      console.error(buildFailureLine(error, site.dist));
      return { report: finished, built: false, buildFailed: true };
    }
    // The run could not even record itself (its state folder is not writable): /status.json says so instead.
    if (isPermissionFault(error)) {
      const { recordFailedStart } = await import('./publish/status.ts');
      const written = await recordFailedStart(resolve(flags.out), {
        error: oneLine(error.message),
        startedAt,
        finishedAt: Date.now(),
      });
      if (!written)
        console.error(`emi: the failure could not be recorded in ${flags.out}/status.json either`);
    }
    throw error;
  }
}

/** `emi generate`: one run (and with `site` the build after it); the exit code is the run's, or 1 for the build. */
async function generateOnce(flags: GenerateFlags, site?: { dist: string; baseUrl: string }): Promise<void> {
  const { report, buildFailed } = await runCycle(flags, site);
  // Published, but something needs the operator (a damaged arena store, said on stderr): exit non-zero too.
  if (buildFailed || !published(report) || report.error) process.exitCode = 1;
}

/** Why a run published nothing, for `emi up`'s line: its status as last-run.json has it, its time, its error. */
const unpublishedWhy = (report: RunReport): string =>
  `${report.status} as of ${report.as_of}: ${oneLine(report.error ?? 'no error recorded')}`;

/**
 * `emi up`'s first run and build. A first run that publishes nothing is recorded and the site rebuilt around the last
 * good files, as the schedule does: those are served and the schedule goes on. Returns false, said on stderr, when
 * there is nothing to serve (no good files yet, or the build failed): `emi up` then does not start.
 */
async function firstUpCycle(flags: GenerateFlags, site: { dist: string; baseUrl: string }): Promise<boolean> {
  const { report, built, buildFailed } = await runCycle(flags, site);
  if (buildFailed) {
    console.error(`emi up: not started: the build after its first run failed (said above)`);
    return false;
  }
  if (published(report)) return true;
  if (!built) {
    console.error(`emi up: not started: its first run published nothing (${unpublishedWhy(report)})`);
    return false;
  }
  console.error(
    `emi up: its first run published nothing (${report.status} as of ${report.as_of}): the last good files are ` +
      'served, the site rebuilt around them says so in /status.json; the schedule goes on',
  );
  return true;
}

/**
 * Refuses, as a usage error before anything is written, a run that would describe a time before the newest run on
 * record in its --state (an explicit --as-of, or a replay's recorded time): the arena files are read from the whole
 * store, so they would count records made after that time. A run of the clock's time (no --as-of) is not refused:
 * when the clock is behind the store, its arena step records nothing (state/step.ts).
 */
async function recordingTime(dir: string): Promise<number | undefined> {
  const { recordedAsOf } = await import('./sources/recording/replay-transport.ts');
  return recordedAsOf(dir).catch(() => undefined); // an unreadable recording: the run itself says why
}

async function refusePastAsOf(flags: GenerateFlags): Promise<void> {
  const asOf =
    flags.asOf ?? (flags.source === 'replay' && flags.replay ? await recordingTime(flags.replay) : undefined);
  if (asOf === undefined) return;
  const { pastAsOfProblem } = await import('./state/run-log.ts');
  const problem = pastAsOfProblem(resolve(flags.state, 'arena.sqlite'), asOf);
  if (problem) throw usageError(problem);
}

/**
 * An --as-of past the start of the clock's next minute: the arena records in time order, so runs of the clock on the
 * same --state record nothing until the clock passes it. `emi up`'s scheduled runs are runs of the clock, so it is
 * refused there (exit 2); `emi generate` runs it (a what-if, a test of the next round) and says so in one line.
 */
function checkAsOfAhead(flags: GenerateFlags, command: 'generate' | 'up'): void {
  const ahead = flags.asOf === undefined ? null : aheadOfClock(flags.asOf, Date.now());
  if (ahead === null) return;
  const asOf = new Date(flags.asOf as number).toISOString();
  if (command === 'up') {
    throw usageError(
      `--as-of ${asOf} is ${ahead} ahead of this machine's clock: emi up's scheduled runs follow the clock and ` +
        'would record nothing in the arena until it passes that time; for a what-if, run emi generate --as-of ' +
        'with a --state of its own',
    );
  }
  console.error(
    `emi: --as-of ${asOf} is ${ahead} ahead of this machine's clock: until the clock passes it, runs of the clock ` +
      `on --state ${flags.state} record no brain call, vote or outcome (give a what-if run a --state of its own)`,
  );
}

/**
 * Regenerates and rebuilds on a cron expression until SIGINT or SIGTERM, which stop the schedule and then `alsoStop`
 * (`emi up`'s server).
 */
async function scheduleRuns(
  flags: GenerateFlags & { cron: string; dist: string; baseUrl: string },
  alsoStop: () => Promise<void> = async () => undefined,
): Promise<void> {
  const { startSchedule } = await import('./schedule.ts');
  const schedule = startSchedule(
    flags.cron,
    async () => {
      // One bad tick is reported and the schedule goes on; the last good files stay published meanwhile.
      let reported = false;
      try {
        // A scheduled run describes the current minute: --as-of only applies to the first run of `emi up`.
        await publishCycle({ ...flags, asOf: undefined }, (report) => {
          reported = true;
          sayRun(report);
        });
      } catch (error) {
        // Once the run has reported, what failed is the build after it (the run's files are in place).
        console.error(
          reported
            ? buildFailureLine(error, flags.dist)
            : `emi: scheduled run failed: ${oneLine((error as Error).message)}`,
        );
      }
    },
    () => console.log('previous run still in progress: this tick was skipped'),
  );
  onShutdown(async () => {
    await schedule.stop();
    await alsoStop();
  });
  // Said once a signal stops it cleanly: a supervisor (or a test) may send SIGTERM as soon as it reads this line.
  console.log(`scheduled: "${flags.cron}" in UTC (Ctrl-C to stop)`);
}

function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    markClaimsStopping(); // a restart's new instance waits for this one to end rather than refusing
    console.log(
      `${signal}: stopping (a run still collecting or staging is recorded as interrupted), then exiting`,
    );
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

/** Commander's own usage errors: an unknown option or command, an argument missing or too many, bad choices. */
const COMMANDER_USAGE_ERRORS: ReadonlySet<string> = new Set([
  'commander.unknownOption',
  'commander.unknownCommand',
  'commander.excessArguments',
  'commander.missingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.optionMissingArgument',
  'commander.conflictingOption',
  'commander.invalidArgument',
  // The help shown on stderr for a command group named without its subcommand (`emi arena`, bare `emi`).
  'commander.help',
]);

/** Commander exits 1 for its usage errors; emi's own usage mistakes exit 2, so these do too (the rest as is). */
function exitForUsage(error: CommanderError): never {
  process.exit(
    error.exitCode === 1 && COMMANDER_USAGE_ERRORS.has(error.code) ? USAGE_EXIT_CODE : error.exitCode,
  );
}

/** Commander's description of an option, and "(required)" for one that must be given (commander marks none). */
function optionDescription(option: Option): string {
  const description = new Help().optionDescription(option);
  return option.mandatory ? `${description} (required)` : description;
}

/** The package's version, read from package.json (a few hundred bytes, so --help stays fast). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** `emi generate`: one run, published atomically, optionally built into --dist. */
function registerGenerate(program: Command): void {
  addGenerateOptions(
    program.command('generate').description('compute every snapshot once and publish it atomically'),
  )
    .option(
      '--dist <dir>',
      'then build the site into this folder, after a failed or stale run too (its status.json says so)',
    )
    .option('--base-url <url>', 'with --dist: absolute http(s) base URL of the site (env EMI_BASE_URL)')
    .action(async (flags: GenerateFlags & { dist?: string; baseUrl?: string }) => {
      const { dist } = flags;
      // Checked before the run, as `emi build` checks it: a run must not publish and then fail for want of a URL.
      const site =
        dist === undefined ? undefined : { dist, baseUrl: requireBaseUrl(flags.baseUrl ?? defaultBaseUrl()) };
      (await import('./cycle.ts')).collectDeadlineFromEnv(); // a bad EMI_COLLECT_DEADLINE_SECONDS: exit 2 now
      await refusePastAsOf(flags);
      checkAsOfAhead(flags, 'generate');
      await generateOnce(flags, site);
    });
}

/** `emi build`: the Eleventy site from the published files, switched into place in one step. */
function registerBuild(program: Command): void {
  program
    .command('build')
    .description('build the static site (Eleventy) from the published files into a deployable folder')
    .option('--site <dir>', 'Eleventy input folder (templates, docs, buyer page)', SITE_TEMPLATES)
    .option('--published <dir>', 'folder `emi generate --out` wrote to', 'site')
    .option('--out <dir>', 'output folder', 'dist')
    // Read by nothing (the build takes the history from the published files): still accepted, unlisted, so that
    // recipes and units written with it keep working.
    .addOption(new Option('--state <dir>', 'ignored').hideHelp())
    .option(
      '--base-url <url>',
      'absolute http(s) base URL of the deployed site, required (env EMI_BASE_URL)',
      defaultBaseUrl(),
    )
    .action(async (o: { site: string; published: string; out: string; baseUrl?: string }) => {
      const baseUrl = requireBaseUrl(o.baseUrl);
      checkBuildFolders(o.site, o.published);
      await build({ site: o.site, published: o.published, out: o.out, baseUrl });
      console.log(`built ${resolve(o.out)}`);
    });
}

/** `emi serve`: the built site on one origin, the paywall worker on its paths. */
function registerServe(program: Command): void {
  program
    .command('serve')
    .description('preview the built site on one origin, with the paywall worker on the four x402 paths')
    .option('--port <n>', 'port to listen on', parsePort, DEFAULT_PORT)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--dir <dir>', 'folder to serve', 'dist')
    .option('--paid <dir>', 'folder holding the paid bodies', 'paid')
    .option(
      '--dev-facilitator-port <n>',
      'port of the development facilitator',
      parsePort,
      DEFAULT_DEV_FACILITATOR_PORT,
    )
    .option('--config <file>', 'JSON configuration file, e.g. its publishers (default: EMI_CONFIG)')
    .addHelpText(
      'after',
      "\nState: the arena votes, the payment book (with a configured facilitator) and the publishers' credit ledger\n" +
        'are kept in EMI_STATE_DIR (default var), where `emi up --state` and `emi paywall --state` keep them;\n' +
        'each path is printed at start.\n',
    )
    .action(
      async (o: {
        port: number;
        host: string;
        dir: string;
        paid: string;
        devFacilitatorPort: number;
        config?: string;
      }) => {
        // The preview publishes nothing, but its paywall and MCP answers carry the base URL: the same rule.
        if (process.env.EMI_BASE_URL) checkBaseUrl(process.env.EMI_BASE_URL);
        // A folder that is not there is a usage mistake; one not built yet is served, with a word on stderr.
        const unbuilt = (await import('./serve/served-folder.ts')).checkServedFolder(
          o.dir,
          'its pages answer 404',
        );
        if (unbuilt) console.error(`emi: ${unbuilt}`);
        // Its votes, payment book and credit ledger go there: a file in the way is said now, not as a raw EEXIST.
        await requireFolderPath(stateFolder(), 'state folder');
        const port = await chosenPort(o.port, o.host);
        const { claimInstance } = await import('./state/instance-lock.ts');
        const instance = await claimInstance({ folder: o.dir, port, host: o.host, command: 'serve' });
        const { startLocalStack } = await import('./local-stack.ts');
        const { stateFiles } = await import('../paywall-worker/local.ts');
        const stack = await startLocalStack({
          ...o,
          port,
          dir: resolve(o.dir),
          paid: resolve(o.paid),
          // No --state: the votes, payment book and credit ledger of EMI_STATE_DIR (else var), each said at start.
          ...stateFiles(stateFolder()),
          onListening: instance.listening,
        });
        onShutdown(stack.close);
      },
    );
}

/** `emi schedule`: runs and builds on a cron expression. */
function registerSchedule(program: Command): void {
  // A scheduled run describes the clock's current minute: no --as-of.
  addGenerateOptions(program.command('schedule').description('regenerate and rebuild on a schedule'), {
    asOf: false,
  })
    .option('--cron <expr>', CRON_HELP, DEFAULT_CRON)
    .option('--dist <dir>', 'build output folder', 'dist')
    .option(
      '--base-url <url>',
      'absolute http(s) base URL of the deployed site, required (env EMI_BASE_URL)',
      defaultBaseUrl(),
    )
    .action(async (o: GenerateFlags & { cron: string; dist: string; baseUrl?: string }) => {
      (await import('./cycle.ts')).collectDeadlineFromEnv(); // a bad EMI_COLLECT_DEADLINE_SECONDS: exit 2 now
      const baseUrl = requireBaseUrl(o.baseUrl);
      // Every tick builds from the project's templates: a checkout Eleventy cannot read them from is said now.
      assertTemplatesReadable();
      // Before the first tick: a second scheduler on this --state says what already runs there and stops.
      await (await import('./state/instance-lock.ts')).claimStateFolder(o.state, 'schedule');
      await scheduleRuns({ ...o, baseUrl });
    });
}

/** `emi up`: backfill, first run, then serve and schedule in one process. */
function registerUp(program: Command): void {
  addGenerateOptions(
    program
      .command('up')
      .description('the whole local service: generate, build, serve, then regenerate every minute'),
  )
    .option('--port <n>', 'port to listen on', parsePort, DEFAULT_PORT)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--cron <expr>', CRON_HELP, DEFAULT_CRON)
    .option('--dist <dir>', 'build output folder', 'dist')
    .option(
      '--dev-facilitator-port <n>',
      'port of the development facilitator',
      parsePort,
      DEFAULT_DEV_FACILITATOR_PORT,
    )
    .option(
      '--backfill-days <n>',
      `simulated source only: replay this many days of arena rounds first (0 to skip, at most ${MAX_BACKFILL_DAYS})`,
      parseBackfillDays,
      DEFAULT_BACKFILL_DAYS,
    )
    .action(async (o: UpFlags) => {
      const envBaseUrl = process.env.EMI_BASE_URL;
      const port = await chosenPort(o.port, o.host);
      const baseUrl = envBaseUrl ? checkBaseUrl(envBaseUrl) : `http://${o.host}:${port}`;
      // Before anything is written (the backfill too): its first run describes --as-of.
      await refusePastAsOf(o);
      checkAsOfAhead(o, 'up');
      assertTemplatesReadable(); // it builds at every cycle, from the project's templates

      // Before anything is written: a second `emi up` on the same folders says what runs there and stops.
      const { claimInstance, claimStateFolder } = await import('./state/instance-lock.ts');
      const instance = await claimInstance({ folder: o.dist, port, host: o.host, command: 'up' });
      // And one scheduler per --state (an `emi schedule` too): two would refuse each other's runs every tick.
      const stateClaim = await claimStateFolder(o.state, 'up');
      if (o.source === 'sim' && o.backfillDays > 0) {
        const { backfillAndReport } = await import('./backfill-command.ts');
        // Rounds already on record are skipped, so only a fresh store pays for the replay.
        await backfillAndReport({
          stateDir: resolve(o.state),
          outDir: resolve(o.out),
          days: o.backfillDays,
          seed: o.seed,
          asOf: o.asOf,
        });
      }
      if (!(await firstUpCycle(o, { dist: o.dist, baseUrl }))) {
        process.exitCode = 1;
        return;
      }
      const { startLocalStack } = await import('./local-stack.ts');
      const { stateFiles } = await import('../paywall-worker/local.ts');
      const stack = await startLocalStack({
        port,
        host: o.host,
        dir: resolve(o.dist),
        paid: resolve(o.paid),
        devFacilitatorPort: o.devFacilitatorPort,
        config: o.config,
        // The votes, the payment book and the credit ledger follow --state, as the arena store does.
        ...stateFiles(o.state),
        onListening: async (url) => {
          await instance.listening(url);
          await stateClaim.listening(url);
        },
      });
      await scheduleRuns({ ...o, baseUrl }, stack.close);
    });
}

/** `emi validate`: a folder of output checked against the schemas. */
function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check a folder of published output against the schemas (non-zero exit on any failure)')
    .argument('[dir]', 'public site folder', 'site')
    .option('--paid <dir>', 'also check the paid bodies in this folder')
    .action(async (dir: string, o: { paid?: string }) => {
      requireFolder(dir, {
        refusal: 'nothing to validate',
        option: null,
        writtenBy: ['emi generate', '--out'],
      });
      if (o.paid) {
        requireFolder(o.paid, {
          refusal: 'nothing to validate',
          option: '--paid',
          writtenBy: ['emi generate', '--paid'],
        });
      }
      const { checkLines, validateHistoryOutput, validatePaidOutput, validatePublicOutput } =
        await import('./publish/validate-output.ts');
      const checks = [
        ...(await validatePublicOutput(resolve(dir))),
        ...(await validateHistoryOutput(resolve(dir))),
        ...(o.paid ? await validatePaidOutput(resolve(o.paid)) : []),
      ];
      for (const line of checkLines(checks)) console.log(line);
      const failed = checks.filter((c) => !c.ok).length;
      console.log(`${checks.length - failed} passed, ${failed} failed`);
      if (failed > 0) process.exitCode = 1;
    });
}

/** `emi mcp`: the MCP server over stdio. */
function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('the MCP server over stdio (free tools, history, x402 paid tools) for local agents')
    .option('--dir <dir>', 'built site folder', 'dist')
    .option('--paid <dir>', 'paid bodies, for the in-process paywall', 'paid')
    .option(
      '--paywall-url <url>',
      'send paid tools to this running paywall (e.g. emi serve) instead (an absolute http(s) URL)',
      parsePaywallUrl,
    )
    .option(
      '--paywall-timeout <seconds>',
      `longest wait for the whole answer of --paywall-url (default 30, at most ${MAX_PAYWALL_TIMEOUT_SECONDS}; only with --paywall-url)`,
      parsePaywallTimeout,
    )
    .option('--base-url <url>', 'base URL of the discovery documents', defaultBaseUrl() ?? DEFAULT_BASE_URL)
    .action(
      async (o: {
        dir: string;
        paid: string;
        paywallUrl?: string;
        paywallTimeout?: number;
        baseUrl: string;
      }) => {
        const { paywallTimeout, ...options } = o;
        checkBaseUrl(options.baseUrl);
        const unbuilt = (await import('./serve/served-folder.ts')).checkServedFolder(
          options.dir,
          'its tools find no file',
        );
        if (paywallTimeout !== undefined && options.paywallUrl === undefined) {
          throw usageError(
            '--paywall-timeout bounds the wait for --paywall-url: give --paywall-url too, or leave it out ' +
              '(the in-process paywall needs no bound)',
          );
        }
        if (unbuilt) console.error(`emi mcp: ${unbuilt}`);
        await (
          await import('../mcp/stdio.ts')
        ).runMcpStdio({
          ...options,
          ...(paywallTimeout ? { paywallTimeoutMs: paywallTimeout * 1000 } : {}),
        });
      },
    );
}

/** `emi backup`: a consistent copy of the state folder while emi runs (generator/backup-command.ts, loaded to run). */
function registerBackup(program: Command): void {
  program
    .command('backup')
    .description("copy the state folder's stores, records and served generation consistently, while emi runs")
    .argument('<dir>', 'new or empty folder to write the backup into (0700)')
    .option('--state <dir>', 'state folder to back up (env EMI_STATE_DIR)', stateFolder())
    .option('--config <file>', 'also keep this configuration file (default: EMI_CONFIG)')
    .action(async (dir: string, o: { state: string; config?: string }) => {
      await (await import('./backup-command.ts')).runBackup(dir, { ...o, version: packageVersion() });
    });
}

/**
 * Commands that run once and end (generator/one-shot.ts). `emi up` runs a first generate and build too, then keeps
 * running: it is not one of them.
 */
const ONE_SHOT_COMMANDS: ReadonlySet<string> = new Set(['generate', 'build']);

/**
 * The whole command tree. Commands defined in other modules (arena, backfill, sources, paywall, buy) appear as
 * placeholders that load their module when they run, unless it is given in `loaded`: `main` loads up front the
 * one module the command line asks for, so that its help and errors are the real ones.
 */
export function createProgram(loaded: ReadonlyMap<CommandGroup, RegisterCommands> = new Map()): Command {
  const program = new Command('emi')
    .description(
      'Educational market-intelligence publisher: generate, build and serve the API (educational only, not advice)',
    )
    .version(packageVersion(), '-v, --version', 'print the version of emi')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride(exitForUsage)
    .configureOutput({ outputError: (text, write) => write(`${commanderErrorLine(text)}\n`) })
    .configureHelp({ optionDescription })
    .hook('preAction', async (program, command) => {
      // First, before the configuration (the first module with schemas) is loaded: see configureOneShotProcess.
      if (command.parent === program && ONE_SHOT_COMMANDS.has(command.name()))
        (await import('./one-shot.ts')).configureOneShotProcess();
      // Bad configuration: one line, exit 2, before anything is written (loaded only when a command runs).
      await (await import('./config-file.ts')).configurationHook(program, command);
    });

  registerGenerate(program);
  registerBuild(program);
  registerServe(program);
  registerSchedule(program);
  registerUp(program);
  registerValidate(program);
  registerMcp(program);
  registerBackup(program);

  for (const group of COMMAND_GROUPS) {
    const register = loaded.get(group);
    if (register) register(program);
    else
      addPlaceholders(program, group, async (needed, args) => {
        await createProgram(new Map([[needed, await needed.load()]])).parseAsync(args, { from: 'user' });
      });
  }
  return program;
}

/** The command tree with the module of the command that `argv` runs (or asks help for) loaded. */
export async function programFor(argv: readonly string[]): Promise<Command> {
  const group = commandGroupFor(argv.slice(2));
  return createProgram(group ? new Map([[group, await group.load()]]) : undefined);
}

const isHelpFlag = (arg: string): boolean => arg === '--help' || arg === '-h';

/**
 * `emi help nosuch`, `emi nosuch --help` and the same under a group (`emi publisher nosuch --help`) name a command
 * that does not exist, as `emi nosuch` does: commander shows the group's help for them instead (exit 0, or 2 on
 * stderr). Returns the command line that makes commander say the same usage error as for `emi nosuch` (exit 2,
 * with its "Did you mean"), or null for any other.
 */
function unknownCommandArgs(program: Command, args: readonly string[]): string[] | null {
  const find = (group: Command, name: string) =>
    group.commands.find((c) => c.name() === name || c.aliases().includes(name));
  let group = program;
  for (let i = 0; group.commands.length > 0; i++) {
    const word = args[i];
    if (word === undefined || word.startsWith('-')) return null;
    if (word === 'help') {
      const named = args[i + 1];
      const unknown = named !== undefined && !named.startsWith('-') && !find(group, named);
      return unknown ? [...args.slice(0, i), named] : null;
    }
    const command = find(group, word);
    if (!command) return args.some(isHelpFlag) ? args.filter((arg) => !isHelpFlag(arg)) : null;
    group = command;
  }
  return null; // a command's own words are its arguments
}

/**
 * Runs the CLI: errors become one line on stderr and a non-zero exit, never a stack trace; 2 for a usage mistake
 * (see usageError), 1 for anything else.
 */
export async function main(argv: string[]): Promise<void> {
  guardOutput(process.stdout);
  try {
    const program = await programFor(argv);
    const unknown = unknownCommandArgs(program, argv.slice(2));
    await (unknown ? program.parseAsync(unknown, { from: 'user' }) : program.parseAsync(argv));
  } catch (error) {
    console.error(`emi: ${oneLine((error as Error).message)}`);
    process.exitCode = process.exitCode || (isUsageError(error) ? USAGE_EXIT_CODE : 1);
  }
}
