// Which instant a live or replayed run may describe. Venues answer with the present whatever time is asked (only
// some URLs carry a time window), so a live run describes the current minute; a recording holds what the venues
// said at its own as-of, so a replay describes that instant. Only the simulator can describe any time.
import { readRecordingIndexSync } from './recording/replay-transport.ts';

/** How far an --as-of may be from the clock (live) or the recording's time (replay). */
const AS_OF_SLACK_MS = 60_000;

const iso = (ms: number): string => new Date(ms).toISOString();

export function liveAsOfProblem(asOf: number, now: number): string | null {
  if (Math.abs(asOf - now) <= AS_OF_SLACK_MS) return null;
  return (
    `--as-of ${iso(asOf)} is not the current minute (the clock says ${iso(now)}): a live run describes the ` +
    'present, because the venues answer with their current prices whatever time is asked; leave --as-of out, ' +
    'or use --source replay (a recording) or --source sim (any time)'
  );
}

export function replayAsOfProblem(asOf: number, recordedAsOf: number, dir: string): string | null {
  if (Math.abs(asOf - recordedAsOf) <= AS_OF_SLACK_MS) return null;
  return (
    `--as-of ${iso(asOf)} is not the time of the recording in ${dir} (${iso(recordedAsOf)}): a replay ` +
    'describes what the venues answered then, not another time; leave --as-of out'
  );
}

/**
 * The replay check with the recording read at once; null when the recording cannot be read (the run itself then
 * says what is wrong with the folder).
 */
export function replayFolderAsOfProblem(asOf: number, dir: string): string | null {
  let recorded: number;
  try {
    recorded = Date.parse(readRecordingIndexSync(dir).asOf);
  } catch {
    return null;
  }
  return replayAsOfProblem(asOf, recorded, dir);
}

/** What is wrong with describing `asOf` in a run of `source`, or null (the simulator describes any time). */
export function asOfProblem(
  source: string,
  asOf: number,
  { replayDir, now }: { replayDir?: string | undefined; now: number },
): string | null {
  if (source === 'live') return liveAsOfProblem(asOf, now);
  if (source === 'replay' && replayDir) return replayFolderAsOfProblem(asOf, replayDir);
  return null;
}
