// What the OpenAPI document says a paid path answers besides 200 and 402, against what the paywall and the host in
// front of it really answer: each status documented, each error code named, Retry-After declared where it is sent,
// and every body valid against the documented schema. The answers come over real HTTP from the preview server with
// the real paywall app mounted, as `emi serve` runs them.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { createPaywallApp } from '../paywall-worker/app.ts';
import type { PaywallAppOptions } from '../paywall-worker/app.ts';
import { createPayeeGate } from '../paywall-worker/core/payee-gate.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { openApiResponseValidator } from './discovery-ajv.ts';
import { freePort } from './free-port.ts';
import { writePaidFixtures } from './paywall-harness.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

const doc = buildOpenApiDocument({ baseUrl: 'https://emi.test' }) as Json;
const validate = openApiResponseValidator(doc);
const PATH = PAID_RESOURCES[0]!.path;

/** A response object of the document, its `$ref` followed. */
function responseOf(path: string, status: string): Json | undefined {
  const response = doc.paths[path]?.get.responses[status] as Json | undefined;
  return typeof response?.$ref === 'string'
    ? (doc.components.responses[response.$ref.split('/').at(-1) ?? ''] as Json)
    : response;
}

const headerNames = (response: Json | undefined): string[] =>
  Object.keys((response?.headers as Json | undefined) ?? {}).map((name) => name.toLowerCase());

