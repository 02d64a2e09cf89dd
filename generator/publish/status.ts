// /status.json in the public site folder, written by every run, successful or not (the pipeline writes it last,
// outside the generations, so a failed run can say so). When a run publishes nothing, the age of the data still
// served comes from the previous status.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DISCLAIMER, PROJECT } from '../../schemas/common.ts';
import { RunStatus } from '../../schemas/status.ts';
import type { RunReport } from '../pipeline.ts';
import { writeFileAtomic } from './atomic-write.ts';

export const STATUS_FILE = 'status.json';

export function runStatus(
  report: RunReport,
  provider: string | null,
  published: { generatedAt: number; nextUpdateDue: number } | null,
  previous: RunStatus | null,
): RunStatus {
  const publishedNow = report.status === 'ok' || report.status === 'degraded';
  return RunStatus.parse({
    project: PROJECT,
    status: report.status,
    mode: report.mode,
    simulated: report.mode !== 'live',
    last_run: {
      started_at: report.started_at,
      finished_at: report.finished_at,
      duration_ms: report.duration_ms,
      error: report.error,
    },
    data:
      publishedNow && published
        ? {
            generated_at: new Date(published.generatedAt).toISOString(),
            next_update_due: new Date(published.nextUpdateDue).toISOString(),
          }
        : (previous?.data ?? { generated_at: null, next_update_due: null }),
    sources: {
      provider,
      issues_total: report.issues.length,
      issues: report.issues.slice(0, 20).map(({ venue, section, message }) => ({ venue, section, message })),
    },
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
  const text = `${JSON.stringify(runStatus(report, previous?.sources.provider ?? null, null, previous), null, 2)}\n`;
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
