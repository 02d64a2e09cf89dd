// The published schemas as a client meets them: every standalone file and the OpenAPI document compile in a
// default Ajv (draft 2020-12, strict mode, standard formats) and in openapi-typescript; bodies with fields added
// later still validate, while the generator's own zod check stays strict.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { schemaEntries, standaloneSchema } from '../generator/discovery/json-schema.ts';
import { notFoundError } from '../schemas/error.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { DISCLAIMER } from '../schemas/common.ts';

const addFormats = addFormatsModule.default;
const BASE_URL = 'https://emi.test';
const entries = schemaEntries();

/** Ajv with its defaults (strict mode on) plus the standard formats plugin every Ajv user adds for date-time. */
function defaultAjv(): Ajv2020 {
  const ajv = new Ajv2020();
  addFormats(ajv);
  return ajv;
}

/** Type-checks generated declarations with the TypeScript compiler in strict mode; returns the diagnostics. */
function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-schemas-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('published JSON Schemas', () => {
  it.each(entries.map((e) => [e.fileName, e] as const))('%s compiles in a default Ajv', (_name, entry) => {
    const schema = standaloneSchema(entry, BASE_URL);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(() => defaultAjv().compile(schema)).not.toThrow();
  });

  it('carry no closed objects and no non-standard format', () => {
    const text = JSON.stringify(entries.map((e) => standaloneSchema(e, BASE_URL)));
    expect(text).not.toContain('"additionalProperties":false');
    expect(text).not.toContain('starts_with');
  });

  it('accept a body with a field added later, while the generator’s zod schema still refuses it', () => {
    const entry = entries.find((e) => e.name === 'PaywallErrorBody');
    if (!entry) throw new Error('no PaywallErrorBody entry');
    const body = {
      success: false,
      status: 503,
      error: 'paid_resource_stale',
      message: 'Stale.',
      project: 'x',
      endpoint: null,
      retry_after_seconds: 30,
      transaction: null,
      disclaimer: DISCLAIMER,
      added_in_a_later_version: true,
    };
    const validate = defaultAjv().compile(standaloneSchema(entry, BASE_URL));
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(PaywallErrorBody.safeParse(body).success).toBe(false);
    const { added_in_a_later_version: _added, ...known } = body;
    expect(PaywallErrorBody.safeParse(known).success).toBe(true);
  });

  it('error bodies of the free paths carry the disclaimer', () => {
    const entry = entries.find((e) => e.name === 'ErrorResponse');
    if (!entry) throw new Error('no ErrorResponse entry');
    const validate = defaultAjv().compile(standaloneSchema(entry, BASE_URL));
    expect(validate(notFoundError())).toBe(true);
    const { disclaimer: _d, ...withoutDisclaimer } = notFoundError();
    expect(validate(withoutDisclaimer)).toBe(false);
  });
});

describe('openapi-typescript', () => {
  it('turns the OpenAPI document into declarations that type-check', async () => {
    const doc = buildOpenApiDocument({ baseUrl: BASE_URL });
    const source = astToString(await openapiTS(doc as never));
    // Every component of the document (the history files have one per resource there, not the generic ones), as a
    // whole word: `getStatisticsHistoryDay: ` is an operation, not the component HistoryDay.
    const components = Object.keys((doc as { components: { schemas: object } }).components.schemas);
    expect(components).toContain('HistoryMainBrainLatest');
    for (const name of components) expect(source).toMatch(new RegExp(`\\b${name}: `));
    const file = join(dir, 'openapi.d.ts');
    await writeFile(file, source);
    expect(typeErrors([file])).toEqual([]);
  }, 60_000);

  it('turns every standalone schema into declarations that type-check', async () => {
    // Each standalone JSON Schema goes in as the one component of a minimal OpenAPI 3.1 document; its `$defs`
    // move to the document root, where its `#/$defs/...` references point.
    const files: string[] = [];
    for (const entry of entries) {
      const { $schema: _s, $id: _id, $defs, ...schema } = standaloneSchema(entry, BASE_URL);
      const wrapped = {
        openapi: '3.1.0',
        info: { title: entry.title, version: '1' },
        paths: {},
        ...($defs === undefined ? {} : { $defs }),
        components: { schemas: { [entry.name]: schema } },
      };
      const source = astToString(await openapiTS(wrapped as never));
      expect(source, entry.fileName).toContain(`${entry.name}: {`);
      const file = join(dir, entry.fileName.replace('.json', '.d.ts'));
      await writeFile(file, source);
      files.push(file);
    }
    expect(typeErrors(files)).toEqual([]);
  }, 120_000);
});
