// The buyer page's JavaScript from Debian's nginx with the rendered recipe (deploy/nginx) under Debian's own
// nginx.conf, which says `gzip on` and, without gzip_types, compresses HTML alone: app.js and its chunks (half a
// megabyte before any wallet is chosen) must go out compressed too, and every chunk the bundle references be served.
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_PATHS, bundleBuyerPage, LICENSE_PATHS } from '../generator/buyer/bundle.ts';
import { hasNginx } from '../deploy/nginx/run.ts';
import { freePort } from './free-port.ts';
import { rawBytes, startNginxSite } from './helpers/hosts.ts';
import type { StartedHost } from './helpers/hosts.ts';

/** A GET that asks for gzip and keeps the body as sent (fetch would decode it). */
const getGzip = (base: string, path: string) => rawBytes(base, path, 'GET', { 'Accept-Encoding': 'gzip' });

describe.skipIf(!hasNginx())('the buyer page from nginx (Debian’s gzip on)', { timeout: 120_000 }, () => {
  let root = '';
  let site = '';
  let base = '';
  let nginx: StartedHost | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-buyer-nginx-'));
    await chmod(root, 0o755); // nginx's workers are not root when its master is
    site = join(root, 'dist');
    await mkdir(join(site, 'x402-buyer'), { recursive: true });
    const buyer = join(import.meta.dirname, '..', 'site', 'x402-buyer');
    for (const file of ['index.html', 'buyer.css'])
      await cp(join(buyer, file), join(site, 'x402-buyer', file));
    await bundleBuyerPage({ outFile: join(site, BUNDLE_PATHS.buyer), minify: true });
    // Debian's /etc/nginx/nginx.conf, whose http block the recipe goes in, says `gzip on` and no gzip_types.
    nginx = await startNginxSite({
      dir: join(root, 'nginx'),
      siteRoot: site,
      port: await freePort(),
      paywallUpstream: '127.0.0.1:9',
      before: 'gzip on;',
      probePath: '/x402-buyer/',
    });
    base = nginx.base;
  });

  afterAll(async () => {
    await nginx?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('sends app.js gzip-compressed, as JavaScript, with Vary: Accept-Encoding', async () => {
    const answer = await getGzip(base, '/x402-buyer/app.js');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/javascript/);
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.headers.vary).toMatch(/accept-encoding/i);
    const sent = await readFile(join(site, BUNDLE_PATHS.buyer));
    expect(gunzipSync(answer.body).equals(sent)).toBe(true);
    expect(answer.body.length).toBeLessThan(sent.length / 2);
  });

  it('serves every chunk app.js imports, compressed, and the stylesheet too', async () => {
    const chunks = await readdir(join(site, BUNDLE_PATHS.buyerChunks));
    const app = await readFile(join(site, BUNDLE_PATHS.buyer), 'utf8');
    // The page's own imports resolve into the chunk folder (relative to /x402-buyer/app.js).
    const imported = [...app.matchAll(/"\.\.\/(assets\/x402-buyer\/[^"]+\.js)"/g)].map(
      (match) => match[1] ?? '',
    );
    expect(imported.length).toBeGreaterThan(0);
    for (const path of new Set([
      ...imported,
      ...chunks.map((chunk) => `${BUNDLE_PATHS.buyerChunks}/${chunk}`),
    ])) {
      const answer = await getGzip(base, `/${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-type'], path).toMatch(/javascript/);
      if (answer.body.length > 0 && (await readFile(join(site, path))).length > 1024)
        expect(answer.headers['content-encoding'], path).toBe('gzip');
    }
    const css = await getGzip(base, '/x402-buyer/buyer.css');
    expect(css.headers['content-encoding']).toBe('gzip');
  });

  it('sends the page’s third-party licences as plain text, compressed (about 60 KB of licence texts)', async () => {
    const answer = await getGzip(base, `/${LICENSE_PATHS.buyer}`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(answer.body).equals(await readFile(join(site, LICENSE_PATHS.buyer)))).toBe(true);
  });
});
