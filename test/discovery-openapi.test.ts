// The OpenAPI document: complete against spec section 4, structurally valid 3.1, lint-clean under Redocly CLI.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { createAjv, openApiResponseValidator } from './discovery-ajv.ts';
import { renderNetlifyRedirects } from '../deploy/netlify/render.ts';
import { cacheFor, routeRequest } from '../schemas/delivery.ts';

const run = promisify(execFile);
const BASE_URL = 'https://emi.test';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

/** Spec section 4, written out here rather than read from the registry, so that the two are checked against each other. */
const SPEC_PATHS = [
  '/api/market-regime.php',
  '/api/main-brain.php',
  '/api/liquidity-lite.php',
  '/api/derivatives.php',
  '/api/human-consensus.php',
  '/api/teacher-lessons.php',
  '/api/reasoning.php',
  '/api/statistics.php',
  '/arena/get_shared_intelligence.php',
  '/api/x402-market-regime.php',
  '/api/x402-atlas.php',
  '/api/x402-main-brain.php',
  '/api/x402-atlas-human-report.php',
];
const SPEC_PRICES: Record<string, [string, string]> = {
  '/api/x402-market-regime.php': ['0.01', '10000'],
  '/api/x402-main-brain.php': ['0.01', '10000'],
  '/api/x402-atlas.php': ['0.02', '20000'],
  '/api/x402-atlas-human-report.php': ['0.10', '100000'],
};

const doc = buildOpenApiDocument({ baseUrl: `${BASE_URL}/` }) as Json;

function collectRefs(node: unknown, refs: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => collectRefs(item, refs));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') refs.push(value);
      else collectRefs(value, refs);
    }
  }
  return refs;
}

