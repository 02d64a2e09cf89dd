// Runs the real `emi` command (bin/emi.js) in a folder, for the operator tests.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import { roundFromId } from '../generator/engines/arena/rules.ts';
import type { Round } from '../generator/engines/arena/rounds.ts';
import { openArenaStore } from '../generator/state/store.ts';

export const EMI = resolve('bin/emi.js');

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  /** Resolves once stderr or stdout contains `text`. */
  waitFor(text: string | RegExp): Promise<void>;
  /** What it printed so far, stdout then stderr. */
  output(): string;
  /** Asks it to stop (SIGTERM). */
  stop(): void;
  done: Promise<Finished>;
}

export interface StartOptions {
  /** A command `emi` runs under (e.g. setpriv's, as another user; faketime's). */
  wrapper?: readonly string[];
  /** Killed (SIGKILL) if still running after this long: a check that let a long-running command start. */
  timeoutMs?: number;
}

/** `setpriv` with the arguments that run a command as the user nobody. */
const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

/** Whether this test can run a process as another user (root, with util-linux's setpriv). */
export function canRunAsNobody(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync(AS_NOBODY[0]!, [...AS_NOBODY.slice(1), 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** `emi up` on free ports, with no backfill and a schedule that does not fire while a test runs. */
export const UP_ON_FREE_PORTS: readonly string[] = [
  'up',
  '--port',
  '0',
  '--dev-facilitator-port',
  '0',
  '--backfill-days',
  '0',
  '--cron',
  '0 0 1 1 *',
];

/** Starts the real `emi` without the EMI_* variables of this machine, with `env` on top. */
export function startEmi(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  { wrapper = [], timeoutMs }: StartOptions = {},
): Running {
  const machine = Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_'));
  const childEnv: NodeJS.ProcessEnv = { ...Object.fromEntries(machine), ...env };
  const [command = process.execPath, ...rest] = [...wrapper, process.execPath, EMI, ...args];
  const child = spawn(command, rest, { cwd, env: childEnv });
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ text: string | RegExp; resolve: () => void }> = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const both = stdout + stderr;
      if (typeof waiter.text === 'string' ? both.includes(waiter.text) : waiter.text.test(both)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    check();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    check();
  });
  const done = new Promise<Finished>((resolvePromise) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    }),
  );
  return {
    child,
    done,
    stop: () => child.kill('SIGTERM'),
    output: () => stdout + stderr,
    waitFor: (text) =>
      new Promise<void>((resolvePromise, reject) => {
        waiters.push({ text, resolve: resolvePromise });
        check();
        void done.then((f) =>
          reject(new Error(`emi ended before printing ${String(text)}: ${f.stdout}${f.stderr}`)),
        );
      }),
  };
}

export const runEmi = (
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<Finished> => startEmi(cwd, args, env, options).done;

/** Runs the real `emi` as the user nobody (see canRunAsNobody). */
export const runEmiAsNobody = (cwd: string, args: string[]): Promise<Finished> =>
  startEmi(cwd, args, {}, { wrapper: AS_NOBODY }).done;

/** `emi generate --source live` with the config file `config`, into site/, paid/ and var/ of the folder it runs in. */
export const liveGenerateArgs = (config: string): string[] => [
  'generate',
  '--source',
  'live',
  '--config',
  config,
  '--out',
  'site',
  '--paid',
  'paid',
  '--state',
  'var',
];

/** `emi generate` into site/, paid/ and `state` (var/) of the folder it runs in, at `asOf`. */
export const generateArgs = (asOf: string, state = 'var'): string[] => [
  'generate',
  '--out',
  'site',
  '--paid',
  'paid',
  '--state',
  state,
  '--as-of',
  asOf,
];

/** Overwrites an SQLite file's header page with noise: it is no longer a database (a damaged store). */
export async function corruptStore(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.write(randomBytes(4096), 0, 4096, 0);
  } finally {
    await handle.close();
  }
}

/** The lines on stderr, without build/'s notice (others may be editing the sources) and the pointer to --help. */
export const errorLines = (run: Finished): string[] =>
  run.stderr
    .split('\n')
    .filter(
      (line) => line && !line.includes('build/ is out of date') && !line.startsWith('(run with --help'),
    );

/** Exit code 2 and one line on stderr matching `line`. */
export function expectUsageMistake(run: Finished, line: RegExp): void {
  expect(run.code, `${run.stdout}${run.stderr}`).toBe(2);
  expect(errorLines(run)).toEqual([expect.stringMatching(line)]);
}

/** Exit code 0, or the command's output in the failure. */
export const expectOk = (run: Finished): void => expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);

/**
 * One human vote through `emi arena vote` (alice, BULLISH, for the asset's round open to votes), then a run one minute
 * into that round, which records its brain call: the round, to run on from. The store in var/ is made first, as a
 * first run leaves it (emi arena vote refuses a store no run has made), without a run that would record a round.
 */
export async function voteAndOpenRound(
  cwd: string,
  asset = 'BTC',
  env: Record<string, string> = {},
): Promise<Round> {
  openArenaStore(resolve(cwd, 'var', 'arena.sqlite')).close();
  const vote = await runEmi(
    cwd,
    ['arena', 'vote', '--asset', asset, '--prediction', 'bullish', '--voter', 'alice'],
    env,
  );
  expectOk(vote);
  const round = roundFromId(/vote recorded for (\S+)/.exec(vote.stdout)?.[1] ?? '');
  if (!round) throw new Error(`no round in: ${vote.stdout}`);
  expectOk(await runEmi(cwd, generateArgs(new Date(round.start + 60_000).toISOString()), env));
  return round;
}

/** A running `emi paywall`: where it listens, and where its development facilitator does. */
export interface RunningPaywall {
  base: string;
  facilitatorUrl: string;
  /** Stops it (SIGTERM) and resolves once it has ended. */
  close(): Promise<Finished>;
}

/**
 * `emi paywall` on free ports (its own and the development facilitator's) with `args`, in `cwd`, as an operator runs
 * it; resolves once it listens.
 */
export async function startPaywallCli(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunningPaywall> {
  const running = startEmi(cwd, ['paywall', '--port', '0', '--dev-facilitator-port', '0', ...args], env);
  const close = () => {
    running.stop();
    return running.done;
  };
  try {
    await running.waitFor(
      /x402 paywall listening on http:\/\/\S+[^]*development facilitator on http:\/\/\S+/,
    );
  } catch (error) {
    await close();
    throw error;
  }
  const url = (pattern: RegExp) => pattern.exec(running.output())?.[1] ?? '';
  return {
    base: url(/x402 paywall listening on (http:\/\/\S+)/),
    facilitatorUrl: url(/development facilitator on (http:\/\/\S+)/),
    close,
  };
}
