// Three things the hosts used to get wrong, each checked on the hosts it concerns, run for real over one built site:
// `emi serve` (the real CLI), Debian's nginx with the rendered recipe (and, for compression, under Debian's
// `gzip on`), and the Cloudflare Worker in workerd (`wrangler dev`).
// - The Worker sent one strong ETag with the identity, gzip and br bodies of a file: a strong tag names one sequence
//   of bytes (RFC 9110 8.8.3), so a client holding one encoding could revalidate, or resume (If-Range), another.
// - The Worker's HEAD answers carried no Content-Length where its GET answers did.
// - Every preflight allowed POST, also on the paths that answer POST with 405.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NGINX, hasNginx } from '../deploy/nginx/run.ts';
import { HOSTS, header, rawBytes, startHosts, startNginxSite, writeHostsSite } from './helpers/hosts.ts';
import type { Answer, HostName, RunningHosts, StartedHost } from './helpers/hosts.ts';
import { portsInRange } from './free-port.ts';

if (!hasNginx()) console.warn(`hosts-s39: nginx SKIPPED, ${NGINX} is absent (apt-get install -y nginx)`);

const FREE = '/api/market-regime.php';
/** Large enough for every host's compression (nginx's gzip_min_length, workerd's own rule). */
const DISCOVERY = '/openapi.json';
const FILES = [DISCOVERY, FREE, '/', '/docs/'];
/** Some the runtime answers compressed, some not (identity preferred, or gzip refused). */
const ENCODINGS = [
  'identity',
  'gzip',
  'br',
  'gzip, deflate, br',
  'identity, gzip',
  'gzip;q=0, br;q=0',
  'br;q=0.5, gzip',
];

/** The ports these tests may listen on. */
const portInRange = portsInRange(19750, 19789);

