// The delivery policy's routing and cache hints on the three hosts, run for real over one built site: `emi serve`
// (the real CLI), Debian's nginx with the rendered recipe in front of the paywall worker, and the Cloudflare Worker
// in workerd (`wrangler dev`). Where they used to differ: a slash spelled `%2F` (nginx decodes it before it matches a
// location, the others routed the path as a non-API one), the browser programs' chunks and entry scripts (no cache
// hint anywhere), and a folder without index.html (nginx's own 403 page).
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { freeCacheFor } from '../schemas/delivery.ts';
import { notFoundError } from '../schemas/error.ts';
import { NGINX, hasNginx } from '../deploy/nginx/run.ts';
import {
  HOSTS,
  NOT_FOUND_PAGE,
  expectSameAnswer,
  header,
  raw,
  startHosts,
  writeHostsSite,
} from './helpers/hosts.ts';
import type { RunningHosts } from './helpers/hosts.ts';
import { resourceById } from './paywall-harness.ts';
import { portsInRange } from './free-port.ts';

if (!hasNginx()) console.warn(`hosts-policy: nginx SKIPPED, ${NGINX} is absent (apt-get install -y nginx)`);

const ATLAS = resourceById('atlas');
const FREE = '/api/market-regime.php';
const SECRET = 'outside the site';

/** The browser programs' files as esbuild names them (generator/buyer/bundle.ts), one of each kind. */
const HASHED_CHUNKS = [
  '/assets/x402-buyer/chunk-6DSDX2NM.js',
  '/assets/x402-buyer/connect-sdk-GO4AYRQA.js',
  '/assets/arena-vote/App-58ab7d48-36MCCC4S.js',
  '/assets/arena-vote/chunk-MIF2ZTHH.js',
];
const ENTRY_SCRIPTS = ['/x402-buyer/app.js', '/assets/arena-vote/main.js'];
/** Written out, not imported: a hint the policy lacks must fail here, not compare undefined with undefined. */
const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
const REVALIDATE_CACHE = 'no-cache';

/** The ports these tests may listen on. */
const portInRange = portsInRange(19650, 19699);

