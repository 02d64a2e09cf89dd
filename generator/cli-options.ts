// Parsers for command-line values: each turns bad input into one clear sentence, and a usage error (exit code 2).
import { InvalidArgumentError } from 'commander';
import { statSync } from 'node:fs';
import { baseUrlProblem } from './discovery/urls.ts';

/** Exit code of a usage mistake: a bad option value, a bad configuration (see config-file.ts). */
export const USAGE_EXIT_CODE = 2;

/**
 * A usage mistake: a bad option value, a bad setting in the environment, options that do not go together. Thrown by
 * a commander argument parser, or by an action before it writes or starts anything (`main` turns it into one line
 * and exit code 2).
 */
export function usageError(message: string): InvalidArgumentError {
  const error = new InvalidArgumentError(message);
  error.exitCode = USAGE_EXIT_CODE;
  return error;
}

/** Whether `error` is a usage mistake (see usageError); checked by its exit code, as bundled chunks may copy classes. */
export const isUsageError = (error: unknown): boolean =>
  error instanceof Error && (error as { exitCode?: unknown }).exitCode === USAGE_EXIT_CODE;

/** How far past this machine's clock an as-of time may lie (a clock a little behind is no typo). */
export const AS_OF_MAX_AHEAD_MS = 24 * 60 * 60 * 1000;

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * An as-of time from the command line, at most a day after `now`. Only full ISO 8601 timestamps (date and time, Z
 * or an offset) are accepted: a bare date is ambiguous. The date and time written must be the ones parsed, so an
 * impossible date (2026-02-30, 24:00) is refused rather than rolled over into the next month or day.
 */
export function parseAsOfAt(value: string, now: number): number {
  const parts = ISO_TIMESTAMP.exec(value);
  const ms = Date.parse(value);
  if (!parts || Number.isNaN(ms)) {
    throw usageError(`"${value}" is not an ISO 8601 timestamp such as 2026-11-21T12:00:00Z.`);
  }
  const [, year, month, day, hour, minute, second = '00', , zone, sign, offsetHours, offsetMinutes] = parts;
  const offsetMs =
    zone === 'Z' ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  // The wall-clock time written, read back from the instant parsed.
  const wall = new Date(ms + offsetMs);
  const parsed = [
    wall.getUTCFullYear(),
    wall.getUTCMonth() + 1,
    wall.getUTCDate(),
    wall.getUTCHours(),
    wall.getUTCMinutes(),
    wall.getUTCSeconds(),
  ];
  const written = [year, month, day, hour, minute, second].map(Number);
  if (
    written.some((n, i) => n !== parsed[i]) ||
    Number(offsetHours ?? 0) > 23 ||
    Number(offsetMinutes ?? 0) > 59
  ) {
    throw usageError(`"${value}" is not a real date and time (no such day, hour or minute).`);
  }
  if (ms > now + AS_OF_MAX_AHEAD_MS) {
    throw usageError(
      `"${value}" is in the future: --as-of may be at most 24 hours after this machine's clock ` +
        `(${new Date(now).toISOString()}).`,
    );
  }
  return ms;
}

/**
 * How far `asOf` lies ahead of `now`, in words, when it is past the start of the clock's next minute (the time the
 * next scheduled run describes); else null. The arena records only in time order, so once a run of such a time is on
 * a --state, runs of the clock on it record nothing until the clock passes that time.
 */
export function aheadOfClock(asOf: number, now: number): string | null {
  const nextMinute = Math.ceil(now / 60_000) * 60_000;
  if (asOf <= nextMinute) return null;
  const minutes = Math.ceil((asOf - now) / 60_000);
  const hours = Math.floor(minutes / 60);
  return hours === 0 ? `${minutes} min` : `${hours} h ${minutes % 60} min`;
}

/** `parseAsOfAt` against this machine's clock (a commander argument parser). */
export function parseAsOf(value: string): number {
  return parseAsOfAt(value, Date.now());
}

export function parseSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seed) || seed > 0xffffffff) {
    throw usageError(`"${value}" is not a seed: use a whole number from 0 to 4294967295.`);
  }
  return seed;
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw usageError(`"${value}" is not a port: use a whole number from 0 to 65535.`);
  }
  return port;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || !Number.isSafeInteger(n)) {
    throw usageError(`"${value}" is not a positive whole number.`);
  }
  return n;
}

/**
 * The longest --cadence: a day. next_update_due says when the next run is due; a schedule slower than daily has no
 * freshness worth publishing, and far larger values overflow the dates every run then fails to validate.
 */
export const MAX_CADENCE_SECONDS = 86_400;

export function parseCadence(value: string): number {
  const seconds = parsePositiveInt(value);
  if (seconds > MAX_CADENCE_SECONDS) {
    throw usageError(`"${value}" is more than a day: --cadence is at most ${MAX_CADENCE_SECONDS} seconds.`);
  }
  return seconds;
}

