// Checks an operator's configuration before a command does anything: the --config file (or EMI_CONFIG) exists, is
// JSON, has only known keys and valid source settings; the source settings of the environment are valid for a
// command that collects, with or without a file; the history retention of the environment for a command that
// appends to the history; the paywall's settings (options and EMI_* variables) for a command that starts it; a
// --cron expression is valid; a run's (and `emi sources check`'s) --source, --record and --replay agree; the
// folders the command is given do not overlap (folder-overlap.ts); the folders it writes to are writable. Any
// problem is one line on stderr and exit code 2, before anything is written, except a folder this user may not
// write to: a fault of the machine, not of the command line (exit 1, see configurationHook).
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { EnvSettings } from '../paywall-worker/config.ts';
import { stateFolder } from './defaults.ts';
import { commandFolders, folderOverlapProblem } from './folder-overlap.ts';
import { assertWritableFolder, isPermissionFault } from './publish/writable.ts';
import { loadSourcesConfig } from './sources/config.ts';

export const CONFIG_EXIT_CODE = 2;

/** Top-level keys of the configuration file, each owned by one part of the project. */
export const CONFIG_FILE_KEYS = ['sources', 'publishers'] as const;

/** The configuration's unknown top-level keys as one line, or null: a misspelt key would be ignored silently. */
export function configKeysProblem(file: string, json: object): string | null {
  const unknown = Object.keys(json).filter((key) => !(CONFIG_FILE_KEYS as readonly string[]).includes(key));
  if (unknown.length === 0) return null;
  return (
    `configuration file ${file}: unknown key ${unknown.map((k) => `"${k}"`).join(', ')} ` +
    `(known: ${CONFIG_FILE_KEYS.join(', ')})`
  );
}

/**
 * The configuration file as a JSON object with only known keys, or a one-line error: the one reader of the file for
 * every command (and for the paywall's publishers, at start and when it reads the file again while running).
 */
export async function readConfigObject(file: string): Promise<Record<string, unknown>> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      error.code === 'ENOENT'
        ? `configuration file ${file} does not exist`
        : `cannot read configuration file ${file}: ${error.message}`,
      { cause: error },
    );
  });
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    // V8 quotes the text around the fault, newlines and all: one line, as every other problem here.
    const why = (error as Error).message.replace(/\s+/g, ' ');
    throw new Error(`configuration file ${file} is not valid JSON: ${why}`, {
      cause: error,
    });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error(`configuration file ${file} must hold a JSON object`);
  }
  const keysProblem = configKeysProblem(file, json);
  if (keysProblem) throw new Error(keysProblem);
  return json as Record<string, unknown>;
}

/**
 * Throws a one-line error unless `file` is a readable JSON object with only known keys and valid settings. With the
 * operator's payee (`--pay-to`, else EMI_PAYTO), a publisher paid to it is refused as the paywall's start would
 * refuse it, but before anything is written (`emi up` would otherwise generate and build first).
 */
export async function checkConfigFile(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  operatorPayTo: string | undefined = env.EMI_PAYTO || undefined,
): Promise<void> {
  const json = await readConfigObject(file);
  await checkSourcesConfig(file, env);
  const { parsePublishers } = await import('../paywall-worker/publishers/config.ts');
  parsePublishers(json.publishers ?? [], operatorPayTo);
}

/**
 * The source settings of `file` (if any) and of the environment, as a run will load them. A problem is one line:
 * zod's "✖ problem / → at path" lines are joined.
 */
async function checkSourcesConfig(file: string | undefined, env: NodeJS.ProcessEnv): Promise<void> {
  await loadSourcesConfig({ file, env }).catch((error: Error) => {
    const lines = error.message.split('\n').map((line) => line.trim());
    throw new Error(lines.filter(Boolean).join(' '), { cause: error });
  });
}

const hasOption = (command: Command, long: string): boolean =>
  command.options.some((option) => option.long === long);

/** A command as it is typed after `emi`: `generate`, `arena status`, `publisher list`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) {
    names.unshift(current.name());
  }
  return names.join(' ');
}

/** The commands that run the generator: they take --source, --record and --replay and write every run folder. */
const RUN_COMMANDS: readonly string[] = ['generate', 'schedule', 'up'];

/** The commands that collect market data, and so read the source settings (a file's and the environment's). */
const COLLECTING_COMMANDS: readonly string[] = [...RUN_COMMANDS, 'sources check'];

/** The commands that append rows to the published history (api/history/), and so read its retention. */
const APPENDS_HISTORY: readonly string[] = [...RUN_COMMANDS, 'backfill'];

/** The commands that start the paywall in this process (`emi mcp` unless it forwards to --paywall-url). */
const startsPaywall = (path: string, opts: Record<string, unknown>): boolean =>
  ['paywall', 'serve', 'up'].includes(path) || (path === 'mcp' && opts.paywallUrl === undefined);

