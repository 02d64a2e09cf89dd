// A publisher's storefront (`/p/<id>/x402-buyer/`) on the real local stack of `emi serve` serves only what its
// branded page loads from it: the page, its config.json and the files the page names relative to itself. The page's
// code is the site's own /x402-buyer/app.js, so the storefront keeps no copy of it (nor of its source map or any
// other file of the built buyer folder): those paths are the JSON 404 of an unknown storefront file.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../generator/local-stack.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { writePaidFixtures } from './paywall-harness.ts';

/** This file's ports: the stack's, then its development facilitator's. */
const PORTS = { first: 19800, last: 19809 };
const STOREFRONT = '/p/acme/x402-buyer/';
/** The site's buyer code, as `emi build` writes it beside the page: the storefront page loads it from there. */
const SITE_APP = 'console.log("site buyer page");\n//# sourceMappingURL=app.js.map\n';

const portIsFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

async function freePortsInRange(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let port = PORTS.first; port <= PORTS.last && ports.length < count; port += 1)
    if (await portIsFree(port)) ports.push(port);
  if (ports.length < count) throw new Error(`no ${count} free ports in ${PORTS.first}-${PORTS.last}`);
  return ports;
}

/** The `src` and `href` values of a page's scripts and stylesheets. */
const loadedUrls = (html: string): string[] =>
  [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1] ?? '')
    .filter((url) => !url.startsWith('data:'));

let dir: string;
let stack: LocalStack;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-storefront-s39-'));
  const dist = join(dir, 'dist');
  const buyer = join(dist, 'x402-buyer');
  await mkdir(buyer, { recursive: true });
  for (const file of ['index.html', 'buyer.css'])
    await copyFile(join('site/x402-buyer', file), join(buyer, file));
  // Everything else a built buyer folder may hold: the code, its source map, an image.
  await writeFile(join(buyer, 'app.js'), SITE_APP);
  await writeFile(join(buyer, 'app.js.map'), '{"version":3,"sources":[],"mappings":""}');
  await writeFile(join(buyer, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  const paid = join(dir, 'paid');
  await mkdir(paid);
  await writePaidFixtures(paid);
  const config = join(dir, 'emi.config.json');
  await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', account())] }));
  const [port, facilitatorPort] = (await freePortsInRange(2)) as [number, number];
  stack = await startLocalStack({
    port,
    host: '127.0.0.1',
    dir: dist,
    paid,
    devFacilitatorPort: facilitatorPort,
    config,
    ledgerFile: join(dir, 'publishers.sqlite'),
    log: () => {},
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the storefront serves only what its page loads', () => {
  it('loads its code from the site’s /x402-buyer/app.js, which the site serves', async () => {
    const html = await (await fetch(`${stack.url}${STOREFRONT}`)).text();
    const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(['/x402-buyer/app.js']);
    const code = await fetch(`${stack.url}/x402-buyer/app.js`);
    expect(code.status).toBe(200);
    expect(await code.text()).toBe(SITE_APP);
  });

  it('answers 200 for the page, its config.json and every file the page loads from its folder', async () => {
    const storefront = `${stack.url}${STOREFRONT}`;
    const html = await (await fetch(storefront)).text();
    const own = loadedUrls(html)
      .map((url) => new URL(url, storefront))
      .filter((url) => url.pathname.startsWith(STOREFRONT));
    expect(own.map((url) => url.pathname)).toEqual([`${STOREFRONT}buyer.css`]);
    for (const url of [...own, new URL('config.json', storefront)]) {
      const response = await fetch(url);
      expect(response.status, url.pathname).toBe(200);
      await response.arrayBuffer();
    }
  });

  it.each(['app.js', 'app.js.map', 'logo.svg'])(
    'does not serve the built buyer folder’s %s under the storefront (JSON 404)',
    async (file) => {
      const response = await fetch(`${stack.url}${STOREFRONT}${file}`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await response.json()) as { error: string }).error).toBe('not_found');
    },
  );
});
