// Everything the templates print, prepared once per build: the discovery documents, one entry per endpoint
// page, the home view and the payment terms. Templates hold layout only.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CACHE_SECONDS,
  CATALOG_VERSION,
  DEFAULT_REASONING_ASSET,
  DISCLAIMER,
  EDUCATIONAL_NOTICE,
  PROJECT,
  TRACKED_ASSETS,
} from '../../schemas/common.ts';
import { invalidAssetError, notFoundError } from '../../schemas/error.ts';
import { HISTORY_INDEX_FILE } from '../../schemas/history.ts';
import { PAID_EXAMPLES } from '../../schemas/paid/examples.ts';
import { ALGORAND_MAINNET, USDC_ASA_ID, USDC_DECIMALS, X402_VERSION } from '../../schemas/paid/terms.ts';
import type { PublishedResource } from '../../schemas/resources.ts';
import type { SitemapEntry } from '../discovery/crawl-files.ts';
import { buildRobotsTxt } from '../discovery/crawl-files.ts';
import { DOCS_PATHS, endpointDocsPath } from '../discovery/docs-paths.ts';
import { freeResourcesInIntegrationOrder, noteFor, paidResources } from '../discovery/endpoint-notes.ts';
import {
  componentNameOf,
  emittedSchemas,
  keepEmitted,
  schemaEntries,
  schemaFileOf,
  standaloneSchema,
} from '../discovery/json-schema.ts';
import { buildLlmsTxt } from '../discovery/llms-txt.ts';
import { historyRowSchemaEntries, historySitemapEntries } from '../discovery/history-entries.ts';
import { buildOpenApiDocument } from '../discovery/openapi.ts';
import { keepPrinted, openApiYaml, printCount, printedEntries } from '../discovery/openapi-yaml.ts';
import { examplesOf, latestRunTime, readPublishedFiles } from '../discovery/run-files.ts';
import type { PublishedFile } from '../discovery/run-files.ts';
import { absoluteUrl, normaliseBaseUrl } from '../discovery/urls.ts';
import { readPublishedHistory } from './history.ts';
import { buildHomeView } from './home-view.ts';
import { buildTrackRecordView } from './track-record.ts';
import type { ToolSummary } from '../../mcp/tool-list.ts';
import { codeCache } from './derived-cache.ts';
import type { DerivedCache } from './derived-cache.ts';
import { fieldRows } from './schema-fields.ts';

export interface SiteDataOptions {
  siteDir: string;
  /** Folder holding the published `api/` and `arena/` files; defaults to `siteDir`. */
  publishedDir?: string;
  baseUrl: string;
  /** Where values derived from the code alone are kept between processes (default: see derived-cache.ts). */
  cache?: DerivedCache;
}