/** The commands that build the site (`emi up` too, whose paywall check covers the same settings). */
const buildsSite = (path: string, opts: Record<string, unknown>): boolean =>
  ['build', 'schedule'].includes(path) || (path === 'generate' && opts.dist !== undefined);

/** The paywall's options a command may take, over its EMI_* variables. */
const PAYWALL_OPTIONS = [
  ['payTo', '--pay-to'],
  ['facilitatorUrl', '--facilitator-url'],
  ['baseUrl', '--base-url'],
] as const;

/**
 * The paywall's settings as it will start with them: the environment's, then the command's options. Each one is
 * named by where it came from (`--pay-to`, or EMI_PAYTO). Whether the payee can receive USDC is the start's to ask.
 */
async function checkPaywallSettings(
  command: Command,
  opts: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const { SETTING_VARIABLES, settingsFromEnv } = await import('../paywall-worker/config.ts');
  const settings = settingsFromEnv(env);
  const names: Partial<Record<(typeof PAYWALL_OPTIONS)[number][0], string>> = {};
  for (const [key, flag] of PAYWALL_OPTIONS) {
    if (!hasOption(command, flag)) continue;
    const value = opts[key];
    if (typeof value === 'string') {
      settings[key] = value;
      if (command.getOptionValueSource(key) === 'cli') names[key] = flag;
    } else if (settings[key] === undefined) names[key] = `${flag} or ${SETTING_VARIABLES[key]}`;
  }
  await checkPaywallStart(settings, names, env);
}

/** The paywall's settings (named as `checkSettings` names them) and the vote export's token; throws one line. */
async function checkPaywallStart(
  settings: EnvSettings,
  names: Partial<Record<keyof EnvSettings, string>>,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const { checkSettings } = await import('../paywall-worker/config.ts');
  checkSettings(settings, names);
  // The vote export's bearer token (the Worker answers 503 for one too short; a start is refused instead).
  const { operatorTokenProblem } = await import('../paywall-worker/operator-token.ts');
  const exportToken = env.EMI_VOTE_EXPORT_TOKEN;
  const tokenProblem = exportToken ? operatorTokenProblem('EMI_VOTE_EXPORT_TOKEN', exportToken) : null;
  if (tokenProblem) throw new Error(tokenProblem);
}

/**
 * What `emi paywall` checks before it starts, for a start that takes everything from the environment (the preview
 * scripts): EMI_CONFIG's file, then the paywall's EMI_* settings. Throws the first problem as one line.
 */
export async function checkPaywallEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // An empty EMI_CONFIG is unset, as for the commands.
  if (env.EMI_CONFIG) await checkConfigFile(env.EMI_CONFIG, env);
  const { settingsFromEnv } = await import('../paywall-worker/config.ts');
  await checkPaywallStart(settingsFromEnv(env), {}, env);
}

type FolderRole = readonly [option: string, role: string];

const STATE_FOLDER: FolderRole = ['state', 'state folder'];

/** The folders each command writes, by option; `emi arena` writes the state folder of EMI_STATE_DIR. */
const WRITTEN_FOLDERS: Readonly<Record<string, readonly FolderRole[]>> = {
  build: [['out', 'output folder']],
  backfill: [STATE_FOLDER, ['out', 'output folder']],
  ...Object.fromEntries(
    RUN_COMMANDS.map((name) => [
      name,
      [['out', 'output folder'], ['paid', 'paid folder'], STATE_FOLDER, ['dist', 'build output folder']],
    ]),
  ),
};

/** `emi publisher` commands that open the credit ledger in the state folder (not those sent to a --worker). */
const usesLedger = (name: string, opts: Record<string, unknown>): boolean =>
  name === 'list' ||
  (name === 'add' && opts.credits !== undefined) ||
  ((name === 'credit' || name === 'statement') && opts.worker === undefined);

/**
 * The folders a command writes to, from its parsed options. Only the commands named here write theirs: `emi serve`
 * (and any other reader) only reads its --paid and --dir, which may well be read-only.
 */
