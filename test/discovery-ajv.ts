// JSON Schema validation for the tests: Ajv in draft 2020-12 mode (the dialect of zod's output and OpenAPI 3.1).
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its module object is the plugin, and its `default` property is the plugin too.
const addFormats = addFormatsModule.default;

export function createAjv(): Ajv2020 {
  // OpenAPI adds keywords (example, externalDocs, discriminator, x-*) that are not JSON Schema vocabulary.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv;
}

export const describeErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');

type Json = Record<string, unknown>;

/**
 * Validates bodies against the response schema the OpenAPI document gives for a path and status. The document's
 * components are registered under one id so that their `#/components/schemas/...` references resolve.
 */
export function openApiResponseValidator(document: Json) {
  const ajv = createAjv();
  ajv.addSchema({ $id: 'urn:emi:openapi', components: document.components }, 'urn:emi:openapi');
  const paths = document.paths as Record<string, { get: { responses: Record<string, Json> } }>;
  const responses = (document.components as { responses: Record<string, Json> }).responses;
  return (path: string, status: string, body: unknown): string[] => {
    let response = paths[path]?.get.responses[status];
    if (response && typeof response.$ref === 'string')
      response = responses[response.$ref.split('/').at(-1) ?? ''];
    const schema = (response?.content as Record<string, { schema: { $ref: string } }> | undefined)?.[
      'application/json'
    ]?.schema;
    if (!schema) return [`no ${status} JSON schema for ${path}`];
    const validate = ajv.getSchema(`urn:emi:openapi${schema.$ref}`);
    if (!validate) return [`schema ${schema.$ref} does not resolve`];
    return validate(body) ? [] : [describeErrors(validate.errors)];
  };
}
