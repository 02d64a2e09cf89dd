// One tool per free resource (the reasoning tool takes an asset), answering the published file with its facts.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { ReasoningResponse } from '../schemas/reasoning.ts';
import { FREE_RESOURCES, reasoningFileFor } from '../schemas/resources.ts';
import type { FreeResource, PublishedResource } from '../schemas/resources.ts';
import { noteFor } from '../generator/discovery/endpoint-notes.ts';
import { bodyEnvelope, factsOfBody } from './facts.ts';
import type { ReadPublished } from './published.ts';
import { clipped, structuredResult, toolError } from './results.ts';
import { strictInput } from './strict-input.ts';

/**
 * What a resource is for (the docs' text, shared with the OpenAPI document and llms.txt), as a tool says it: a
 * sentence about an HTTP query parameter (`?asset=`) is left out, since a tool takes arguments instead and names
 * them itself.
 */
export const toolPurpose = (resource: PublishedResource): string =>
  noteFor(resource)
    .purpose.split(/(?<=\.)\s+/)
    .filter((sentence) => !/\?[a-z_]+=/.test(sentence))
    .join(' ');

/** `marketRegime` → `market_regime`: tool names in the style MCP clients show. */
export const toolNameOf = (id: string): string => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The first problems zod found, as `field: message`, short enough for a tool error. */
export function schemaProblems(error: z.ZodError, max = 3): string {
  const listed = error.issues
    .slice(0, max)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(body)'}: ${clipped(issue.message, 80)}`);
  const more = error.issues.length - listed.length;
  return `${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** A published file that is there but cannot be used: which file, why, and that it is not merely unpublished. */
const unreadableFile = (path: string, file: string, reason: string) =>
  toolError(
    `${path} is published but could not be read: the file ${file} ${reason}. It is not served until a ` +
      'sound run replaces it (emi generate, then emi build).',
  );

async function answerFile(read: ReadPublished, file: string, path: string, schema: z.ZodType, now: number) {
  const published = await read(file);
  if (published.state === 'absent') {
    return toolError(`${path} has not been published yet: run the generator (emi generate) first.`);
  }
  if (published.state === 'unreadable') return unreadableFile(path, file, clipped(published.reason, 200));
  const parsed = schema.safeParse(published.value);
  if (!parsed.success) {
    return unreadableFile(path, file, `does not match its schema (${schemaProblems(parsed.error)})`);
  }
  return structuredResult({ ...factsOfBody(parsed.data, now), body: parsed.data });
}

function registerFileTool(server: McpServer, resource: FreeResource, read: ReadPublished, now: () => number) {
  const name = toolNameOf(resource.id);
  server.registerTool(
    name,
    {
      title: resource.title,
      description: `${toolPurpose(resource)} Free; the body of ${resource.path}. Educational only, not advice.`,
      inputSchema: strictInput(name, {}),
      outputSchema: bodyEnvelope(resource.schema),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => answerFile(read, resource.file, resource.path, resource.schema, now()),
  );
}

function registerReasoningTool(
  server: McpServer,
  resource: FreeResource,
  read: ReadPublished,
  now: () => number,
) {
  server.registerTool(
    'reasoning',
    {
      title: resource.title,
      description:
        `${toolPurpose(resource)} Choose the asset with the \`asset\` argument: one of ${TRACKED_ASSETS.join(', ')}, ` +
        `case-insensitive; default BTC. Free; the body of ${resource.path} for that asset. Educational only, not advice.`,
      // Optional, as on HTTP: the description promises BTC by default.
      inputSchema: strictInput('reasoning', {
        asset: z
          .string()
          .optional()
          .describe(`one of ${TRACKED_ASSETS.join(', ')} (case-insensitive: eth is ETH); default BTC`),
      }),
      outputSchema: bodyEnvelope(ReasoningResponse),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ asset = 'BTC' }) => {
      const symbol = asset.trim().toUpperCase();
      if (!(TRACKED_ASSETS as readonly string[]).includes(symbol)) {
        return toolError(
          `unknown asset ${JSON.stringify(clipped(asset))}: use one of ${TRACKED_ASSETS.join(', ')}.`,
        );
      }
      return answerFile(
        read,
        reasoningFileFor(symbol),
        `${resource.path}?asset=${symbol}`,
        ReasoningResponse,
        now(),
      );
    },
  );
}

export function registerFreeTools(server: McpServer, read: ReadPublished, now: () => number): string[] {
  for (const resource of FREE_RESOURCES) {
    if (resource.id === 'reasoning') registerReasoningTool(server, resource, read, now);
    else registerFileTool(server, resource, read, now);
  }
  return FREE_RESOURCES.map((r) => (r.id === 'reasoning' ? 'reasoning' : toolNameOf(r.id)));
}