export interface EndpointPage {
  id: string;
  title: string;
  access: 'free' | 'paid';
  path: string;
  url: string;
  docsPath: string;
  purpose: string;
  useWhen: string;
  productId: string | null;
  cacheSeconds: number;
  stability: string;
  price: string | null;
  amountAtomic: string | null;
  schemaUrl: string;
  componentName: string;
  fields: ReturnType<typeof fieldRows>;
  example: string | null;
  exampleNote: string;
  curl: string[];
  generatedAt: string | null;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * The data mode a published body states (`source_mode` on the market bodies, `mode` on the arena ones), in words:
 * "live" is a data mode here, so an example is never called live unless its data is.
 */
const DATA_MODE_WORDS: Readonly<Record<string, string>> = {
  simulated: 'simulated (a seeded market simulator, not real market observations)',
  live: 'live (public venues)',
  replay: 'replayed (recorded venue answers played back, not current prices)',
};
function dataModeWords(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return null;
  const record = body as Record<string, unknown>;
  const mode = record.source_mode ?? record.mode;
  return typeof mode === 'string' ? (DATA_MODE_WORDS[mode] ?? null) : null;
}

/** What a free endpoint's example is: the file served now, from the latest run, with its data mode. */
function freeExampleNote(body: unknown): string {
  const mode = dataModeWords(body);
  return `The file this site serves right now, from the latest generator run${mode ? `. Data mode: ${mode}` : ''}.`;
}

function endpointPage(
  resource: PublishedResource,
  baseUrl: string,
  files: readonly PublishedFile[],
): EndpointPage {
  const url = absoluteUrl(baseUrl, resource.path);
  const file = files.find((f) => f.requestPath === resource.path);
  const paid = resource.access === 'paid';
  const entry = schemaEntries().find((e) => e.fileName === schemaFileOf(resource));
  const curl = paid
    ? [`curl -i ${url}`]
    : resource.id === 'reasoning'
      ? [`curl -s ${url}`, `curl -s '${url}?asset=ETH'`]
      : [`curl -s ${url}`];
  return {
    id: resource.id,
    title: resource.title,
    access: resource.access,
    path: resource.path,
    url,
    docsPath: endpointDocsPath(resource),
    purpose: noteFor(resource).purpose,
    useWhen: noteFor(resource).useWhen,
    productId: resource.productId,
    cacheSeconds: resource.cacheSeconds,
    stability: resource.stability,
    price: paid ? resource.priceUsd : null,
    amountAtomic: paid ? resource.amountAtomic : null,
    schemaUrl: absoluteUrl(baseUrl, `/schemas/${schemaFileOf(resource)}`),
    componentName: componentNameOf(resource),
    fields: entry ? (codeParts(baseUrl).fields.get(entry.fileName) ?? []) : [],
    example: paid ? pretty(PAID_EXAMPLES[resource.id] ?? null) : file ? pretty(file.body) : null,
    exampleNote: paid
      ? 'An example body (simulated numbers, one asset). The real body is served only after payment.'
      : freeExampleNote(file?.body),
    curl,
    generatedAt: file?.lastmod ?? null,
  };
}

/**
 * The parts of the site that depend on the code and the base URL alone (the schema files, each endpoint's field
 * table by schema file): derived once per process and base URL, as a long-running process builds the site every
 * cycle.
 */
interface CodeParts {
  schemaFiles: Array<{ fileName: string; json: string }>;
  fields: ReadonlyMap<string, ReturnType<typeof fieldRows>>;
}
const codePartsByBaseUrl = new Map<string, CodeParts>();
function codeParts(baseUrl: string): CodeParts {
  let parts = codePartsByBaseUrl.get(baseUrl);
  if (!parts) {
    parts = {
      schemaFiles: allSchemaEntries().map((entry) => ({
        fileName: entry.fileName,
        json: `${pretty(standaloneSchema(entry, baseUrl))}\n`,
      })),
      fields: new Map(
        schemaEntries().map((entry) => [entry.fileName, fieldRows(standaloneSchema(entry, baseUrl))]),
      ),
    };
    codePartsByBaseUrl.set(baseUrl, parts);
  }
  return parts;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Every JSON Schema the site publishes, also those of the history rows. */
const allSchemaEntries = () => [...schemaEntries(), ...historyRowSchemaEntries()];

/** What a store held when first read in this process, and what has been written to it since. */
interface Kept {
  /** Whether the store holds every JSON Schema. */
  schemas: boolean;
  /** The count of YAML entries printed (`printCount`) when the store last received them. */
  printed: number;
}

const keptIn = new WeakMap<DerivedCache, Kept>();

/** Takes what `cache` keeps into this process, once per store. */
async function restoreDerived(cache: DerivedCache): Promise<Kept> {
  let kept = keptIn.get(cache);
  if (!kept) {
    const [schemas, yaml] = await Promise.all([
      cache.read<Record<string, Record<string, unknown>>>('json-schemas'),
      cache.read<Parameters<typeof keepPrinted>[0]>('openapi-yaml'),
    ]);
    if (schemas) keepEmitted(allSchemaEntries(), schemas);
    if (yaml) keepPrinted(yaml);
    kept = {
      schemas: schemas !== null && allSchemaEntries().every((entry) => schemas[entry.name] !== undefined),
      printed: yaml ? printCount() : -1, // a store without texts receives them after this build
    };
    keptIn.set(cache, kept);
  }
  return kept;
}

/** Gives `cache` what this build derived that it does not hold yet. */
async function saveDerived(cache: DerivedCache, kept: Kept): Promise<void> {
  const writes: Promise<void>[] = [];
  if (!kept.schemas) {
    writes.push(cache.write('json-schemas', emittedSchemas(allSchemaEntries())));
    kept.schemas = true;
  }
  if (kept.printed !== printCount()) {
    writes.push(cache.write('openapi-yaml', printedEntries()));
    kept.printed = printCount();
  }
  await Promise.all(writes);
}

/** The MCP tool list for the agents page: the MCP SDK is loaded only when no list is kept for this code. */
async function mcpTools(cache: DerivedCache): Promise<ToolSummary[]> {
  const saved = await cache.read<ToolSummary[]>('mcp-tools');
  if (Array.isArray(saved)) return saved;
  const { listMcpTools } = await import('../../mcp/tool-list.ts');
  const tools = await listMcpTools();
  await cache.write('mcp-tools', tools);
  return tools;
}

export async function loadSiteData(options: SiteDataOptions) {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const cache = options.cache ?? codeCache;
  const kept = await restoreDerived(cache);
  const files = await readPublishedFiles(options.publishedDir ?? options.siteDir);
  const runs = await readPublishedHistory(options.publishedDir ?? options.siteDir);
  // The buyer is published only once its page exists (its folder may hold sources alone while in progress).
  const hasBuyer = await exists(join(options.siteDir, 'x402-buyer', 'index.html'));
  const hasHistory = await exists(join(options.publishedDir ?? options.siteDir, HISTORY_INDEX_FILE));
  const runTime = latestRunTime(files);
  const body = (path: string) => files.find((f) => f.requestPath === path)?.body;

  const openapi = buildOpenApiDocument({ baseUrl, examples: examplesOf(files) });
  // Compact: machines and agents read it (about 40 % fewer bytes); /openapi.yaml is the form people read.
  const openapiJson = `${JSON.stringify(openapi)}\n`;
  const endpoints = [...freeResourcesInIntegrationOrder(), ...paidResources()].map((r) =>
    endpointPage(r, baseUrl, files),
  );

  // Sitemap: the free files with their own times; the pages are added from Eleventy's collection, each with the
  // run's time, and so is the buyer page (copied through, so not in the collection).
  const sitemapApiEntries: SitemapEntry[] = [
    ...files
      .filter((f) => !f.requestPath.includes('?'))
      .map((f) => ({ path: f.requestPath, lastmod: f.lastmod })),
    { path: '/openapi.json', lastmod: runTime },
    { path: '/openapi.yaml', lastmod: runTime },
    { path: '/llms.txt', lastmod: runTime },
    ...(hasBuyer ? [{ path: '/x402-buyer/', lastmod: runTime }] : []),
    // The history files llms.txt links, once a run has written them.
    ...(hasHistory ? historySitemapEntries(runTime) : []),
  ];

  const data = {
    site: {
      title: PROJECT,
      baseUrl,
      version: CATALOG_VERSION,
      trackedAssets: [...TRACKED_ASSETS],
      defaultAsset: DEFAULT_REASONING_ASSET,
      cacheSeconds: CACHE_SECONDS,
      disclaimer: DISCLAIMER,
      educationalNotice: EDUCATIONAL_NOTICE,
      runTime,
      hasBuyer,
      docs: DOCS_PATHS,
    },
    home: buildHomeView(body('/api/market-regime.php'), body('/api/main-brain.php'), runs),
    mcpTools: await mcpTools(cache),
    trackRecord: await buildTrackRecordView(options.publishedDir ?? options.siteDir),
    endpoints,
    freeEndpoints: endpoints.filter((e) => e.access === 'free'),
    paidEndpoints: endpoints.filter((e) => e.access === 'paid'),
    payment: {
      protocol: `x402 v${X402_VERSION}`,
      network: ALGORAND_MAINNET,
      asset: USDC_ASA_ID,
      decimals: USDC_DECIMALS,
    },
    discovery: {
      openapiJson,
      openapiYaml: openApiYaml(openapi),
      schemaFiles: codeParts(baseUrl).schemaFiles,
      llmsTxt: buildLlmsTxt({ baseUrl, hasBuyer, openapiBytes: Buffer.byteLength(openapiJson) }),
      robotsTxt: buildRobotsTxt(baseUrl),
      errorFiles: [
        { fileName: 'invalid-asset.json', json: `${pretty(invalidAssetError())}\n` },
        { fileName: 'not-found.json', json: `${pretty(notFoundError())}\n` },
      ],
    },
    sitemapApiEntries,
  };
  await saveDerived(cache, kept);
  return data;
}

export type SiteData = Awaited<ReturnType<typeof loadSiteData>>;
