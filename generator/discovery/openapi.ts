// The OpenAPI 3.1 description of the whole catalogue, built from the registry and its zod schemas (pure: the
// caller passes the base URL and, optionally, example bodies from a real run).
import { historyPaths } from './history-entries.ts';
import {
  CACHE_SECONDS,
  CATALOG_VERSION,
  DEFAULT_REASONING_ASSET,
  PROJECT,
  TRACKED_ASSETS,
} from '../../schemas/common.ts';
import { invalidAssetError, notFoundError } from '../../schemas/error.ts';
import { PAID_EXAMPLES } from '../../schemas/paid/examples.ts';
import { ALGORAND_MAINNET, USDC_ASA_ID, USDC_DECIMALS, X402_VERSION } from '../../schemas/paid/terms.ts';
import type { FreeResource, PaidResource } from '../../schemas/resources.ts';
import { freeResourcesInIntegrationOrder, noteFor, paidResources } from './endpoint-notes.ts';
import { componentNameOf, componentSchemas, schemaEntries } from './json-schema.ts';
import { absoluteUrl, normaliseBaseUrl } from './urls.ts';

export interface OpenApiOptions {
  baseUrl: string;
  /**
   * Example bodies from a real run, keyed by request path; the reasoning assets by their query,
   * e.g. `/api/reasoning.php?asset=ETH`. Paths without an example simply carry none.
   */
  examples?: Readonly<Record<string, unknown>>;
}

type Json = Record<string, unknown>;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

export const reasoningExampleKey = (asset: string) => `/api/reasoning.php?asset=${asset}`;

const operationIdOf = (id: string) => `get${id.charAt(0).toUpperCase()}${id.slice(1)}`;

function cacheNote(resource: FreeResource | PaidResource): string {
  const cache =
    resource.cacheSeconds > 0
      ? `Cache hint: ${resource.cacheSeconds} s.`
      : 'Cache hint: 0 s (never cache: every response is computed for its payment).';
  return `${cache} Schema stability: ${resource.stability}.`;
}

function jsonContent(schemaName: string, examples: Json | undefined): Json {
  const content: Json = { schema: ref('schemas', schemaName) };
  if (examples && Object.keys(examples).length > 0) content.examples = examples;
  return { 'application/json': content };
}

function freeOperation(resource: FreeResource, examples: Readonly<Record<string, unknown>>): Json {
  const isReasoning = resource.id === 'reasoning';
  const runExamples: Json = {};
  if (isReasoning) {
    for (const asset of TRACKED_ASSETS) {
      const value =
        examples[reasoningExampleKey(asset)] ??
        (asset === DEFAULT_REASONING_ASSET ? examples[resource.path] : undefined);
      if (value !== undefined)
        runExamples[asset] = { summary: `asset=${asset}, from a generated run`, value };
    }
  } else if (examples[resource.path] !== undefined) {
    runExamples.latest = { summary: 'From a generated run', value: examples[resource.path] };
  }
  const responses: Json = {
    '200': {
      description: `${resource.title}. Every body says when it was generated and when the next update is due.`,
      headers: { 'Cache-Control': ref('headers', 'CacheControlFree') },
      content: jsonContent(componentNameOf(resource), runExamples),
    },
  };
  if (isReasoning) responses['400'] = ref('responses', 'InvalidAsset');
  responses['404'] = ref('responses', 'NotFound');
  return {
    operationId: operationIdOf(resource.id),
    summary: resource.title,
    description: `${noteFor(resource).purpose}\n\n${cacheNote(resource)} Educational only, not advice.`,
    tags: [noteFor(resource).group === 'arena' ? 'Arena' : 'Free snapshots'],
    security: [],
    ...(isReasoning ? { parameters: [ref('parameters', 'Asset')] } : {}),
    responses,
    'x-product-id': resource.productId,
    'x-cache-seconds': resource.cacheSeconds,
    'x-stability': resource.stability,
  };
}

function paidOperation(resource: PaidResource): Json {
  const example = PAID_EXAMPLES[resource.id];
  return {
    operationId: operationIdOf(resource.id),
    summary: `${resource.title} (x402, ${resource.priceUsd} USDC)`,
    description:
      `${noteFor(resource).purpose}\n\nWithout a valid payment the answer is 402 with the payment requirements ` +
      `(body and PAYMENT-REQUIRED header). Pay exactly ${resource.priceUsd} USDC (${resource.amountAtomic} atomic ` +
      `units of ASA ${USDC_ASA_ID}), send the signed payment in PAYMENT-SIGNATURE, and the answer is 200 with ` +
      `PAYMENT-RESPONSE (sent with Cache-Control: no-store). ${cacheNote(resource)} Educational only, not advice.`,
    tags: ['Paid (x402)'],
    security: [{ x402: [] }],
    responses: {
      '200': {
        description: 'The paid resource, after the payment was verified and settled.',
        headers: {
          'PAYMENT-RESPONSE': ref('headers', 'PaymentResponse'),
          // The worker answers every paid body with no-store: a shared cache must never hand it to a non-payer.
          'Cache-Control': { description: 'no-store', schema: { type: 'string' } },
        },
        content: jsonContent(
          componentNameOf(resource),
          example === undefined
            ? undefined
            : { sample: { summary: 'Example body (simulated, one asset)', value: example } },
        ),
      },
      '402': ref('responses', 'PaymentRequired'),
    },
    'x-product-id': resource.productId,
    'x-cache-seconds': resource.cacheSeconds,
    'x-stability': resource.stability,
    'x-payment': {
      protocol: 'x402',
      x402Version: X402_VERSION,
      scheme: 'exact',
      network: ALGORAND_MAINNET,
      asset: USDC_ASA_ID,
      assetName: 'USDC',
      decimals: USDC_DECIMALS,
      amount: resource.amountAtomic,
      price: resource.priceUsd,
      currency: 'USD',
    },
  };
}

