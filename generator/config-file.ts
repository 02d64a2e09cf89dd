// Checks an operator's configuration before a command does anything: the --config file (or EMI_CONFIG) exists, is
// JSON, has only known keys and valid source settings; a --cron expression is valid; a run's --source, --record and
// --replay agree; the folders the command writes to are writable. Any problem is one line on stderr and exit code
// 2, before anything is written, except a folder this user may not write to: a fault of the machine, not of the
// command line (exit 1, see configurationHook).
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
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

/** Throws a one-line error unless `file` is a readable JSON object with only known keys and valid settings. */
export async function checkConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
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
    throw new Error(`configuration file ${file} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error(`configuration file ${file} must hold a JSON object`);
  }
  const keysProblem = configKeysProblem(file, json);
  if (keysProblem) throw new Error(keysProblem);
  await loadSourcesConfig({ file, env });
  const { parsePublishers } = await import('../paywall-worker/publishers/config.ts');
  parsePublishers((json as { publishers?: unknown }).publishers ?? []);
}

const hasOption = (command: Command, long: string): boolean =>
  command.options.some((option) => option.long === long);

/** The commands that run the generator: they take --source, --record and --replay and write every run folder. */
const RUN_COMMANDS: readonly string[] = ['generate', 'schedule', 'up'];

/**
 * The folders a command writes to, from its parsed options. Only the commands named here write theirs: `emi serve`
 * (and any other reader) only reads its --paid and --dir, which may well be read-only.
 */
function writtenFolders(command: Command, opts: Record<string, unknown>): Array<[string, string]> {
  const roles: Array<[string, string]> =
    command.name() === 'build'
      ? [['out', 'output folder']]
      : RUN_COMMANDS.includes(command.name())
        ? [
            ['out', 'output folder'],
            ['paid', 'paid folder'],
            ['state', 'state folder'],
            ['dist', 'build output folder'],
          ]
        : [];
  return roles.flatMap(([key, role]) =>
    typeof opts[key] === 'string' ? [[opts[key] as string, role] as [string, string]] : [],
  );
}

/** Every check for one command; throws the first problem as a one-line error. */
export async function checkCommandConfiguration(
  command: Command,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const opts = command.opts<Record<string, unknown>>();
  // `emi publisher …` reads and writes the file itself (`add` creates it) with its own one-line errors.
  if (command.parent?.name() === 'publisher') return;
  if (hasOption(command, '--config')) {
    // An empty EMI_CONFIG is unset.
    const file = typeof opts.config === 'string' ? opts.config : env.EMI_CONFIG || undefined;
    if (file !== undefined) await checkConfigFile(file, env);
  }
  if (command.name() === 'generate' && opts.baseUrl !== undefined && opts.dist === undefined) {
    throw new Error('--base-url is for the build after the run: it goes with --dist');
  }
  if (hasOption(command, '--record') && typeof opts.source === 'string') {
    // A usage mistake, not a failed run: said before a run is recorded (market-source.ts loads only here).
    const { sourceFlagsProblem } = await import('./market-source.ts');
    const problem = sourceFlagsProblem(opts.source, {
      recordDir: opts.record as string | undefined,
      replayDir: opts.replay as string | undefined,
    });
    if (problem) throw new Error(problem);
  }
  // node-cron loads only for the commands that take --cron.
  if (typeof opts.cron === 'string') (await import('./schedule.ts')).assertCronExpression(opts.cron);
  for (const [folder, role] of writtenFolders(command, opts)) await assertWritableFolder(folder, role);
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
      if (command.name() === 'generate') return;
      throw error;
    }
    command.error(`emi: ${(error as Error).message.split('\n')[0]}`, {
      exitCode: CONFIG_EXIT_CODE,
      code: 'emi.configuration',
    });
  }
}
