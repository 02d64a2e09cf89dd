// Every file a real (simulated) generator run publishes is valid against the response schema the built
// OpenAPI document gives for its path, and the built document, with those files as examples, still lints clean.
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { createAjv, describeErrors, openApiResponseValidator } from './discovery-ajv.ts';
import { generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

const run = promisify(execFile);
const readJson = async (path: string): Promise<unknown> => JSON.parse(await readFile(path, 'utf8'));

describe('generated files against the published OpenAPI document', () => {
  let site: BuiltSite;
  let document: Record<string, unknown>;
  let validate: ReturnType<typeof openApiResponseValidator>;

  beforeAll(async () => {
    site = await generateAndBuild({ runs: 2 });
    document = (await readJson(join(site.distDir, 'openapi.json'))) as Record<string, unknown>;
    validate = openApiResponseValidator(document);
  }, 180_000);
  afterAll(async () => {
    await site?.cleanup();
  });

  it('validates every free file served from dist/ against the 200 schema of its path', async () => {
    for (const resource of FREE_RESOURCES) {
      const body = await readJson(join(site.distDir, resource.file));
      expect(validate(resource.path, '200', body), resource.path).toEqual([]);
    }
    for (const asset of TRACKED_ASSETS) {
      const body = (await readJson(join(site.distDir, 'api/reasoning', `${asset}.json`))) as {
        asset: string;
      };
      expect(body.asset).toBe(asset);
      expect(validate('/api/reasoning.php', '200', body), asset).toEqual([]);
    }
  });

  it('rejects a file that breaks its schema (the check can fail)', async () => {
    const body = (await readJson(join(site.distDir, 'api/market-regime.php'))) as Record<string, unknown>;
    expect(validate('/api/market-regime.php', '200', { ...body, confidence: 'high' })).not.toEqual([]);
    expect(validate('/api/main-brain.php', '200', body)).not.toEqual([]);
  });

  it('validates the paid bodies of the run against the 200 schema of their paid path', async () => {
    for (const resource of PAID_RESOURCES) {
      const body = await readJson(join(site.paidDir, resource.file));
      expect(validate(resource.path, '200', body), resource.path).toEqual([]);
    }
  });

  it('validates the static error files against the JSON error responses', async () => {
    expect(
      validate('/api/reasoning.php', '400', await readJson(join(site.distDir, 'errors/invalid-asset.json'))),
    ).toEqual([]);
    expect(
      validate('/api/statistics.php', '404', await readJson(join(site.distDir, 'errors/not-found.json'))),
    ).toEqual([]);
  });

  it('validates the same files against the standalone JSON Schema files under /schemas/', async () => {
    const ajv = createAjv();
    const schemaFiles = await readdir(join(site.distDir, 'schemas'));
    for (const file of schemaFiles)
      ajv.addSchema((await readJson(join(site.distDir, 'schemas', file))) as object);
    for (const resource of FREE_RESOURCES) {
      const name = resource.id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      const check = ajv.getSchema(`https://emi.test/schemas/${name}.json`);
      expect(check, name).toBeTypeOf('function');
      const body = await readJson(join(site.distDir, resource.file));
      expect(check?.(body), `${name}: ${describeErrors(check?.errors)}`).toBe(true);
    }
  });

  it('carries the run’s own files as examples and lints clean with them', async () => {
    const paths = document.paths as Record<string, { get: { responses: Record<string, any> } }>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const example =
      paths['/api/market-regime.php']?.get.responses['200'].content['application/json'].examples.latest.value;
    expect(example).toEqual(await readJson(join(site.distDir, 'api/market-regime.php')));
    const eth =
      paths['/api/reasoning.php']?.get.responses['200'].content['application/json'].examples.ETH.value;
    expect(eth).toEqual(await readJson(join(site.distDir, 'api/reasoning/ETH.json')));

    const cli = join(process.cwd(), 'node_modules/@redocly/cli/bin/cli.js');
    const env = {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_COLOR: '1',
    };
    for (const file of ['openapi.json', 'openapi.yaml']) {
      const { stdout } = await run(
        process.execPath,
        [cli, 'lint', join(site.distDir, file), '--config', 'redocly.yaml', '--format', 'json'],
        { env, maxBuffer: 16 * 1024 * 1024 },
      ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: object; problems: unknown[] };
      expect(report.problems, file).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    }
  });

  it('serves openapi.json compact, for machines and agents that count their context (openapi.yaml reads easier)', async () => {
    const text = await readFile(join(site.distDir, 'openapi.json'), 'utf8');
    expect(text).toBe(`${JSON.stringify(JSON.parse(text))}\n`);
    const bytes = Buffer.byteLength(text);
    const llms = await readFile(join(site.distDir, 'llms.txt'), 'utf8');
    const stated = Number(/openapi\.json\)[^\n]*\(about (\d+) KB/.exec(llms)?.[1]);
    expect(
      Math.abs(stated * 1000 - bytes),
      `llms.txt says about ${stated} KB of ${bytes} bytes`,
    ).toBeLessThan(10_000);
  });
});
