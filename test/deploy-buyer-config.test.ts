// The buyer page's /x402-buyer/config.json on a deployed site: the build writes it from the operator's settings (the
// EMI_PAYTO and EMI_NETWORK the paywall reads) or copies the operator's own site/x402-buyer/config.json, checked,
// and writes none without a payee (the page then says it has no payment configuration). Served by nginx from the
// built dist/, the page in chromium finds it.
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bundleBuyerPage } from '../generator/buyer/bundle.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';
import { WarmSiteBuilder } from '../generator/site/warm-build.ts';
import { parseBuyerConfig } from '../site/x402-buyer/src/config.ts';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { hasNginx, startNginx } from '../deploy/nginx/run.ts';
import { FIRST_RUN, TEST_BASE_URL, copyTemplates } from './site-fixture.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { freePort } from './free-port.ts';

const MAINNET = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';
const TESTNET = 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe';
const VARIABLES = ['EMI_PAYTO', 'EMI_NETWORK'] as const;

describe('the buyer page’s config.json on a built site', { timeout: 120_000 }, () => {
  let root: string;
  let siteDir: string;
  let builds = 0;
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-buyer-config-'));
    await chmod(root, 0o755); // nginx's workers are not root when its master is
    siteDir = join(root, 'site');
    await mkdir(join(siteDir, 'x402-buyer'), { recursive: true });
    await copyTemplates(siteDir);
    const buyer = join(import.meta.dirname, '..', 'site', 'x402-buyer');
    for (const file of ['index.html', 'buyer.css'])
      await cp(join(buyer, file), join(siteDir, 'x402-buyer', file));
    await bundleBuyerPage({ outFile: join(siteDir, 'x402-buyer', 'app.js'), minify: true });
    const report = await runPipeline({
      outDir: siteDir,
      paidDir: join(root, 'paid'),
      stateDir: join(root, 'state'),
      source: 'sim',
      seed: 7,
      asOf: FIRST_RUN,
    });
    expect(report.status).toBe('ok');
  });
  afterEach(async () => {
    for (const name of VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    await rm(join(siteDir, 'x402-buyer', 'config.json'), { force: true });
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Builds the site with these variables (undefined: unset) into a dist/ of its own. */
  async function buildWith(env: Partial<Record<(typeof VARIABLES)[number], string>>): Promise<string> {
    for (const name of VARIABLES) {
      if (env[name] === undefined) delete process.env[name];
      else process.env[name] = env[name];
    }
    const outDir = join(root, `dist-${(builds += 1)}`);
    await buildSite({ siteDir, outDir, baseUrl: TEST_BASE_URL });
    return outDir;
  }
  const configOf = async (dist: string) =>
    JSON.parse(await readFile(join(dist, 'x402-buyer', 'config.json'), 'utf8')) as Record<string, unknown>;

  it('writes it from EMI_PAYTO (and EMI_NETWORK), as the paywall reads them: a config the page accepts', async () => {
    const payTo = algosdk.generateAccount().addr.toString();
    const dist = await buildWith({ EMI_PAYTO: payTo });
    const config = await configOf(dist);
    expect(config).toEqual({ merchantAddress: payTo, network: MAINNET, facilitatorMode: 'production' });
    const page = `${TEST_BASE_URL}x402-buyer/`;
    expect(parseBuyerConfig(config, `${page}config.json`, `${page}report`).ok).toBe(true);

    // The long spelling of a network is written in the short one the paywall's 402 names.
    const testnet = await buildWith({
      EMI_PAYTO: payTo,
      EMI_NETWORK: 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=',
    });
    expect((await configOf(testnet)).network).toBe(TESTNET);
  });

  it('writes none without a payee: the page goes on saying the site has no payment configuration', async () => {
    const dist = await buildWith({});
    await expect(stat(join(dist, 'x402-buyer', 'config.json'))).rejects.toThrow(/ENOENT/);
    expect((await stat(join(dist, 'x402-buyer', 'index.html'))).isFile()).toBe(true);
  });

  it('a bad payee or network stops the build, naming the variable', async () => {
    await expect(buildWith({ EMI_PAYTO: 'NOT-AN-ADDRESS' })).rejects.toThrow(
      /EMI_PAYTO is not a valid Algorand address: "NOT-AN-ADDRESS"/,
    );
    const payTo = algosdk.generateAccount().addr.toString();
    await expect(buildWith({ EMI_PAYTO: payTo, EMI_NETWORK: 'eip155:8453' })).rejects.toThrow(
      /EMI_NETWORK is not a supported network/,
    );
  });

  it('copies the operator’s own site/x402-buyer/config.json, checked, and refuses one that pays someone else', async () => {
    const payTo = algosdk.generateAccount().addr.toString();
    const own = {
      merchantAddress: payTo,
      network: MAINNET,
      facilitatorMode: 'production',
      algodUrl: 'https://algod.example.org',
    };
    await writeFile(join(siteDir, 'x402-buyer', 'config.json'), JSON.stringify(own, null, 2));
    expect(await configOf(await buildWith({}))).toEqual(own);
    expect(await configOf(await buildWith({ EMI_PAYTO: payTo }))).toEqual(own);

    const other = algosdk.generateAccount().addr.toString();
    await expect(buildWith({ EMI_PAYTO: other })).rejects.toThrow(
      new RegExp(`x402-buyer/config.json pays ${payTo}, but EMI_PAYTO is ${other}`),
    );
    await writeFile(
      join(siteDir, 'x402-buyer', 'config.json'),
      JSON.stringify({ ...own, merchantAddress: 'X' }),
    );
    await expect(buildWith({})).rejects.toThrow(/x402-buyer\/config.json.*merchantAddress/);
    // Of an address's form, its checksum wrong: the page finds out only at the first wallet, the build at once.
    const badChecksum = `${payTo.slice(0, 10)}${payTo[10] === 'A' ? 'B' : 'A'}${payTo.slice(11)}`;
    await writeFile(
      join(siteDir, 'x402-buyer', 'config.json'),
      JSON.stringify({ ...own, merchantAddress: badChecksum }),
    );
    await expect(buildWith({})).rejects.toThrow(/x402-buyer\/config.json.*merchantAddress/);
    await writeFile(join(siteDir, 'x402-buyer', 'config.json'), '{ not json');
    await expect(buildWith({})).rejects.toThrow(/x402-buyer\/config.json is not JSON/);
  });

  it('the warm build of `emi schedule` writes the same file, build after build', async () => {
    const payTo = algosdk.generateAccount().addr.toString();
    process.env.EMI_PAYTO = payTo;
    const outDir = join(root, 'dist-warm');
    const warm = new WarmSiteBuilder({ siteDir, publishedDir: siteDir, outDir, baseUrl: TEST_BASE_URL });
    await warm.build();
    await warm.build();
    expect(await configOf(outDir)).toEqual({
      merchantAddress: payTo,
      network: MAINNET,
      facilitatorMode: 'production',
    });
  });

  it.skipIf(!hasNginx() || !hasChromium)(
    'the page served by nginx from the built dist/ finds it, and without it says so',
    async () => {
      const payTo = algosdk.generateAccount().addr.toString();
      const configured = await buildWith({ EMI_PAYTO: payTo });
      const unconfigured = await buildWith({});
      const browser = await launchChromium();
      const stops: Array<() => Promise<void>> = [];
      try {
        const statusOf = async (dist: string) => {
          const port = await freePort();
          const site = await renderNginxSite({
            root: dist,
            listen: `127.0.0.1:${port}`,
            paywallUpstream: `127.0.0.1:${await freePort()}`,
          });
          const nginx = await startNginx(join(root, `nginx-${port}`), site, `http://127.0.0.1:${port}/`);
          stops.push(() => nginx.stop());
          const context = await browser.newContext();
          const page = await context.newPage();
          // Nothing leaves loopback (the page's wallets and fonts would).
          await context.route('**/*', (route) =>
            route.request().url().startsWith(`http://127.0.0.1:${port}/`) ? route.continue() : route.abort(),
          );
          await page.goto(`http://127.0.0.1:${port}/x402-buyer/`);
          await page.waitForSelector('body[data-ready="true"]');
          const text = await page.textContent('#config-status');
          await context.close();
          return text ?? '';
        };
        expect(await statusOf(configured)).toContain(`Payments go only to ${payTo} on Algorand mainnet`);
        expect(await statusOf(unconfigured)).toMatch(/no payment configuration \(config\.json is missing\)/);
      } finally {
        await browser.close();
        for (const stop of stops) await stop();
      }
    },
  );
});
