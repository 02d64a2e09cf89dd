// The three hosts answer a request alike, run for real over one built site and one set of paid files: `emi serve` (the
// real CLI, with its development facilitator), Debian's nginx with the rendered recipe in front of the paywall worker,
// and the Cloudflare Worker in workerd (`wrangler dev`). Revalidation (ETag, 304), compression (Vary), HEAD's
// Content-Length, and paths spelled another way (doubled slashes, percent-encoded unreserved characters) are where
// they used to differ.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { EXPOSED_HEADERS, MCP_PATH, SITE_HEADERS, preflightAnswer } from '../schemas/delivery.ts';
import { NGINX, hasNginx } from '../deploy/nginx/run.ts';
import { buyWithDevWallet, createDevBuyer } from '../paywall-worker/buy.ts';
import { freePort } from './free-port.ts';
import {
  HOSTS,
  expectSameAnswer,
  header,
  raw,
  rawBytes,
  startHosts,
  startNginxSite,
  writeHostsSite,
} from './helpers/hosts.ts';
import type { Host, RunningHosts } from './helpers/hosts.ts';
import { nextRound, signedVoteBody } from './helpers/signed-vote.ts';
import { resourceById } from './paywall-harness.ts';
import { MCP_INITIALIZE } from './helpers/mcp-initialize.ts';

if (!hasNginx()) console.warn(`host-parity: nginx SKIPPED, ${NGINX} is absent (apt-get install -y nginx)`);

const ATLAS = resourceById('atlas');
const FREE = '/api/market-regime.php';
/** Compressible by the Worker's runtime (workerd compresses text answers by the client's Accept-Encoding). */
const DISCOVERY = '/openapi.json';
const SECRET = 'outside the site';
/** The seconds a free file's hint has left (-1 once it is no-cache); NaN for any other hint. */
const lifetimeLeft = (answer: Response): number => {
  const hint = answer.headers.get('cache-control');
  return hint === 'no-cache' ? -1 : Number(/^max-age=(\d+)$/.exec(hint ?? '')?.[1]);
};