const pointer = (ref: string) =>
  ref
    .slice(2)
    .split('/')
    .reduce<unknown>(
      (node, key) => (node as Json | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')],
      doc,
    );

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1.0, catalogue version 1.3.0, served from the configured base URL', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.3.0');
    expect(doc.servers).toEqual([{ url: BASE_URL, description: expect.any(String) }]);
    expect(doc.info.description).toMatch(/next_update_due/);
    expect(doc.info.description).toMatch(/not financial/);
  });

  it('describes exactly the paths of spec section 4, each a GET with a JSON 200 schema', () => {
    // Plus the published history (issue 19): index, latest and day files with their CSV twins; and the run status.
    const history = [
      '/status.json',
      '/api/history/index.json',
      // One set per resource, each answering with that resource's own rows.
      ...[
        'market-regime',
        'main-brain',
        'liquidity-lite',
        'derivatives',
        'human-consensus',
        'statistics',
      ].flatMap((resource) =>
        ['latest.json', 'latest.csv', '{date}.json', '{date}.csv'].map(
          (file) => `/api/history/${resource}/${file}`,
        ),
      ),
    ];
    expect(Object.keys(doc.paths).sort()).toEqual([...SPEC_PATHS, ...history].sort());
    for (const path of SPEC_PATHS) {
      const schema = doc.paths[path].get.responses['200'].content['application/json'].schema;
      expect(pointer(schema.$ref), path).toBeTruthy();
    }
  });

  it('gives the reasoning asset query exactly the spellings every host serves, default BTC and a JSON 400', () => {
    const operation = doc.paths['/api/reasoning.php'].get;
    const parameter = pointer(operation.parameters[0].$ref) as Json;
    expect(parameter).toMatchObject({ name: 'asset', in: 'query', required: false });
    expect(parameter.schema.default).toBe('BTC');
    const admits = createAjv().compile(parameter.schema);
    // Netlify matches query values as written, so its rules list what every host serves (the preview, nginx and
    // the Worker take any case, through the delivery policy).
    const netlify = [
      ...renderNetlifyRedirects().matchAll(/^\/api\/reasoning\.php +asset=(\w+) +\/api\//gm),
    ].map((m) => m[1] ?? '');
    expect(netlify).toEqual(expect.arrayContaining(['ETH', 'eth']));
    for (const spelling of netlify) {
      expect(admits(spelling), spelling).toBe(true);
      expect(routeRequest('GET', '/api/reasoning.php', spelling).kind, spelling).toBe('file');
    }
    expect(new Set(parameter.schema.enum)).toEqual(new Set(netlify));
    expect(admits('DOGE')).toBe(false);
    const badRequest = pointer(operation.responses['400'].$ref) as Json;
    expect(badRequest.content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse');
    expect(badRequest.content['application/json'].examples.invalidAsset.value.allowed_values).toHaveLength(7);
  });

  it('states cache and stability: 60 s stable for free paths, 0 s evolving for the atlas', () => {
    for (const path of SPEC_PATHS.filter((p) => !p.includes('x402-'))) {
      expect(doc.paths[path].get).toMatchObject({
        'x-cache-seconds': 60,
        'x-stability': 'stable',
        security: [],
      });
    }
    expect(doc.paths['/api/x402-atlas.php'].get).toMatchObject({
      'x-cache-seconds': 0,
      'x-stability': 'evolving',
    });
    expect(doc.paths['/api/x402-market-regime.php'].get).toMatchObject({
      'x-cache-seconds': 60,
      'x-stability': 'stable',
    });
  });

  it("declares on every free path's 200 the validators its 304 relies on (ETag, Last-Modified)", () => {
    for (const path of SPEC_PATHS.filter((p) => !p.includes('x402-'))) {
      const headers = doc.paths[path].get.responses['200'].headers;
      expect(Object.keys(headers), path).toEqual(expect.arrayContaining(['ETag', 'Last-Modified']));
    }
    expect(doc.components.headers.ETag.description).toMatch(/If-None-Match/);
  });

  it('gives every path its cache hint, stability and product id; history as hosts cache it', () => {
    // What hosts send for a file just written (its lifetime counts down from there).
    const maxAge = (path: string) => Number(/max-age=(\d+)/.exec(cacheFor(path, 0) ?? '')?.[1]);
    for (const [path, item] of Object.entries(doc.paths as Record<string, { get: Json }>)) {
      expect(item.get, path).toHaveProperty('x-cache-seconds');
      expect(item.get, path).toHaveProperty('x-stability');
      expect(item.get, path).toHaveProperty('x-product-id');
      if (!path.startsWith('/api/history/')) continue;
      // The hint is what hosts send for such a file (the delivery policy), for a finished day as for today.
      const file = path.replace('{resource}', 'market-regime').replace('{date}', '2026-01-01');
      expect(item.get['x-cache-seconds'], path).toBe(maxAge(file));
      expect(item.get['x-stability'], path).toBe('stable');
    }
  });

  it('gives every paid path its 402, the x402 headers and the exact payment terms', () => {
    for (const [path, [price, amount]] of Object.entries(SPEC_PRICES)) {
      const operation = doc.paths[path].get;
      expect(operation.security).toEqual([{ x402: [] }]);
      expect(operation['x-payment']).toMatchObject({
        protocol: 'x402',
        x402Version: 2,
        asset: '31566704',
        amount,
        price,
        network: expect.stringMatching(/^algorand:/),
      });
      const paymentRequired = pointer(operation.responses['402'].$ref) as Json;
      expect(paymentRequired.content['application/json'].schema.$ref).toBe(
        '#/components/schemas/PaymentRequiredBody',
      );
      expect(Object.keys(paymentRequired.headers)).toContain('PAYMENT-REQUIRED');
      expect(Object.keys(operation.responses['200'].headers)).toContain('PAYMENT-RESPONSE');
      // What the worker sends on every paid body: no shared cache may hand it to a caller who did not pay.
      expect(operation.responses['200'].headers['Cache-Control'].description).toBe('no-store');
    }
    expect(doc.components.securitySchemes.x402).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'PAYMENT-SIGNATURE',
    });
  });

  it('links every response schema to its published JSON Schema file', () => {
    for (const path of SPEC_PATHS) {
      const name = doc.paths[path].get.responses['200'].content['application/json'].schema.$ref
        .split('/')
        .at(-1);
      expect(doc.components.schemas[name].externalDocs.url).toMatch(
        new RegExp(`^${BASE_URL}/schemas/[a-z-]+\\.json$`),
      );
    }
  });

  it('resolves every $ref and compiles every component schema as JSON Schema 2020-12', () => {
    for (const ref of new Set(collectRefs(doc))) {
      expect(ref, ref).toMatch(/^#\/components\//);
      expect(pointer(ref), ref).toBeDefined();
    }
    const ajv = createAjv();
    ajv.addSchema({ $id: 'urn:emi:check', components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`urn:emi:check#/components/schemas/${name}`), name).toBeTypeOf('function');
    }
  });

  it('carries examples that satisfy their own schemas (paid samples, error bodies)', () => {
    const validate = openApiResponseValidator(doc);
    for (const resource of PAID_RESOURCES) {
      expect(validate(resource.path, '200', PAID_EXAMPLES[resource.id])).toEqual([]);
    }
    const invalidAsset =
      doc.components.responses.InvalidAsset.content['application/json'].examples.invalidAsset.value;
    expect(validate('/api/reasoning.php', '400', invalidAsset)).toEqual([]);
    expect(validate('/api/reasoning.php', '400', { success: true })).not.toEqual([]);
  });

  it('uses examples from a run when given, keyed by request path', () => {
    const body = { marker: 'from-a-run' };
    const withExamples = buildOpenApiDocument({
      baseUrl: BASE_URL,
      examples: { '/api/market-regime.php': body, '/api/reasoning.php?asset=ETH': body },
    }) as Json;
    const content = (path: string) =>
      withExamples.paths[path].get.responses['200'].content['application/json'];
    expect(content('/api/market-regime.php').examples.latest.value).toBe(body);
    expect(content('/api/reasoning.php').examples.ETH.value).toBe(body);
    expect(content('/api/main-brain.php').examples).toBeUndefined();
  });
});

