// `emi paywall --site dist`, the production Node worker the nginx and Netlify recipes send `/p/*` to, serves the
// publishers' storefronts from the built buyer page as `emi serve` does (it answered 404 for every storefront).
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePaidFixtures } from './paywall-harness.ts';
import { startPaywallCli } from './ops-cli.ts';
import { account, publisherEntry } from './publishers-harness.ts';

const ACME_PAYTO = account();

let root: string;
let url: string;
let stop: () => Promise<unknown> = async () => undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-paywall-storefront-'));
  const dist = join(root, 'dist');
  await mkdir(join(dist, 'x402-buyer'), { recursive: true });
  for (const file of ['index.html', 'buyer.css']) {
    await copyFile(join('site/x402-buyer', file), join(dist, 'x402-buyer', file));
  }
  await writeFile(join(dist, 'x402-buyer', 'app.js'), 'console.log("buyer page");\n');
  await mkdir(join(root, 'paid'));
  await writePaidFixtures(join(root, 'paid'));
  const config = join(root, 'emi.config.json');
  await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', ACME_PAYTO)] }));
  const paywall = await startPaywallCli(root, ['--paid', 'paid', '--site', 'dist'], {
    EMI_CONFIG: config,
    EMI_STATE_DIR: join(root, 'var'),
  });
  stop = paywall.close;
  url = paywall.base;
}, 60_000);

afterAll(async () => {
  await stop();
  await rm(root, { recursive: true, force: true });
});

describe('emi paywall --site: the publishers’ storefronts', () => {
  it('serves /p/<id>/x402-buyer/ in the publisher’s brand, with its config naming the publisher’s payee', async () => {
    const page = await fetch(`${url}/p/acme/x402-buyer/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('acme Research');
    const config = await fetch(`${url}/p/acme/x402-buyer/config.json`);
    expect(config.status).toBe(200);
    expect(JSON.stringify(await config.json())).toContain(ACME_PAYTO);
  });

  it('answers an unknown storefront with a JSON 404', async () => {
    const response = await fetch(`${url}/p/nobody/x402-buyer/`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