describe('every host answers alike (emi serve, nginx, the Cloudflare Worker)', { timeout: 120_000 }, () => {
  let root = '';
  let running: RunningHosts | undefined;

  beforeAll(async () => {
    root = await writeHostsSite('emi-host-parity-', SECRET, {
      'openapi.json': JSON.stringify({ openapi: '3.1.0', padding: 'x'.repeat(4000) }),
    });
    running = await startHosts(root);
  }, 240_000);

  afterAll(async () => {
    await running?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  // Debian's /etc/nginx/nginx.conf, whose http block the recipe goes in, says `gzip on` (HTML by default).
  it.skipIf(!hasNginx())(
    'nginx under Debian’s `gzip on` says Vary: Accept-Encoding with what it compresses',
    async () => {
      const { base, stop } = await startNginxSite({
        dir: join(root, 'nginx-gzip'),
        siteRoot: join(root, 'dist'),
        port: await freePort(),
        paywallUpstream: '127.0.0.1:9',
        before: 'gzip on;',
      });
      try {
        for (const path of ['/', '/docs/', '/docs/nothing/']) {
          const answer = await raw(base, path, 'GET', { 'Accept-Encoding': 'gzip' });
          expect(header(answer, 'content-encoding'), path).toBe('gzip');
          expect(header(answer, 'vary'), path).toMatch(/accept-encoding/i);
        }
      } finally {
        await stop();
      }
    },
  );

  describe.each(HOSTS)('%s', (name) => {
    const host = (): Host => {
      if (!running) throw new Error('the hosts did not start');
      return running.host(name);
    };
    const skip = name === 'nginx' && !hasNginx();

    it.skipIf(skip)(
      'sends an ETag with every file and answers If-None-Match naming it (strong, weak, in a list, or *) with a bodiless 304 carrying the policy’s headers',
      async () => {
        const { base } = host();
        for (const path of [FREE, DISCOVERY, '/', '/docs/', '/api/reasoning.php?asset=eth']) {
          const current = await fetch(`${base}${path}`);
          expect(current.status, path).toBe(200);
          const etag = current.headers.get('etag') ?? '';
          expect(etag, `${path}: ETag`).toMatch(/^(W\/)?"[^"]+"$/);
          const opaque = etag.replace(/^W\//, '');
          for (const ifNoneMatch of [etag, opaque, `W/${opaque}`, `"other", ${etag}`, '*']) {
            for (const method of ['GET', 'HEAD']) {
              const what = `${method} ${path} If-None-Match: ${ifNoneMatch}`;
              const answer = await fetch(`${base}${path}`, {
                method,
                headers: { 'If-None-Match': ifNoneMatch },
              });
              expect(answer.status, what).toBe(304);
              expect(await answer.text(), what).toBe('');
              expect(answer.headers.get('etag'), what).toBe(etag);
              // What a cache refreshes its copy with, and the headers every answer carries.
              // A free file's max-age counts down by the second, then turns no-cache (schemas/delivery.ts
              // freeCacheFor): the 304's may be a few seconds less than the 200's; any other hint is the same.
              if (Number.isNaN(lifetimeLeft(current))) {
                expect(answer.headers.get('cache-control'), what).toBe(current.headers.get('cache-control'));
              } else {
                const elapsed = lifetimeLeft(current) - lifetimeLeft(answer);
                expect(elapsed, `${what}: ${answer.headers.get('cache-control')}`).toBeGreaterThanOrEqual(0);
                expect(elapsed, `${what}: ${answer.headers.get('cache-control')}`).toBeLessThanOrEqual(5);
              }
              for (const [field, value] of Object.entries(SITE_HEADERS))
                expect(answer.headers.get(field), `${what}: ${field}`).toBe(value);
            }
          }
          const other = await fetch(`${base}${path}`, { headers: { 'If-None-Match': '"other"' } });
          expect(other.status, path).toBe(200);
          expect(await other.text()).toBe(await current.text());
        }
      },
    );

    it.skipIf(skip)('answers If-Modified-Since with the Last-Modified it sent with a 304', async () => {
      const { base } = host();
      const current = await fetch(`${base}${FREE}`);
      const lastModified = current.headers.get('last-modified');
      // The Worker's static assets carry no modification time: it revalidates by ETag alone.
      if (name !== 'worker') expect(lastModified).toMatch(/ GMT$/);
      if (!lastModified) return;
      const answer = await fetch(`${base}${FREE}`, { headers: { 'If-Modified-Since': lastModified } });
      expect(answer.status).toBe(304);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    });

    it.skipIf(skip)(
      'never answers a paid path 304 or 206, before payment or with it, whatever validators or range it is sent',
      async () => {
        const { base, facilitatorUrl } = host();
        const conditional = {
          'If-None-Match': '*',
          'If-Modified-Since': new Date().toUTCString(),
          Range: 'bytes=0-9',
        };
        const challenge = await fetch(`${base}${ATLAS.path}`, { headers: conditional });
        expect(challenge.status).toBe(402);
        expect(challenge.headers.get('etag')).toBeNull();
        expect(challenge.headers.get('content-range')).toBeNull();
        const { client } = await createDevBuyer(facilitatorUrl);
        const payment = await client.createPaymentPayload(
          decodePaymentRequiredHeader(challenge.headers.get('payment-required') ?? ''),
        );
        const paid = await fetch(`${base}${ATLAS.path}`, {
          headers: { ...conditional, 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payment) },
        });
        expect(paid.status).toBe(200);
        expect(paid.headers.get('content-range')).toBeNull();
        expect(paid.headers.get('cache-control')).toBe('no-store');
        expect(JSON.parse(await paid.text())).toHaveProperty('payment_status', 'settled');
      },
    );

    // A 206's Content-Range counts the bytes of the representation sent: compressing the identity bytes of a range
    // would hand a resuming client a slice it cannot join to the rest (RFC 9110 14.4).
    it.skipIf(skip)(
      'answers a Range request with the whole file or exactly the bytes asked, never a compressed part',
      async () => {
        const { base } = host();
        for (const path of [DISCOVERY, FREE, '/']) {
          const whole = await rawBytes(base, path, 'GET', { 'Accept-Encoding': 'identity' });
          for (const encoding of ['gzip', 'br', 'identity']) {
            const answer = await rawBytes(base, path, 'GET', {
              'Accept-Encoding': encoding,
              Range: 'bytes=0-19',
            });
            const what = `${path} (${encoding})`;
            expect([200, 206], what).toContain(answer.status);
            if (answer.status === 200) continue;
            expect(header(answer, 'content-encoding'), what).toBeUndefined();
            expect(header(answer, 'content-range'), what).toBe(`bytes 0-19/${whole.body.length}`);
            expect(answer.body.equals(whole.body.subarray(0, 20)), what).toBe(true);
          }
        }
      },
    );

    it.skipIf(skip)(
      'says Vary: Accept-Encoding with every answer it compresses (the Worker: with every file answer)',
      async () => {
        const { base } = host();
        for (const path of [DISCOVERY, FREE, '/', '/docs/nothing/']) {
          const answer = await raw(base, path, 'GET', { 'Accept-Encoding': 'br, gzip' });
          const vary = header(answer, 'vary') ?? '';
          if (header(answer, 'content-encoding') || name === 'worker')
            expect(vary, `${path} (${header(answer, 'content-encoding') ?? 'identity'})`).toMatch(
              /accept-encoding/i,
            );
        }
        // The Worker's runtime does compress: the rule above is not idle there.
        if (name === 'worker')
          expect(
            header(await raw(base, DISCOVERY, 'GET', { 'Accept-Encoding': 'br' }), 'content-encoding'),
          ).toBe('br');
        const etag = (await fetch(`${base}${DISCOVERY}`)).headers.get('etag') ?? '';
        const revalidated = await raw(base, DISCOVERY, 'GET', {
          'If-None-Match': etag,
          'Accept-Encoding': 'br',
        });
        expect(revalidated.status).toBe(304);
        if (name === 'worker') expect(header(revalidated, 'vary')).toMatch(/accept-encoding/i);
      },
    );

    // The Worker reads a file its runtime sends uncompressed to count it: workerd names a length only for a body whose
    // length it knows, and never for a HEAD. `wrangler dev` passes the pages through its live-reload rewriter, which
    // sends them chunked: there the page's GET names no length (in production it does); its HEAD still does.
    it.skipIf(skip)('sends with HEAD the Content-Length it sends with GET', async () => {
      const { base } = host();
      for (const path of [FREE, '/', '/docs/nothing/']) {
        const identity = { 'Accept-Encoding': 'identity' };
        const get = await raw(base, path, 'GET', identity);
        const head = await raw(base, path, 'HEAD', identity);
        expect(head.status, path).toBe(get.status);
        const length = header(head, 'content-length');
        expect(length, `HEAD ${path}`).toBe(String(Buffer.byteLength(get.body)));
        const rewritten = name === 'worker' && header(get, 'content-type')?.startsWith('text/html');
        if (rewritten && header(get, 'transfer-encoding') === 'chunked') continue;
        expect(header(get, 'content-length'), `GET ${path}`).toBe(length);
      }
    });

    it.skipIf(skip)(
      'answers a free path spelled with doubled slashes or percent-encoded unreserved characters as the path itself',
      async () => {
        const { base } = host();
        const spellings: Record<string, string[]> = {
          [FREE]: [
            '//api/market-regime.php',
            '/api//market-regime.php',
            '/api/market%2Dregime.php',
            '/%61pi/market-regime.php',
          ],
          '/api/reasoning.php?asset=eth': ['//api/reasoning.php?asset=eth', '/api/reasoning%2Ephp?asset=eth'],
          '/docs/': ['//docs/', '/docs//', '/%64ocs/'],
          '/api/nothing.php': ['//api/nothing.php'],
          '/docs/nothing/': ['//docs/nothing/'],
        };
        for (const [canonical, others] of Object.entries(spellings)) {
          const first = await raw(base, canonical);
          for (const path of others) expectSameAnswer(await raw(base, path), first, path);
        }
        const redirect = await raw(base, '//x402-buyer?from=test');
        expect(redirect.status).toBe(301);
        const location = new URL(header(redirect, 'location') ?? '', base);
        expect(`${location.host}${location.pathname}${location.search}`).toBe(
          `${new URL(base).host}/x402-buyer/?from=test`,
        );
      },
    );

    it.skipIf(skip)(
      'answers a paid path spelled another way with the same 402, naming the canonical URL, and sells it',
      async () => {
        const { base, facilitatorUrl } = host();
        for (const path of [
          '//api/x402-atlas.php',
          '/api//x402-atlas.php',
          '/api/x402%2Datlas.php',
          '/%61pi/x402-atlas.php',
        ]) {
          const answer = await raw(base, path);
          expect(answer.status, path).toBe(402);
          expect(header(answer, 'content-type'), path).toMatch(/^application\/json/);
          expect(header(answer, 'cache-control'), path).toBe('no-store');
          const required = decodePaymentRequiredHeader(header(answer, 'payment-required') ?? '');
          expect(required.resource?.url, path).toBe(`${base}${ATLAS.path}`);
        }
        const bought = await buyWithDevWallet({ url: `${base}//api/x402-atlas.php`, facilitatorUrl });
        expect(bought.status).toBe(200);
        expect(bought.transaction).toMatch(/^[A-Z2-7]{52}$/);
      },
    );

    it.skipIf(skip)(
      'hands a POST at a worker path spelled another way on with its body: a wallet-signed vote counts once',
      async () => {
        const { base } = host();
        const post = (path: string, body: unknown) =>
          raw(base, path, 'POST', { 'Content-Type': 'application/json' }, JSON.stringify(body));
        if (name === 'nginx') {
          // This stack's worker keeps no votes: both spellings reach it and get its same answer.
          const [plain, doubled] = [await post('/arena/vote', {}), await post('//arena/vote', {})];
          expect(doubled.status).toBe(plain.status);
          expect(doubled.body).toBe(plain.body);
          return;
        }
        const vote = signedVoteBody({ site: base, round: nextRound() });
        expect((await post('//arena/vote', vote)).status).toBe(201);
        const replay = await post('/arena/vote', vote); // the same store: already counted
        expect(replay.status).toBeGreaterThanOrEqual(400);
        expect(replay.status).toBeLessThan(500);
      },
    );

    it.skipIf(skip)(
      'lets a page on another origin read the answer to its vote, as the preflight promised',
      async () => {
        const { base } = host();
        const origin = { Origin: 'https://voter.example' };
        const preflight = await raw(base, '/arena/vote', 'OPTIONS', {
          ...origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type',
        });
        expect(header(preflight, 'access-control-allow-origin')).toBe('*');
        const refused = await raw(
          base,
          '/arena/vote',
          'POST',
          { ...origin, 'Content-Type': 'application/json' },
          '{}',
        );
        expect(refused.status).toBeGreaterThanOrEqual(400);
        expect(header(refused, 'access-control-allow-origin')).toBe('*');
      },
    );

    it.skipIf(skip)(
      'answers /mcp with the policy’s CORS: its preflight, and Mcp-Session-Id readable on the POST’s own answer',
      async () => {
        const { base } = host();
        const origin = { Origin: 'https://agent.example' };
        const preflight = await fetch(`${base}${MCP_PATH}`, {
          method: 'OPTIONS',
          headers: {
            ...origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers':
              'content-type,mcp-protocol-version,mcp-session-id,last-event-id',
          },
        });
        expect(preflight.status).toBe(204);
        const policy = preflightAnswer(MCP_PATH).headers;
        for (const field of [
          'access-control-allow-origin',
          'access-control-allow-methods',
          'access-control-allow-headers',
          'access-control-expose-headers',
          'access-control-max-age',
        ])
          expect(preflight.headers.get(field), field).toBe(policy.get(field));
        // This stack's nginx fronts a paywall worker without MCP (`emi paywall` serves it in production).
        if (name === 'nginx') return;
        const posted = await fetch(`${base}${MCP_PATH}`, {
          ...MCP_INITIALIZE,
          headers: { ...(MCP_INITIALIZE.headers as Record<string, string>), ...origin },
        });
        expect(posted.status).toBe(200);
        await posted.body?.cancel();
        expect(posted.headers.get('access-control-allow-origin')).toBe('*');
        expect(posted.headers.get('access-control-expose-headers')).toBe(EXPOSED_HEADERS);
      },
    );

    it.skipIf(skip)('still refuses every way out of the site, plain or percent-encoded', async () => {
      const { base } = host();
      for (const path of [
        '/../secret.txt',
        '/%2e%2e/secret.txt',
        '/%2E%2E/secret.txt',
        '/..%2fsecret.txt',
        '//..//secret.txt',
        '/api/%2e%2e/%2e%2e/secret.txt',
        '/.%2e/secret.txt',
        '/../../../../etc/passwd',
        '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      ]) {
        const answer = await raw(base, path);
        expect(answer.status, path).toBeGreaterThanOrEqual(400);
        expect(answer.body, path).not.toContain(SECRET);
        expect(answer.body, path).not.toContain('root:');
      }
    });
  });
});