const isWeak = (etag: string | undefined): boolean => etag?.startsWith('W/') ?? false;
const opaque = (etag: string | undefined): string | undefined => etag?.replace(/^W\//, '');

/** GET `path` with `encoding` as the client's Accept-Encoding. */
const getEncoded = (base: string, path: string, encoding: string): Promise<Answer<Buffer>> =>
  rawBytes(base, path, 'GET', { 'Accept-Encoding': encoding });

describe('hosts: ETags per encoding, HEAD lengths, preflight methods', { timeout: 120_000 }, () => {
  let root = '';
  let running: RunningHosts | undefined;
  /** nginx with the recipe under Debian's `gzip on` (the parity stack's nginx compresses nothing). */
  let gzipNginx: StartedHost | undefined;

  beforeAll(async () => {
    root = await writeHostsSite('emi-hosts-s39-', 'outside the site', {
      'openapi.json': JSON.stringify({ openapi: '3.1.0', padding: 'x'.repeat(4000) }),
    });
    running = await startHosts(root, portInRange);
    if (hasNginx()) {
      gzipNginx = await startNginxSite({
        dir: join(root, 'nginx-gzip'),
        siteRoot: join(root, 'dist'),
        port: await portInRange(),
        paywallUpstream: '127.0.0.1:9',
        before: 'gzip on;',
      });
    }
  }, 240_000);

  afterAll(async () => {
    await gzipNginx?.stop();
    await running?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const baseOf = (name: HostName): string => {
    if (!running) throw new Error('the hosts did not start');
    return running.host(name).base;
  };

  /** The hosts that may compress, and `emi serve`, which never does (the rule holds there trivially). */
  const compressing: Array<[string, () => string, boolean]> = [
    ['emi serve', () => baseOf('emi serve'), false],
    ['nginx under gzip on', () => gzipNginx?.base ?? '', !hasNginx()],
    ['worker', () => baseOf('worker'), false],
  ];

  describe.each(compressing)('%s', (name, base, skip) => {
    it.skipIf(skip)(
      'never sends one strong ETag with two different bodies of a file, and revalidates each encoding with its own tag',
      async () => {
        let encodedSomething = false;
        for (const path of FILES) {
          const answers = await Promise.all(ENCODINGS.map((encoding) => getEncoded(base(), path, encoding)));
          for (const [index, answer] of answers.entries()) {
            const encoding = ENCODINGS[index] ?? '';
            const what = `${path} (Accept-Encoding: ${encoding})`;
            expect(answer.status, what).toBe(200);
            const etag = header(answer, 'etag');
            expect(etag, what).toMatch(/^(W\/)?"[^"]+"$/);
            if (header(answer, 'content-encoding')) encodedSomething = true;
            // A strong tag shared by two answers promises the same bytes.
            for (const other of answers) {
              if (!isWeak(etag) && header(other, 'etag') === etag)
                expect(other.body.equals(answer.body), `${what}: strong ${etag} on other bytes`).toBe(true);
            }
            // The same representation revalidates with the tag it came with.
            const revalidated = await rawBytes(base(), path, 'GET', {
              'Accept-Encoding': encoding,
              'If-None-Match': etag ?? '',
            });
            expect(revalidated.status, what).toBe(304);
            // The same tag, by the weak comparison (nginx's 304 names its file's strong tag: it compresses no body).
            expect(opaque(header(revalidated, 'etag')), what).toBe(opaque(etag));
          }
        }
        // Where the host compresses, the rule above was put to work.
        if (name !== 'emi serve') expect(encodedSomething).toBe(true);
      },
    );
  });

  describe.each(HOSTS)('%s', (name) => {
    const skip = name === 'nginx' && !hasNginx();

    it.skipIf(skip)(
      'sends with HEAD the length of the body GET sends, for each encoding (none where it is compressed)',
      async () => {
        for (const path of [FREE, DISCOVERY, '/', '/docs/nothing/']) {
          for (const encoding of ENCODINGS) {
            const what = `${path} (Accept-Encoding: ${encoding})`;
            const get = await rawBytes(baseOf(name), path, 'GET', { 'Accept-Encoding': encoding });
            const head = await rawBytes(baseOf(name), path, 'HEAD', { 'Accept-Encoding': encoding });
            expect(head.status, what).toBe(get.status);
            expect(header(head, 'content-encoding'), what).toBe(header(get, 'content-encoding'));
            if (header(get, 'content-encoding')) {
              // Compressed: the length is known once compressed; a HEAD names none, or GET's.
              expect(header(head, 'content-length'), `HEAD ${what}`).toBe(header(get, 'content-length'));
              continue;
            }
            expect(header(head, 'content-length'), `HEAD ${what}`).toBe(String(get.body.byteLength));
            // `wrangler dev` passes the pages through its live-reload rewriter, which sends them chunked (the
            // Worker's GET names the length, as it does in production); elsewhere GET names it.
            const page = header(get, 'content-type')?.startsWith('text/html') ?? false;
            if (name !== 'worker' || !page || header(get, 'transfer-encoding') !== 'chunked')
              expect(header(get, 'content-length'), `GET ${what}`).toBe(String(get.body.byteLength));
          }
        }
      },
    );

    it.skipIf(skip)(
      'allows in a preflight the methods the path answers, POST only where it is served',
      async () => {
        const allowed: Record<string, string> = {
          '/': 'GET, HEAD, OPTIONS',
          [FREE]: 'GET, HEAD, OPTIONS',
          '/api/x402-atlas.php': 'GET, HEAD, OPTIONS',
          '/x402/health': 'GET, HEAD, OPTIONS',
          '/arena/votes/export': 'GET, HEAD, OPTIONS',
          '/p/someone/x402-buyer/': 'GET, HEAD, OPTIONS',
          '/docs/nothing/': 'GET, HEAD, OPTIONS',
          '/arena/vote': 'POST, OPTIONS',
          '//arena/vote': 'POST, OPTIONS',
          '/mcp': 'POST, OPTIONS',
          '/p/someone/admin/credits': 'POST, OPTIONS',
        };
        for (const [path, methods] of Object.entries(allowed)) {
          const answer = await rawBytes(baseOf(name), path, 'OPTIONS', {
            Origin: 'https://agent.example',
            'Access-Control-Request-Method': methods.startsWith('POST') ? 'POST' : 'GET',
            'Access-Control-Request-Headers': 'content-type',
          });
          expect(answer.status, path).toBe(204);
          expect(header(answer, 'access-control-allow-origin'), path).toBe('*');
          expect(header(answer, 'access-control-allow-methods'), path).toBe(methods);
        }
        // What the preflight says matches what the path does: POST at a file is refused with 405.
        for (const path of ['/', FREE, '/api/x402-atlas.php']) {
          const post = await rawBytes(
            baseOf(name),
            path,
            'POST',
            { 'Content-Type': 'application/json' },
            '{}',
          );
          expect(post.status, `POST ${path}`).toBe(405);
        }
      },
    );
  });
});
