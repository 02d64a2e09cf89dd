// Answers a run from a recording folder: the same request gets the same bytes (or the same error). A request that
// was never recorded fails its section with a message naming the URL, never the run.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import type { Transport } from '../transport.ts';
import { INDEX_FILE, RecordedExchange, RecordingIndex, requestKey } from './recording-files.ts';

export class MissingRecordingError extends Error {
  override readonly name = 'MissingRecordingError';
}

export async function readRecordingIndex(dir: string): Promise<RecordingIndex> {
  let text: string;
  try {
    text = await readFile(join(dir, INDEX_FILE), 'utf8');
  } catch {
    throw missingIndex(dir);
  }
  return parseRecordingIndex(text, dir);
}

/** The same, read at once: for the check of a run's flags before anything starts. */
export function readRecordingIndexSync(dir: string): RecordingIndex {
  let text: string;
  try {
    text = readFileSync(join(dir, INDEX_FILE), 'utf8');
  } catch {
    throw missingIndex(dir);
  }
  return parseRecordingIndex(text, dir);
}

/** Why `dir` holds no recording a replay can read (its index missing or invalid), or null. */
export function recordingProblem(dir: string): string | null {
  try {
    readRecordingIndexSync(dir);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const missingIndex = (dir: string): Error =>
  new Error(`no recording in ${dir}: ${INDEX_FILE} is missing (record one with --source live --record)`);

function parseRecordingIndex(text: string, dir: string): RecordingIndex {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${join(dir, INDEX_FILE)} is not valid JSON`);
  }
  const parsed = RecordingIndex.safeParse(json);
  if (!parsed.success)
    throw new Error(`${join(dir, INDEX_FILE)} is not a recording index: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The as-of time (ms) the recording in `dir` was made for. */
export const recordedAsOf = async (dir: string): Promise<number> =>
  Date.parse((await readRecordingIndex(dir)).asOf);

export async function createReplayTransport(dir: string): Promise<Transport> {
  const index = await readRecordingIndex(dir);
  const files = new Map(index.entries.map((entry) => [requestKey(entry), entry.file]));
  return {
    mode: 'replay',
    // What the venues answered when the recording was made.
    answersAt: Date.parse(index.asOf),
    async fetch(request, signal) {
      signal?.throwIfAborted();
      const file = files.get(requestKey(request));
      if (file === undefined) {
        throw new MissingRecordingError(
          `no recorded response for ${request.method ?? 'GET'} ${request.url} (recording made for ${index.asOf})`,
        );
      }
      const exchange = RecordedExchange.parse(JSON.parse(await readFile(join(dir, file), 'utf8')));
      if (exchange.response === null) throw new Error(exchange.error ?? 'recorded failure');
      return exchange.response;
    },
  };
}