describe('Redocly CLI lint', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-openapi-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const lint = async (file: string) => {
    // Telemetry and the update check would reach the internet: both off.
    const env = {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_COLOR: '1',
    };
    const cli = join(process.cwd(), 'node_modules/@redocly/cli/bin/cli.js');
    const { stdout } = await run(
      process.execPath,
      [cli, 'lint', file, '--config', 'redocly.yaml', '--format', 'json'],
      {
        env,
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    return JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: unknown[];
    };
  };

  it('finds no errors and no warnings in the JSON and the YAML form (struct: valid OpenAPI 3.1)', async () => {
    const json = join(dir, 'openapi.json');
    const yaml = join(dir, 'openapi.yaml');
    await writeFile(json, JSON.stringify(doc, null, 2));
    await writeFile(yaml, YAML.stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 }));
    expect(YAML.parse(YAML.stringify(doc, { aliasDuplicateObjects: false }))).toEqual(doc);
    for (const file of [json, yaml]) {
      const report = await lint(file);
      expect(report.problems, file).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    }
  });

  it('reports a broken document (the lint can fail)', async () => {
    const broken = structuredClone(doc);
    delete broken.paths['/api/market-regime.php'].get.responses;
    broken.paths['/api/main-brain.php'].get.responses['200'].content['application/json'].schema = {
      $ref: '#/nope',
    };
    const file = join(dir, 'broken.json');
    await writeFile(file, JSON.stringify(broken));
    const report = await lint(file);
    expect(report.totals.errors).toBeGreaterThan(0);
  });

  it('validates the 402 schema against a body shaped like the paywall’s', () => {
    const validate = openApiResponseValidator(doc);
    const body = {
      error: 'payment required',
      project: 'Educational Market Intelligence',
      ecosystem: 'x402 v2 on Algorand (USDC, ASA 31566704)',
      endpoint: 'x402-atlas',
      type: 'payment_required',
      x402Version: 2,
      resource: { url: `${BASE_URL}/api/x402-atlas.php`, mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
          amount: '20000',
          asset: '31566704',
          payTo: 'A'.repeat(58),
          maxTimeoutSeconds: 60,
          extra: {},
        },
      ],
      data: { mode: 'live', simulated: false, generated_at: '2026-11-23T07:00:00.000Z' },
      message: 'Pay exactly 0.02 USDC.',
      what_this_is: 'the atlas',
      what_this_is_not: 'advice',
      related_pages: { docs: { path: '/docs/payment-terms/', description: 'terms' } },
      disclaimer: 'Educational only.',
    };
    const errors = validate('/api/x402-atlas.php', '402', body);
    expect(errors).toEqual([]);
    expect(validate('/api/x402-atlas.php', '402', { ...body, x402Version: 1 })).not.toEqual([]);
  });
});
