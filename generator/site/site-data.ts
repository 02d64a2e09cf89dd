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
import { PAID_EXAMPLES } from '../../schemas/paid/examples.ts';
import { ALGORAND_MAINNET, USDC_ASA_ID, USDC_DECIMALS, X402_VERSION } from '../../schemas/paid/terms.ts';
import type { PublishedResource } from '../../schemas/resources.ts';
import type { SitemapEntry } from '../discovery/crawl-files.ts';
import { buildRobotsTxt } from '../discovery/crawl-files.ts';
import { DOCS_PATHS, endpointDocsPath } from '../discovery/docs-paths.ts';
import { freeResourcesInIntegrationOrder, noteFor, paidResources } from '../discovery/endpoint-notes.ts';
import { componentNameOf, schemaEntries, schemaFileOf, standaloneSchema } from '../discovery/json-schema.ts';
import { buildLlmsTxt } from '../discovery/llms-txt.ts';
import { historyRowSchemaEntries } from '../discovery/history-entries.ts';
import { buildOpenApiDocument } from '../discovery/openapi.ts';
import { openApiYaml } from '../discovery/openapi-yaml.ts';
import { examplesOf, latestRunTime, readPublishedFiles } from '../discovery/run-files.ts';
import type { PublishedFile } from '../discovery/run-files.ts';
import { absoluteUrl, normaliseBaseUrl } from '../discovery/urls.ts';
import { readPublishedHistory } from './history.ts';
import { buildHomeView } from './home-view.ts';
import { buildTrackRecordView } from './track-record.ts';
import { listMcpTools } from '../../mcp/tool-list.ts';
import { fieldRows } from './schema-fields.ts';

export interface SiteDataOptions {
  siteDir: string;
  /** Folder holding the published `api/` and `arena/` files; defaults to `siteDir`. */
  publishedDir?: string;
  baseUrl: string;
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
    fields: entry ? fieldRows(standaloneSchema(entry, baseUrl)) : [],
    example: paid ? pretty(PAID_EXAMPLES[resource.id] ?? null) : file ? pretty(file.body) : null,
    exampleNote: paid
      ? 'An example body (simulated numbers, one asset). The real body is served only after payment.'
      : 'The file this site serves right now, from the latest generator run.',
    curl,
    generatedAt: file?.lastmod ?? null,
  };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

export async function loadSiteData(options: SiteDataOptions) {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const files = await readPublishedFiles(options.publishedDir ?? options.siteDir);
  const runs = await readPublishedHistory(options.publishedDir ?? options.siteDir);
  // The buyer is published only once its page exists (its folder may hold sources alone while in progress).
  const hasBuyer = await exists(join(options.siteDir, 'x402-buyer', 'index.html'));
  const runTime = latestRunTime(files);
  const body = (path: string) => files.find((f) => f.requestPath === path)?.body;

  const openapi = buildOpenApiDocument({ baseUrl, examples: examplesOf(files) });
  const endpoints = [...freeResourcesInIntegrationOrder(), ...paidResources()].map((r) =>
    endpointPage(r, baseUrl, files),
  );

  // Sitemap: the free files with their own times; the pages are added from Eleventy's collection.
  const sitemapApiEntries: SitemapEntry[] = [
    ...files
      .filter((f) => !f.requestPath.includes('?'))
      .map((f) => ({ path: f.requestPath, lastmod: f.lastmod })),
    { path: '/openapi.json', lastmod: runTime },
    { path: '/openapi.yaml', lastmod: runTime },
    { path: '/llms.txt', lastmod: runTime },
    ...(hasBuyer ? [{ path: '/x402-buyer/', lastmod: null }] : []),
  ];

  return {
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
    mcpTools: await listMcpTools(baseUrl),
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
      openapiJson: `${pretty(openapi)}\n`,
      openapiYaml: openApiYaml(openapi),
      schemaFiles: [...schemaEntries(), ...historyRowSchemaEntries()].map((entry) => ({
        fileName: entry.fileName,
        json: `${pretty(standaloneSchema(entry, baseUrl))}\n`,
      })),
      llmsTxt: buildLlmsTxt({ baseUrl, hasBuyer }),
      robotsTxt: buildRobotsTxt(baseUrl),
      errorFiles: [
        { fileName: 'invalid-asset.json', json: `${pretty(invalidAssetError())}\n` },
        { fileName: 'not-found.json', json: `${pretty(notFoundError())}\n` },
      ],
    },
    sitemapApiEntries,
  };
}

export type SiteData = Awaited<ReturnType<typeof loadSiteData>>;