function sharedComponents(): Json {
  return {
    parameters: {
      Asset: {
        name: 'asset',
        in: 'query',
        required: false,
        description: `Tracked asset symbol, upper case. Without the parameter the answer is for ${DEFAULT_REASONING_ASSET}.`,
        schema: { type: 'string', enum: [...TRACKED_ASSETS], default: DEFAULT_REASONING_ASSET },
      },
    },
    headers: {
      CacheControlFree: {
        description: `Free snapshots may be cached for ${CACHE_SECONDS} seconds.`,
        schema: { type: 'string', examples: [`public, max-age=${CACHE_SECONDS}`] },
      },
      PaymentRequired: {
        description: 'Base64 (standard, padded) of the UTF-8 JSON x402 v2 PaymentRequired object.',
        schema: { type: 'string', contentEncoding: 'base64' },
      },
      PaymentResponse: {
        description: 'Base64 of the JSON x402 v2 SettleResponse: success, payer, transaction id and network.',
        schema: { type: 'string', contentEncoding: 'base64' },
      },
    },
    responses: {
      InvalidAsset: {
        description: 'The asset query names no tracked asset.',
        content: jsonContent('ErrorResponse', { invalidAsset: { value: invalidAssetError() } }),
      },
      NotFound: {
        description: 'Nothing is published at this path (for example before the first generator run).',
        content: jsonContent('ErrorResponse', { notFound: { value: notFoundError() } }),
      },
      PaymentRequired: {
        description:
          'Payment required: no payment, or the payment was invalid or did not settle. The body and the ' +
          'PAYMENT-REQUIRED header carry the same requirements; pay exactly one `accepts` entry.',
        headers: {
          'PAYMENT-REQUIRED': ref('headers', 'PaymentRequired'),
          'PAYMENT-RESPONSE': {
            description: 'Present when a submitted payment failed to settle.',
            schema: { type: 'string', contentEncoding: 'base64' },
          },
          'Cache-Control': { description: 'no-store', schema: { type: 'string' } },
        },
        content: jsonContent('PaymentRequiredBody', undefined),
      },
    },
    securitySchemes: {
      x402: {
        type: 'apiKey',
        in: 'header',
        name: 'PAYMENT-SIGNATURE',
        description:
          'x402 v2: base64 JSON PaymentPayload signed in the client’s wallet, one exact-amount USDC payment per ' +
          'request. No account or key: the service never holds private keys.',
      },
    },
  };
}

export function buildOpenApiDocument(options: OpenApiOptions): Json {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const examples = options.examples ?? {};
  const paths: Json = {};
  for (const resource of freeResourcesInIntegrationOrder())
    paths[resource.path] = { get: freeOperation(resource, examples) };
  for (const resource of paidResources()) paths[resource.path] = { get: paidOperation(resource) };
  Object.assign(paths, historyPaths());

  return {
    openapi: '3.1.0',
    info: {
      title: `${PROJECT} API`,
      version: CATALOG_VERSION,
      summary: 'Educational market intelligence on seven crypto assets as static, versioned JSON.',
      description: [
        `Free snapshots about ${TRACKED_ASSETS.join(', ')}, regenerated on a schedule, and four premium resources ` +
          'sold per request over x402 v2 (USDC on Algorand).',
        'Freshness: every free snapshot names when it was generated and when the next update is due ' +
          '(`generated_at` and `next_update_due` in its source object). A snapshot past its next update is stale.',
        'Recommended integration order: market regime, main brain, liquidity, derivatives, reasoning, statistics, ' +
          'then paid.',
        'Educational only: not financial, investment, trading, tax, legal, betting, gambling or fund-management ' +
          'advice. Confidence is the strength and agreement of the evidence, not certainty.',
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl, description: 'This deployment' }],
    externalDocs: {
      description: 'Docs, payment terms and how to read freshness',
      url: absoluteUrl(baseUrl, '/docs/'),
    },
    tags: [
      { name: 'Free snapshots', description: 'Free public JSON, no account or key. Cache hint 60 s.' },
      {
        name: 'Arena',
        description: 'The hourly arena: crowd votes, the brain’s calls and the lessons from both.',
      },
      {
        name: 'History',
        description: 'Past values of the free resources: one row per run, day files and CSV twins.',
      },
      {
        name: 'Paid (x402)',
        description: 'Premium resources: HTTP 402 until an exact x402 v2 payment settles.',
      },
    ],
    paths,
    components: { schemas: componentSchemas(schemaEntries(), baseUrl), ...sharedComponents() },
  };
}