export function parseCount(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw usageError(`"${value}" is not a whole number.`);
  }
  return n;
}

/**
 * What is wrong with a folder a command is given to read: `missing` (nothing there, or a file in its path),
 * `not a folder` (something else there), or null: a folder, or a path that cannot be looked at (the command then
 * says why when it reads it).
 */
function folderProblem(path: string): 'missing' | 'not a folder' | null {
  try {
    return statSync(path).isDirectory() ? null : 'not a folder';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : null;
  }
}

/** A folder one command reads and another writes, as the line refusing it names them. */
export interface FolderUse {
  /** What the command would do, e.g. "nothing to serve". */
  refusal: string;
  /** The option naming the folder; null when it is the command's argument. */
  option: string | null;
  /** The command and option that write such a folder, e.g. ["emi build", "--out"]. */
  writtenBy: readonly [command: string, option: string];
}

/**
 * Throws a usage error (exit code 2) unless `dir` is a folder: a typo or a step not run yet would otherwise read as
 * an empty site (every check failing, every page 404), so the line says which command makes the folder.
 */
export function requireFolder(dir: string, use: FolderUse): void {
  const problem = folderProblem(dir);
  if (!problem) return;
  const [writer, writerOption] = use.writtenBy;
  const named = use.option ? ` (${use.option})` : '';
  const instead = `${use.option ? `give ${use.option}` : 'name'} the folder ${writer} wrote to`;
  throw usageError(
    problem === 'missing'
      ? `${use.refusal}: folder ${dir} does not exist${named}; run ${writer} ${writerOption} ${dir} first, or ${instead}`
      : `${use.refusal}: ${dir} is not a folder${named}; ${instead}`,
  );
}

/**
 * A folder a command will write (a state folder), checked before it starts: a file in its path is a usage mistake
 * (exit code 2), said in one line as `emi generate` says it, rather than a raw EEXIST when the folder is made. A
 * folder this user may not write to is left to the command (it says so itself).
 */
export async function requireFolderPath(folder: string, role: string): Promise<void> {
  const { assertWritableFolder, isPermissionFault } = await import('./publish/writable.ts');
  try {
    await assertWritableFolder(folder, role);
  } catch (error) {
    if (isPermissionFault(error)) return;
    throw usageError((error as Error).message);
  }
}

/**
 * Commander's error text as one line: its first, with the "(Did you mean ...?)" hint it puts on a second line
 * folded in (a typo's fix is the part worth reading).
 */
export function commanderErrorLine(text: string): string {
  const [first = '', ...rest] = text.trim().split('\n');
  const hint = rest.map((line) => line.trim()).find((line) => /^\(Did you mean .+\?\)$/.test(line));
  return hint ? `${first} ${hint}` : first;
}

/** The value as it may be shown: a password (or user name) in it is never echoed to a terminal or a log. */
const withoutUserinfo = (value: string): string =>
  value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@');

/** `value` as an absolute http(s) URL with a host, or null. */
export function httpUrlOrNull(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname ? url : null;
}

/**
 * A base URL that published files will carry (robots.txt, sitemap, llms.txt, OpenAPI servers, schema ids): an
 * absolute http or https origin, with nothing after the host and port but an optional "/" (see baseUrlProblem).
 * Every command that builds the site checks its --base-url or EMI_BASE_URL here. Throws a usage error, one sentence
 * naming what was given.
 */
export function checkBaseUrl(value: string): string {
  const url = httpUrlOrNull(value);
  if (!url) {
    throw usageError(
      `base URL "${withoutUserinfo(value)}" is not an absolute http(s) URL: use one such as https://your.site ` +
        '(--base-url or EMI_BASE_URL)',
    );
  }
  const problem = baseUrlProblem(url);
  if (problem) {
    throw usageError(
      `base URL "${withoutUserinfo(value)}" ${problem}: use the origin alone, such as https://your.site ` +
        '(--base-url or EMI_BASE_URL)',
    );
  }
  return value;
}

/**
 * A message as one readable line. A zod error's message is its issues as JSON over many lines: it becomes the
 * first issue's path and message (and how many more there are); any other message, its first line.
 */
export function oneLine(message: string): string {
  const [first = '', ...rest] = message.trim().split('\n');
  if (rest.length > 0 && first.endsWith('[')) {
    const json = message.trim().slice(first.length - 1);
    try {
      const issues = JSON.parse(json) as unknown;
      if (Array.isArray(issues) && issues.length > 0) {
        const issue = issues[0] as { path?: unknown; message?: unknown };
        const path =
          Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join('.') : '(the value)';
        const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem(s))` : '';
        return `${first.slice(0, -1)}${path}: ${String(issue.message)}${more}`;
      }
    } catch {
      // not a JSON dump: its first line, below
    }
  }
  return first;
}