describe(
  'the delivery policy on every host (emi serve, nginx, the Cloudflare Worker)',
  { timeout: 120_000 },
  () => {
    let root = '';
    let running: RunningHosts | undefined;

    beforeAll(async () => {
      const scripts = [...HASHED_CHUNKS, ...ENTRY_SCRIPTS].map((script) => [
        script,
        `export const at = "${script}";`,
      ]);
      root = await writeHostsSite('emi-hosts-policy-', SECRET, {
        'api/history/index.json': '{"days":[]}',
        'schemas/delivery.json': '{}', // a folder without index.html
        'assets/site.js': 'console.log("site")',
        ...Object.fromEntries(scripts),
      });
      running = await startHosts(root, portInRange);
    }, 240_000);

    afterAll(async () => {
      await running?.stop();
      if (root) await rm(root, { recursive: true, force: true });
    });

    describe.each(HOSTS)('%s', (name) => {
      const base = (): string => {
        if (!running) throw new Error('the hosts did not start');
        return running.host(name).base;
      };
      const skip = name === 'nginx' && !hasNginx();

      it.skipIf(skip)(
        'routes a slash spelled %2F (and the dot segments it reveals) as the slash itself',
        async () => {
          const spellings: Record<string, string[]> = {
            [FREE]: [
              '/api%2fmarket-regime.php',
              '/api%2Fmarket-regime.php',
              '/docs/..%2fapi/market-regime.php',
            ],
            '/api/nope.php': ['/api%2Fnope.php'],
            '/x402/health': ['/x402%2Fhealth'],
            '/docs/': ['/docs%2F', '/x402-buyer/..%2fdocs/'],
            '/assets/x402-buyer/chunk-6DSDX2NM.js': ['/assets%2Fx402-buyer%2Fchunk-6DSDX2NM.js'],
          };
          for (const [canonical, others] of Object.entries(spellings)) {
            const first = await raw(base(), canonical);
            // The health check's body says when it was asked: its status and headers are compared.
            for (const path of others)
              expectSameAnswer(await raw(base(), path), first, path, !canonical.startsWith('/x402'));
          }
          const free = await raw(base(), '/api%2fmarket-regime.php');
          expect(free.status).toBe(200);
          // Counted down from the file's writing where the host knows it (a file written moments ago), revalidated
          // on the Worker, which does not (schemas/delivery.ts freeCacheFor).
          const freeCache = header(free, 'cache-control');
          if (name === 'worker') expect(freeCache).toBe(freeCacheFor(null));
          else expect(freeCache).toMatch(/^max-age=\d+$/);
          const missing = await raw(base(), '/api%2Fnope.php');
          expect(missing.status).toBe(404);
          expect(JSON.parse(missing.body)).toEqual(notFoundError());
          expect((await raw(base(), '/x402%2Fhealth')).status).toBe(200);
        },
      );

      it.skipIf(skip)(
        'answers a paid path spelled with %2F or a revealed dot segment with its 402',
        async () => {
          for (const path of [
            '/api%2Fx402-atlas.php',
            '/api%2fx402-atlas.php',
            '/api/..%2fapi/x402-atlas.php',
          ]) {
            const answer = await raw(base(), path);
            expect(answer.status, path).toBe(402);
            expect(header(answer, 'cache-control'), path).toBe('no-store');
            const required = decodePaymentRequiredHeader(header(answer, 'payment-required') ?? '');
            expect(required.resource?.url, path).toBe(`${base()}${ATLAS.path}`);
          }
        },
      );

      it.skipIf(skip)('refuses every way out of the site spelled with %2F, %5C or encoded dots', async () => {
        for (const path of [
          '/..%2f..%2fsecret.txt',
          '/..%2F..%2F..%2Fetc%2Fpasswd',
          '/%2e%2e%2f%2e%2e%2fsecret.txt',
          '/api/..%2f..%2f..%2fsecret.txt',
          '/docs/%2e%2e%2F%2e%2e%2F%2e%2e%2Fsecret.txt',
          '/x402-buyer%2f..%2f..%2fsecret.txt',
          '/assets/..%2f..%2f..%2f..%2fetc%2fpasswd',
          '/..%252f..%252fsecret.txt',
          '/..%5c..%5csecret.txt',
          '/%2e%2e%5c%2e%2e%5csecret.txt',
          '/api/x402-atlas.php%2f..%2f..%2f..%2fsecret.txt',
        ]) {
          const answer = await raw(base(), path);
          expect(answer.status, path).toBeGreaterThanOrEqual(400);
          expect(answer.body, path).not.toContain(SECRET);
          expect(answer.body, path).not.toContain('root:');
        }
      });

      it.skipIf(skip)(
        'keeps the programs’ hashed chunks for a year and revalidates their entry scripts every time',
        async () => {
          for (const path of HASHED_CHUNKS) {
            for (const method of ['GET', 'HEAD']) {
              const answer = await raw(base(), path, method);
              expect(answer.status, `${method} ${path}`).toBe(200);
              expect(header(answer, 'cache-control'), `${method} ${path}`).toBe(IMMUTABLE_CACHE);
            }
          }
          for (const path of ENTRY_SCRIPTS) {
            const current = await raw(base(), path);
            expect(current.status, path).toBe(200);
            expect(header(current, 'cache-control'), path).toBe(REVALIDATE_CACHE);
            const etag = header(current, 'etag') ?? '';
            const revalidated = await raw(base(), path, 'GET', { 'If-None-Match': etag });
            expect(revalidated.status, `${path} revalidated`).toBe(304);
            expect(header(revalidated, 'cache-control'), `${path} revalidated`).toBe(REVALIDATE_CACHE);
          }
          // Not the programs': left as they were. A missing chunk's 404 is never kept for a year.
          for (const path of ['/assets/site.js', '/', '/docs/'])
            expect(header(await raw(base(), path), 'cache-control'), path).toBeUndefined();
          const missing = await raw(base(), '/assets/x402-buyer/chunk-AAAAAAAA.js');
          expect(missing.status).toBe(404);
          expect(header(missing, 'cache-control') ?? '').not.toMatch(/max-age=31536000|immutable/);
        },
      );

      it.skipIf(skip)(
        'answers a folder without index.html with the site’s 404 (its page, or JSON under the API)',
        async () => {
          for (const path of ['/schemas/', '/assets/', '/assets/x402-buyer/']) {
            const answer = await raw(base(), path);
            expect(answer.status, path).toBe(404);
            expect(header(answer, 'content-type'), path).toMatch(/^text\/html/);
            expect(answer.body, path).toBe(NOT_FOUND_PAGE);
          }
          for (const path of ['/api/', '/api/history/', '/arena/']) {
            const answer = await raw(base(), path);
            expect(answer.status, path).toBe(404);
            expect(JSON.parse(answer.body), path).toEqual(notFoundError());
          }
        },
      );
    });
  },
);
