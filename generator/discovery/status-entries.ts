// The run status (/status.json) in the discovery documents: its JSON Schema, its OpenAPI path and its llms.txt line.
// Kept apart from the resource registry: the status is written by every run, failed ones too, and is no product.
import { NO_STORE, STATUS_PATH, cacheFor } from '../../schemas/delivery.ts';
import { RunStatus } from '../../schemas/status.ts';
import type { SchemaEntry } from './json-schema.ts';
import { STATIC_FILE_RESPONSES } from './static-file-responses.ts';

type Json = Record<string, unknown>;

/** The OpenAPI tag, component and operation summary of the run status; llms.txt labels its link the same way. */
export const STATUS_TAG = 'Run status';
export const STATUS_COMPONENT = 'RunStatus';
export const STATUS_SUMMARY = 'Run status';

const PURPOSE =
  'What the last generator run did, written by every run (failed ones too) for monitors and readers: `status` ' +
  '(`ok`, `degraded`, `stale` or `failed`), the data mode, when the data now served was generated and when the next ' +
  'update is due, and the first problems the sources reported.';

export function statusSchemaEntry(): SchemaEntry {
  return { name: STATUS_COMPONENT, fileName: 'run-status.json', title: STATUS_SUMMARY, schema: RunStatus };
}

/** Every host sends the status uncached (schemas/delivery.ts): a monitor must never read an old one. */
const cacheControl = (): string => cacheFor(STATUS_PATH) ?? NO_STORE;

/**
 * The `/status.json` path item; `example` is the status a real run wrote, when the build has one, and
 * `freshnessFields` the schema's freshness fields (see freshness-fields.ts).
 */
export function statusPaths(example: unknown, freshnessFields: readonly string[]): Json {
  const content: Json = { schema: { $ref: `#/components/schemas/${STATUS_COMPONENT}` } };
  if (example !== undefined)
    content.examples = { latest: { summary: 'From a generated run', value: example } };
  return {
    [STATUS_PATH]: {
      get: {
        operationId: 'getRunStatus',
        summary: STATUS_SUMMARY,
        description:
          `${PURPOSE} Poll it to tell a current site from one whose runs stopped or fail. ` +
          `Cache hint: 0 s (Cache-Control: ${cacheControl()}). Free, no account or key. Educational only, not advice.`,
        tags: [STATUS_TAG],
        security: [],
        responses: {
          '200': {
            description: 'The status of the last run.',
            headers: { 'Cache-Control': { description: cacheControl(), schema: { type: 'string' } } },
            content: { 'application/json': content },
          },
          ...STATIC_FILE_RESPONSES,
        },
        'x-product-id': null,
        'x-cache-seconds': 0,
        'x-stability': 'stable',
        'x-freshness-fields': freshnessFields,
      },
    },
  };
}

export const statusTag = (): Json => ({
  name: STATUS_TAG,
  description: 'What the last generator run did, for monitors: never cached.',
});

export const statusLlmsLine = (url: (path: string) => string): string =>
  `- [${STATUS_SUMMARY}](${url(STATUS_PATH)}): what the last generator run did ` +
  '(`ok`, `degraded`, `stale` or `failed`), its data mode and when the data now served was generated; written by ' +
  'every run, never cached';
