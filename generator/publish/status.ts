// /status.json in the public site folder, written by every run, successful or not (the pipeline writes it last,
// outside the generations, so a failed run can say so). When a run publishes nothing, the age of the data still
// served comes from the previous status.
import { lstat, readFile, readlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { DISCLAIMER, PROJECT } from '../../schemas/common.ts';
import {
  RunStatus,
  SiteBuildFailure,
  UNPUBLISHED_RUNS_DAYS,
  UNPUBLISHED_RUNS_MAX,
} from '../../schemas/status.ts';
import type { UnpublishedStretch } from '../../schemas/status.ts';
import { oneLine } from '../cli-options.ts';
import type { RunReport } from '../pipeline.ts';
import { writeFileAtomic } from './atomic-write.ts';
import { CURRENT, storeBeside } from './generations.ts';

export const STATUS_FILE = 'status.json';

const DAY_MS = 86_400_000;

/**
 * The stretches of runs that published nothing: the previous status's, with this run added when it did not publish
 * (to the last stretch when the run before it was one of the same status, else as a new one); those that ended in
 * the last UNPUBLISHED_RUNS_DAYS days before this run, at most UNPUBLISHED_RUNS_MAX (the newest kept), oldest first.
 */
export function unpublishedRuns(report: RunReport, previous: RunStatus | null): UnpublishedStretch[] {
  const stretches = [...(previous?.unpublished_runs ?? [])];
  if (report.status === 'stale' || report.status === 'failed') {
    const last = stretches.at(-1);
    if (last && previous?.status === report.status && last.status === report.status) {
      stretches[stretches.length - 1] = {
        ...last,
        last_started_at: report.started_at,
        last_as_of: report.as_of,
        runs: last.runs + 1,
        error: report.error,
      };
    } else {
      stretches.push({
        first_started_at: report.started_at,
        last_started_at: report.started_at,
        first_as_of: report.as_of,
        last_as_of: report.as_of,
        runs: 1,
        status: report.status,
        error: report.error,
      });
    }
  }
  const since = Date.parse(report.started_at) - UNPUBLISHED_RUNS_DAYS * DAY_MS;
  return stretches
    .filter((stretch) => Date.parse(stretch.last_started_at) >= since)
    .slice(-UNPUBLISHED_RUNS_MAX);
}

/** An absolute path in an error line: from a slash not inside a word or URL, up to a space, quote or bracket. */
const ABSOLUTE_PATH = /(?<![\w.~:/])\/[^\s'"`()<>,;]*[^\s'"`()<>,;:.]/g;

/**
 * An error line as the public status shows it: the server's absolute paths (the checkout, the operator's home) are
 * nobody's business, so a path under one of `folders` (the working folder, the run's state and output folders) is
 * shown relative to it, any other as its base name. The local records (last-run.json, stderr) keep the full line.
 */
export function publicError(line: string, folders: readonly string[] = []): string {
  // A run's folder keeps its own name (`var/arena.sqlite`, not `arena.sqlite`): shown from its parent.
  const roots = [
    { folder: process.cwd(), from: process.cwd() },
    ...folders.map((folder) => ({ folder: resolve(folder), from: dirname(resolve(folder)) })),
  ].sort((a, b) => b.folder.length - a.folder.length);
  return line.replace(ABSOLUTE_PATH, (path) => {
    const root = roots.find(({ folder }) => path === folder || path.startsWith(`${folder}/`));
    return root === undefined ? basename(path) : relative(root.from, path) || '.';
  });
}

const publicErrorOrNull = (line: string | null, folders: readonly string[]): string | null =>
  line === null ? null : publicError(line, folders);

export function runStatus(
  report: RunReport,
  provider: string | null,
  published: { generatedAt: number; nextUpdateDue: number } | null,
  previous: RunStatus | null,
  folders: readonly string[] = [],
): RunStatus {
  const publishedNow = report.status === 'ok' || report.status === 'degraded';
  const data =
    publishedNow && published
      ? {
          generated_at: new Date(published.generatedAt).toISOString(),
          next_update_due: new Date(published.nextUpdateDue).toISOString(),
          mode: report.mode,
        }
      : (previous?.data ?? { generated_at: null, next_update_due: null, mode: null });
  // What is served decides `simulated`: a live run that published nothing leaves the simulated files served. As in
  // the bodies' source.simulated, only simulator data is simulated: a replay is recorded real answers (data.mode says
  // `replay`). A status from before data.mode was recorded says it in its own `simulated`.
  const servedSimulated =
    data.mode !== undefined
      ? data.mode === 'simulated'
      : (previous?.simulated ?? report.mode === 'simulated');
  return RunStatus.parse({
    project: PROJECT,
    status: report.status,
    mode: report.mode,
    simulated: servedSimulated,
    last_run: {
      started_at: report.started_at,
      finished_at: report.finished_at,
      duration_ms: report.duration_ms,
      error: publicErrorOrNull(report.error, folders),
    },
    data,
    sources: {
      provider,
      issues_total: report.issues.length,
      // With its asset: one venue's problem with seven assets is not seven identical lines.
      issues: report.issues
        .slice(0, 20)
        .map(({ venue, symbol, section, message }) => ({ venue, symbol, section, message })),
    },
    unpublished_runs: unpublishedRuns(
      { ...report, error: publicErrorOrNull(report.error, folders) },
      previous,
    ),
    disclaimer: DISCLAIMER,
  });
}

/** The status last written to the site folder, or null (none yet, or unreadable). */
export async function readRunStatus(outDir: string): Promise<RunStatus | null> {
  const text = await readFile(join(outDir, STATUS_FILE), 'utf8').catch(() => 'null');
  try {
    const parsed = RunStatus.safeParse(JSON.parse(text) as unknown);
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Records in the site folder a run that failed before it could record itself (its state folder was not writable,
 * so there is no last-run.json to write either): readers and monitors of /status.json must not go on reading the
 * last good run's `ok`. The data still served keeps its time. Returns whether the status could be written.
 */
export async function recordFailedStart(
  outDir: string,
  failure: { error: string; startedAt: number; finishedAt: number },
): Promise<boolean> {
  const previous = await readRunStatus(outDir);
  const report: RunReport = {
    status: 'failed',
    // The mode of the data still served: a live site must not turn `simulated` because a run could not start.
    mode: previous?.mode ?? null,
    seed: null,
    as_of: new Date(failure.startedAt).toISOString(),
    started_at: new Date(failure.startedAt).toISOString(),
    finished_at: new Date(failure.finishedAt).toISOString(),
    duration_ms: Math.max(0, failure.finishedAt - failure.startedAt),
    files_written: 0,
    issues: [],
    error: failure.error,
  };
  const status = runStatus(report, previous?.sources.provider ?? null, null, previous, [outDir]);
  const text = `${JSON.stringify(status, null, 2)}\n`;
  const file = join(outDir, STATUS_FILE);
  // As the pipeline does: by rename, else in place (a folder this user may not add files to, a file it may write).
  return writeFileAtomic(file, text).then(
    () => true,
    () =>
      writeFile(file, text).then(
        () => true,
        () => false,
      ),
  );
}

/** Where a failed build is recorded: the published and the served status.json, and the run's last-run.json. */
export interface BuildRecordPaths {
  /** The folder the run published to (its status.json is the one the next build copies). */
  published: string;
  /** The built folder hosts serve (dist/). */
  dist: string;
  /** The run's state folder (last-run.json); left out by a one-off `emi build`, which has none. */
  state?: string;
}

const LAST_RUN_FILE = 'last-run.json';
const prettyJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** A file replaced by rename; when the disk is too full for a staged copy, overwritten in place. */
async function replaceRecord(file: string, text: string): Promise<void> {
  try {
    await writeFileAtomic(file, text);
  } catch {
    // Truncating first frees the old file's blocks, so the new record still fits where the old one stood.
    await writeFile(file, text);
  }
}

async function readObject(file: string): Promise<Record<string, unknown> | null> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The build hosts serve now: its generation (the store's `current`), since when, and what data it serves. */
async function servedBuild(dist: string, served: RunStatus | null): Promise<SiteBuildFailure['served']> {
  const current = join(storeBeside(dist), CURRENT);
  const [generation, link] = await Promise.all([
    readlink(current).catch(() => null),
    lstat(current).catch(() => null),
  ]);
  return {
    generation,
    built_at: generation !== null && link ? link.mtime.toISOString() : null,
    data_generated_at: served?.data.generated_at ?? null,
  };
}

/**
 * Records that the site build after a run failed: the run's last-run.json (when the state folder is known), the
 * published status.json and, last, the served dist/status.json say that the site was not rebuilt, why, and which
 * build is still served since when. The run's own status is left as it was (a good run stays `ok`); in the served
 * copy `data` is the served build's, the data readers actually get. The next good build clears it
 * (clearBuildFailure). Each record is written whole by rename, or in place on a full disk; one that cannot be
 * written is said on stderr.
 */
export async function recordBuildFailure(
  paths: BuildRecordPaths,
  error: unknown,
  now: number = Date.now(),
): Promise<SiteBuildFailure> {
  const [published, served] = await Promise.all([readRunStatus(paths.published), readRunStatus(paths.dist)]);
  const failedAt = new Date(now).toISOString();
  const servedNow = await servedBuild(paths.dist, served);
  // The served status carries the failure while that same build is served: still failing since then.
  const earlier = served?.build?.served.generation === servedNow.generation ? served?.build : undefined;
  const failure = SiteBuildFailure.parse({
    status: 'failed',
    error: oneLine(error instanceof Error ? error.message : String(error)),
    failed_at: failedAt,
    failing_since: earlier?.failing_since ?? failedAt,
    served: servedNow,
  });
  const record = (file: string, text: string) =>
    replaceRecord(file, text).catch((writeError: Error) =>
      console.error(`emi: could not record the failed build in ${file}: ${writeError.message}`),
    );
  if (paths.state !== undefined) {
    const lastRun = join(paths.state, LAST_RUN_FILE);
    const report = await readObject(lastRun);
    if (report) await record(lastRun, prettyJson({ ...report, build: failure }));
  }
  // The public copies name no server path (publicError); last-run.json, above, keeps the full line.
  const folders = [paths.published, paths.dist, ...(paths.state === undefined ? [] : [paths.state])];
  const publicFailure = { ...failure, error: publicError(failure.error, folders) };
  if (published) {
    await record(
      join(paths.published, STATUS_FILE),
      prettyJson(RunStatus.parse({ ...published, build: publicFailure })),
    );
  }
  // Last, the served copy: the last run's outcome, with the age of the data the served build holds. With no build
  // served yet there is none (writing one would make dist/ a real folder where its link belongs).
  const base = published ?? served;
  if (base && servedNow.generation !== null) {
    const data = served?.data ?? { generated_at: null, next_update_due: null };
    await record(
      join(paths.dist, STATUS_FILE),
      prettyJson(RunStatus.parse({ ...base, data, build: publicFailure })),
    );
  }
  return failure;
}

/**
 * Before a build: takes a recorded build failure out of the published status.json (which the build copies to
 * /status.json) and out of last-run.json, so that a good build serves a status without it. A build that fails
 * again records it again, failing since the same time (recordBuildFailure reads it from the served status).
 */
export async function clearBuildFailure(paths: Pick<BuildRecordPaths, 'published' | 'state'>): Promise<void> {
  const files = [
    join(paths.published, STATUS_FILE),
    ...(paths.state === undefined ? [] : [join(paths.state, LAST_RUN_FILE)]),
  ];
  for (const file of files) {
    const record = await readObject(file);
    if (!record || !('build' in record)) continue;
    const { build: _cleared, ...rest } = record;
    await replaceRecord(file, prettyJson(rest)).catch((error: Error) =>
      console.error(`emi: could not update ${file}: ${error.message}`),
    );
  }
}
