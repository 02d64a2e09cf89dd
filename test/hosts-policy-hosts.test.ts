// The delivery policy's routing and cache hints on the three hosts, run for real over one built site: `emi serve`
// (the real CLI), Debian's nginx with the rendered recipe in front of the paywall worker, and the Cloudflare Worker
// in workerd (`wrangler dev`). Where they used to differ: a slash spelled `%2F` (nginx decodes it before it matches a
// location, the others routed the path as a non-API one), the browser programs' chunks and entry scripts (no cache
// hint anywhere), and a folder without index.html (nginx's own 403 page).
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { FREE_CACHE } from '../schemas/delivery.ts';
import { notFoundError } from '../schemas/error.ts';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import { startWranglerDev, uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { NGINX, hasNginx, startNginx } from '../deploy/nginx/run.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { startEmi } from './ops-cli.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';

if (!hasNginx()) console.warn(`hosts-policy: nginx SKIPPED, ${NGINX} is absent (apt-get install -y nginx)`);

const HOSTS = ['emi serve', 'nginx', 'worker'] as const;
type HostName = (typeof HOSTS)[number];

const ATLAS = resourceById('atlas');
const FREE = '/api/market-regime.php';
const SECRET = 'outside the site';
const NOT_FOUND_PAGE = '<!doctype html><title>not found page</title>';

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

/** The ports these tests may listen on, handed out once each (free when handed out). */
const PORT_RANGE = { first: 19650, last: 19699 };
let nextPort = PORT_RANGE.first;
async function portInRange(): Promise<number> {
  while (nextPort <= PORT_RANGE.last) {
    const port = nextPort++;
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
  throw new Error(`no free port left in ${PORT_RANGE.first}-${PORT_RANGE.last}`);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with the path sent exactly as written (fetch would resolve or re-encode it). */
function raw(
  base: string,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, path, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

const header = (answer: Answer, name: string): string | undefined => {
  const value = answer.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** What a client sees of an answer, for comparing two spellings of one path. */
const view = (answer: Answer) => ({
  status: answer.status,
  type: header(answer, 'content-type'),
  cache: header(answer, 'cache-control'),
  body: answer.body,
});

describe(
  'the delivery policy on every host (emi serve, nginx, the Cloudflare Worker)',
  { timeout: 120_000 },
  () => {
    const hosts = new Map<HostName, string>();
    const cleanups: Array<() => unknown> = [];
    let root: string;

    const write = async (file: string, body: string) => {
      await mkdir(dirname(join(root, 'dist', file)), { recursive: true });
      await writeFile(join(root, 'dist', file), body);
    };

    async function startEmiServe(): Promise<void> {
      const port = await portInRange();
      const args = [
        'serve',
        '--port',
        String(port),
        '--dev-facilitator-port',
        '0',
        '--dir',
        'dist',
        '--paid',
        'paid',
      ];
      const emi = startEmi(root, args, { EMI_STATE_DIR: join(root, 'var') });
      cleanups.push(async () => {
        emi.stop();
        await emi.done;
      });
      await emi.waitFor(/development facilitator on http/);
      hosts.set('emi serve', `http://127.0.0.1:${port}`);
    }

    async function startNginxHost(payTo: string, facilitatorUrl: string): Promise<void> {
      if (!hasNginx()) return;
      const port = await portInRange();
      const base = `http://127.0.0.1:${port}`;
      const worker = await startPaywallServer({
        port: 0,
        payTo,
        facilitatorUrl,
        indexerUrl: facilitatorUrl,
        baseUrl: base,
        storage: createFsStorage(join(root, 'paid')),
        allowSimulated: true, // the fixtures are the simulated examples
      });
      cleanups.push(() => worker.close());
      const site = await renderNginxSite({
        root: join(root, 'dist'),
        listen: `127.0.0.1:${port}`,
        paywallUpstream: new URL(worker.url).host,
      });
      const nginx = await startNginx(join(root, 'nginx'), site, `${base}/`);
      cleanups.push(() => nginx.stop());
      hosts.set('nginx', base);
    }

    async function startWorkerHost(payTo: string, facilitatorUrl: string): Promise<void> {
      const persistTo = join(root, 'wrangler');
      await uploadPaidFiles(join(root, 'paid'), { persistTo });
      const port = await portInRange();
      const worker = await startWranglerDev({
        port,
        inspectorPort: await portInRange(),
        persistTo,
        assetsDir: join(root, 'dist'),
        vars: {
          EMI_PAYTO: payTo,
          EMI_FACILITATOR_URL: facilitatorUrl,
          EMI_INDEXER_URL: facilitatorUrl,
          EMI_BASE_URL: `http://127.0.0.1:${port}`,
          EMI_ALLOW_SIMULATED: '1',
        },
      });
      cleanups.push(() => worker.stop());
      hosts.set('worker', worker.url);
    }

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'emi-hosts-policy-'));
      await chmod(root, 0o755); // nginx workers run as another user when the master is root
      cleanups.push(() => rm(root, { recursive: true, force: true }));
      for (const resource of FREE_RESOURCES)
        await write(resource.file, JSON.stringify({ file: resource.file }));
      for (const asset of TRACKED_ASSETS)
        await write(`api/reasoning/${asset}.json`, JSON.stringify({ asset }));
      await write('api/history/index.json', '{"days":[]}');
      await write('index.html', '<!doctype html><title>home</title>');
      await write('404.html', NOT_FOUND_PAGE);
      await write('docs/index.html', '<!doctype html><title>docs</title>');
      await write('x402-buyer/index.html', '<!doctype html><title>buyer page</title>');
      await write('schemas/delivery.json', '{}'); // a folder without index.html
      await write('assets/site.js', 'console.log("site")');
      for (const script of [...HASHED_CHUNKS, ...ENTRY_SCRIPTS])
        await write(script, `export const at = "${script}";`);
      await writeFile(join(root, 'secret.txt'), SECRET); // next to dist/: no host may serve it
      await mkdir(join(root, 'paid'));
      await writePaidFixtures(join(root, 'paid'));

      const facilitator = await startDevFacilitator();
      cleanups.push(() => facilitator.close());
      const payTo = algosdk.generateAccount().addr.toString();
      facilitator.ledger.optIn(payTo);
      await Promise.all([
        startEmiServe(),
        startNginxHost(payTo, facilitator.url),
        startWorkerHost(payTo, facilitator.url),
      ]);
    }, 240_000);

    afterAll(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    describe.each(HOSTS)('%s', (name) => {
      const base = (): string => {
        const found = hosts.get(name);
        if (!found) throw new Error(`${name} did not start`);
        return found;
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
          // The health check's body says when it was asked: its status and headers are compared.
          const compared = (path: string, answer: Answer) =>
            path.startsWith('/x402') ? { ...view(answer), body: undefined } : view(answer);
          for (const [canonical, others] of Object.entries(spellings)) {
            const expected = compared(canonical, await raw(base(), canonical));
            for (const path of others)
              expect(compared(canonical, await raw(base(), path)), path).toEqual(expected);
          }
          const free = await raw(base(), '/api%2fmarket-regime.php');
          expect(free.status).toBe(200);
          expect(header(free, 'cache-control')).toBe(FREE_CACHE);
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