function writtenFolders(
  path: string,
  opts: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Array<[string, string]> {
  const [group, name] = path.split(' ');
  const state = typeof opts.state === 'string' ? opts.state : stateFolder(env);
  if (group === 'arena' && name) return [[state, STATE_FOLDER[1]]];
  if (group === 'publisher' && name) return usesLedger(name, opts) ? [[state, STATE_FOLDER[1]]] : [];
  return (WRITTEN_FOLDERS[path] ?? []).flatMap(([key, role]) =>
    typeof opts[key] === 'string' ? [[opts[key] as string, role] as [string, string]] : [],
  );
}

/** Every check for one command; throws the first problem as a one-line error. */
export async function checkCommandConfiguration(
  command: Command,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const opts = command.opts<Record<string, unknown>>();
  const path = commandPath(command);
  // `emi publisher …` reads and writes its file itself (`add` creates it) with its own one-line errors.
  const checksFile = hasOption(command, '--config') && !path.startsWith('publisher ');
  // An empty EMI_CONFIG is unset.
  const file = checksFile
    ? ((opts.config as string | undefined) ?? (env.EMI_CONFIG || undefined))
    : undefined;
  // The payee a started paywall would take (`emi paywall --pay-to` over EMI_PAYTO): no publisher is paid to it. Not
  // `emi publisher add --pay-to`, the publisher's own address (its file is not checked here).
  const payTo =
    startsPaywall(path, opts) && typeof opts.payTo === 'string' ? opts.payTo : env.EMI_PAYTO || undefined;
  if (file !== undefined) await checkConfigFile(file, env, payTo);
  else if (COLLECTING_COMMANDS.includes(path)) await checkSourcesConfig(undefined, env);
  if (startsPaywall(path, opts)) await checkPaywallSettings(command, opts, env);
  // A build writes the buyer page's config.json from EMI_PAYTO and EMI_NETWORK: a bad one would fail every build (every
  // tick of `emi schedule`) after its run had published, so it is a usage mistake said here.
  if (buildsSite(path, opts)) (await import('./site/buyer-config.ts')).checkBuyerSettings(env);
  if (command.name() === 'generate' && opts.baseUrl !== undefined && opts.dist === undefined) {
    throw new Error('--base-url is for the build after the run: it goes with --dist');
  }
  // The history's retention, read when a run appends its rows: a bad value would fail every run (every tick of
  // `emi schedule`) after the run had started and recorded itself, so it is a usage mistake said here instead.
  if (APPENDS_HISTORY.includes(path)) (await import('./history/store.ts')).retentionFromEnv(env);
  // The collection deadline, likewise (`emi up` would otherwise say so only at its first run, after backfill).
  if (RUN_COMMANDS.includes(path)) (await import('./cycle.ts')).collectDeadlineFromEnv(env);
  // `emi sources check` takes --source and --replay (not --record): the same rules as a run.
  if ((hasOption(command, '--record') || hasOption(command, '--replay')) && typeof opts.source === 'string') {
    // A usage mistake, not a failed run: said before a run is recorded (market-source.ts loads only here).
    const { sourceFlagsProblem } = await import('./market-source.ts');
    const problem = sourceFlagsProblem(opts.source, {
      recordDir: opts.record as string | undefined,
      replayDir: opts.replay as string | undefined,
      asOf: opts.asOf as number | undefined,
    });
    if (problem) throw new Error(problem);
  }
  // A scheduled run describes the minute it starts in: its data changes once a minute at most, so a shorter cadence
  // would publish a next_update_due that passes before anything new can come (the files would read late, then stale).
  if (typeof opts.cron === 'string' && typeof opts.cadence === 'number' && opts.cadence < 60) {
    throw new Error(
      `--cadence ${opts.cadence}: scheduled runs describe a whole minute, so their data changes at most once a ` +
        'minute: give 60 or more (a schedule firing more often republishes the same minute)',
    );
  }
  // node-cron loads only for the commands that take --cron.
  if (typeof opts.cron === 'string') {
    const schedule = await import('./schedule.ts');
    schedule.assertCronExpression(opts.cron);
    // A cron slower than the cadence: the files go late between runs. Said, not refused (a deliberate choice).
    const slower = typeof opts.cadence === 'number' ? schedule.cadenceWarning(opts.cron, opts.cadence) : null;
    if (slower) console.error(`emi: warning: ${slower}`);
  }
  // Folders that meet (`--out .`, `--paid` inside `--out`, `build --out` = `--published`): the run's links would
  // move one aside with the others' files, or the working folder with everything in it.
  const stateFromEnv =
    command.getOptionValueSource('state') === 'default' && Boolean(env.EMI_STATE_DIR?.trim());
  const overlap = folderOverlapProblem(commandFolders(path, opts, stateFromEnv), process.cwd());
  if (overlap) throw new Error(overlap);
  for (const [folder, role] of writtenFolders(path, opts, env)) await assertWritableFolder(folder, role);
}

/**
 * A commander preAction hook: a configuration problem ends the command with exit code 2. A folder this user may not
 * write to is no usage mistake: `emi generate` goes on so that the run records its failure where it can
 * (last-run.json, /status.json) and exits 1; any other command stops with the one line (the remedy included) and
 * exit 1, without the usage hint.
 */
export async function configurationHook(_program: Command, command: Command): Promise<void> {
  try {
    await checkCommandConfiguration(command);
  } catch (error) {
    if (isPermissionFault(error)) {
      // `emi generate` records its failure where it can; `emi arena status` only reads (state/status.ts).
      if (command.name() === 'generate' || commandPath(command) === 'arena status') return;
      throw error;
    }
    command.error(`emi: ${(error as Error).message.split('\n')[0]}`, {
      exitCode: CONFIG_EXIT_CODE,
      code: 'emi.configuration',
    });
  }
}
