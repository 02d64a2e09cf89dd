// Wraps the live transport and saves every raw answer of a run into a folder, so that operators can replay it.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transport, TransportRequest } from '../transport.ts';
import { INDEX_FILE, RECORDING_VERSION, recordFileName, requestKey } from './recording-files.ts';
import type { RecordedExchange, RecordingIndex } from './recording-files.ts';

export interface RecordingTransport extends Transport {
  /** Resolves when every file and the index of the answers so far are on disk. */
  flushed(): Promise<void>;
}

async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(temp, path);
}

export function createRecordingTransport(inner: Transport, dir: string, asOf: number): RecordingTransport {
  const entries = new Map<string, RecordingIndex['entries'][number]>();
  // Writes are chained: the index is rewritten after each file, never two writes at once.
  let queue: Promise<void> = mkdir(dir, { recursive: true }).then(() => undefined);

  const save = (request: TransportRequest, exchange: RecordedExchange): void => {
    const file = recordFileName(request);
    entries.set(requestKey(request), {
      ...exchange.request,
      file,
      status: exchange.response?.status ?? null,
    });
    const index: RecordingIndex = {
      version: RECORDING_VERSION,
      asOf: new Date(asOf).toISOString(),
      entries: [...entries.values()].sort(
        (a, b) => a.url.localeCompare(b.url) || a.file.localeCompare(b.file),
      ),
    };
    queue = queue
      .then(() => writeJsonAtomic(join(dir, file), exchange))
      .then(() => writeJsonAtomic(join(dir, INDEX_FILE), index));
  };

  return {
    mode: inner.mode,
    answersAt: inner.answersAt,
    async fetch(request, signal) {
      const recorded = { method: request.method ?? 'GET', url: request.url, body: request.body };
      try {
        const response = await inner.fetch(request, signal);
        save(request, { request: recorded, response, error: null });
        return response;
      } catch (error) {
        if (!signal?.aborted) {
          save(request, { request: recorded, response: null, error: (error as Error).message });
        }
        throw error;
      }
    },
    flushed: () => queue,
  };
}
