// The free files of the latest generator run and its status (/status.json), read from the public site folder: they
// are the OpenAPI examples, the docs' examples and the sitemap's last-modified times.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import { STATUS_PATH } from '../../schemas/delivery.ts';
import { FREE_RESOURCES, reasoningFileFor } from '../../schemas/resources.ts';
import type { FreeResource } from '../../schemas/resources.ts';
import { reasoningExampleKey } from './openapi.ts';

export interface PublishedFile {
  /** Request path (with the query for a reasoning asset), e.g. `/api/reasoning.php?asset=ETH`. */
  requestPath: string;
  /** null for the run status, which every run writes (failed ones too) and is no resource. */
  resource: FreeResource | null;
  /** File under the site root. */
  file: string;
  body: unknown;
  /** When the run produced it (ISO), or null when the body names no time. */
  lastmod: string | null;
}

/** The run status when it exists and parses: its `lastmod` is when the run that wrote it finished. */
async function readStatusFile(siteDir: string): Promise<PublishedFile | null> {
  const file = STATUS_PATH.slice(1);
  const body = await readJson(join(siteDir, file));
  if (body === undefined) return null;
  const finishedAt = (body as { last_run?: { finished_at?: unknown } } | null)?.last_run?.finished_at;
  const lastmod = typeof finishedAt === 'string' && !Number.isNaN(Date.parse(finishedAt)) ? finishedAt : null;
  return { requestPath: STATUS_PATH, resource: null, file, body, lastmod };
}

/**
 * The files of every free resource (and every reasoning asset) that exist and parse as JSON, and the run status
 * after them.
 */
export async function readPublishedFiles(siteDir: string): Promise<PublishedFile[]> {
  const wanted = FREE_RESOURCES.flatMap((resource) => [
    { requestPath: resource.path, resource, file: resource.file },
    ...(resource.id === 'reasoning'
      ? TRACKED_ASSETS.map((asset) => ({
          requestPath: reasoningExampleKey(asset),
          resource,
          file: reasoningFileFor(asset),
        }))
      : []),
  ]);
  const found = await Promise.all(
    wanted.map(async (entry): Promise<PublishedFile | null> => {
      const body = await readJson(join(siteDir, entry.file));
      return body === undefined ? null : { ...entry, body, lastmod: generatedAtOf(body) };
    }),
  );
  const status = await readStatusFile(siteDir);
  return [...found, status].filter((entry): entry is PublishedFile => entry !== null);
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined; // not generated yet (or mid-replacement): the site builds without it
  }
}

/** The generation time a body states, whichever of the published spellings it uses. */
export function generatedAtOf(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as Record<string, unknown>;
  const nested = (key: string) => {
    const value = record[key];
    return value !== null && typeof value === 'object'
      ? (value as Record<string, unknown>).generated_at
      : undefined;
  };
  const candidates = [
    nested('source'),
    nested('source_details'),
    record.generated_at,
    record.updated,
    record.updated_utc,
  ];
  const found = candidates.find(
    (value): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value)),
  );
  return found ?? null;
}

/** Example bodies keyed by request path, as `buildOpenApiDocument` takes them. */
export const examplesOf = (files: readonly PublishedFile[]): Record<string, unknown> =>
  Object.fromEntries(files.map((file) => [file.requestPath, file.body]));

/**
 * The newest generation time among the resources' files: the time of the run the site shows (the status is left
 * out: a run that published nothing rewrites it, and its data is older).
 */
export const latestRunTime = (files: readonly PublishedFile[]): string | null =>
  files.reduce<string | null>(
    (latest, file) =>
      file.resource && file.lastmod && (!latest || file.lastmod > latest) ? file.lastmod : latest,
    null,
  );