interface Answer {
  status: number;
  error: string;
  retryAfter: string | null;
  body: unknown;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** One GET (or `method`) of a paid path through the preview server with the real paywall app behind it. */
async function answerOf(
  setup: {
    paidFiles?: { ageSeconds: number } | null;
    allowSimulated?: boolean;
    facilitatorUrl?: string;
    appOptions?: PaywallAppOptions;
    withoutPaywall?: boolean;
  },
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-paid-errors-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  if (setup.paidFiles) await writePaidFixtures(dir, setup.paidFiles.ageSeconds);
  const paywall = setup.withoutPaywall
    ? undefined
    : createPaywallApp(
        {
          payTo: algosdk.generateAccount().addr.toString(),
          facilitatorUrl: setup.facilitatorUrl ?? `http://127.0.0.1:${await freePort()}`,
          baseUrl: 'http://127.0.0.1:8080',
          storage: createFsStorage(dir),
          allowSimulated: setup.allowSimulated ?? true,
          facilitatorTimeoutMs: 2000,
        },
        { log: () => undefined, ...setup.appOptions },
      );
  const server: Listening = await listen(createPreviewApp({ root: dir, paywall }), 0);
  cleanups.push(() => server.close());
  if (method === 'TRACE' || headers.Expect) return rawAnswerOf(`${server.url}${PATH}`, method, headers);
  const response = await fetch(`${server.url}${PATH}`, { method, headers });
  const body = (await response.json()) as { error: string };
  return {
    status: response.status,
    error: body.error,
    retryAfter: response.headers.get('retry-after'),
    body,
  };
}

/** A request fetch will not send (TRACE, an `Expect` header), through node:http. */
function rawAnswerOf(url: string, method: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error: string };
        const retryAfter = response.headers['retry-after'];
        resolve({
          status: response.statusCode ?? 0,
          error: body.error,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          body,
        });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

describe('OpenAPI: the error answers of a paid path', () => {
  const answers = new Map<string, Answer>();
  beforeAll(async () => {
    const facilitatorDown = `http://127.0.0.1:${await freePort()}`; // nothing listens: connection refused
    answers.set('missing file', await answerOf({ paidFiles: null }));
    answers.set('stale file', await answerOf({ paidFiles: { ageSeconds: 3600 } }));
    answers.set('simulated file', await answerOf({ paidFiles: { ageSeconds: 0 }, allowSimulated: false }));
    answers.set(
      'payee not opted in',
      await answerOf({
        paidFiles: { ageSeconds: 0 },
        appOptions: { payee: createPayeeGate(() => Promise.resolve('the payee has not opted in to USDC')) },
      }),
    );
    answers.set(
      'facilitator unreachable',
      await answerOf({ paidFiles: { ageSeconds: 0 }, facilitatorUrl: facilitatorDown }),
    );
    answers.set('POST', await answerOf({ paidFiles: { ageSeconds: 0 } }, 'POST'));
    answers.set('TRACE', await answerOf({ paidFiles: { ageSeconds: 0 } }, 'TRACE'));
    answers.set('Expect', await answerOf({ paidFiles: { ageSeconds: 0 } }, 'GET', { Expect: 'foo' }));
    answers.set('paywall not running', await answerOf({ withoutPaywall: true }));
  }, 60_000);

  it('gets the answers it documents from the real paywall (the cases this test drives)', () => {
    expect(Object.fromEntries([...answers].map(([what, a]) => [what, `${a.status} ${a.error}`]))).toEqual({
      'missing file': '503 paid_resource_unavailable',
      'stale file': '503 data_stale',
      'simulated file': '503 data_not_live',
      'payee not opted in': '503 payee_not_opted_in',
      'facilitator unreachable': '503 facilitator_unreachable',
      POST: '405 method_not_allowed',
      TRACE: '501 method_not_implemented',
      Expect: '417 expectation_failed',
      'paywall not running': '503 paywall_unavailable',
    });
  });

  it('documents each answer on every paid path: its status, its code by name, a valid body', () => {
    for (const resource of PAID_RESOURCES) {
      for (const [what, answer] of answers) {
        const response = responseOf(resource.path, String(answer.status));
        expect(response, `${resource.path} ${what}: ${answer.status} documented`).toBeDefined();
        expect(response?.description, `${resource.path} ${what}`).toContain(`\`${answer.error}\``);
        expect(validate(resource.path, String(answer.status), answer.body), `${what} body`).toEqual([]);
      }
    }
  });

  it('declares Retry-After on every answer that sends it', () => {
    const sent = [...answers].filter(([, answer]) => answer.retryAfter !== null);
    // The paywall's own 503s, and the host's when the paywall cannot be reached (nginx sends it too).
    expect(sent.map(([what]) => what)).toEqual(
      expect.arrayContaining([
        'missing file',
        'stale file',
        'facilitator unreachable',
        'paywall not running',
      ]),
    );
    for (const [what, answer] of sent) {
      expect(Number(answer.retryAfter), what).toBeGreaterThan(0);
      expect(headerNames(responseOf(PATH, String(answer.status))), what).toContain('retry-after');
    }
  });

  it('describes 404 as a path the paywall sells nothing at, never as a paid file not yet published', () => {
    const notFound = responseOf(PATH, '404');
    expect(notFound?.description).not.toMatch(/not published yet/i);
    expect(notFound?.description).toContain('`not_found`');
    // A paid file that is not there is a 503 (the "missing file" answer above), and the 503 says so.
    expect(responseOf(PATH, '503')?.description).toMatch(/`paid_resource_unavailable`[^.]*not published/i);
  });

  it('names every 503 code the paywall core can give one of the four paid paths', async () => {
    // Read from the sources, so that a code added there without a word here fails this test.
    // Every module of the core (it is split by decision), so that a code moved between them is still read.
    const core = (await readdir('paywall-worker/core')).filter((name) => name.endsWith('.ts'));
    const sources = await Promise.all(
      [...core.map((name) => `paywall-worker/core/${name}`), 'paywall-worker/facilitator-errors.ts'].map(
        (file) => readFile(file, 'utf8'),
      ),
    );
    const text = sources.join('\n');
    const codes = new Set([
      ...[...text.matchAll(/fail\(\s*503,\s*'([a-z_]+)'/g)].map((m) => m[1]!),
      ...[...text.matchAll(/status: 503,\s*error: '([a-z_]+)'/g)].map((m) => m[1]!),
      // freshnessRefusal's codes, answered with 503
      ...[...text.matchAll(/error: '(data_[a-z_]+)'/g)].map((m) => m[1]!),
    ]);
    // Sold only at a publisher's storefront path (/p/<id>/...), which the document does not describe.
    codes.delete('not_available_from_seller');
    expect([...codes]).toEqual(
      expect.arrayContaining([
        'paid_resource_unavailable',
        'data_stale',
        'payment_in_progress',
        'settlement_not_recorded',
      ]),
    );
    const described = responseOf(PATH, '503')?.description as string;
    for (const code of codes) expect(described, code).toContain(`\`${code}\``);
  });
});
