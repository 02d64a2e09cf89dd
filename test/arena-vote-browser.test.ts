// The arena page in chromium on a phone-sized screen, served by the local stack (`emi serve`'s composition) on
// 127.0.0.1: a visitor connects a wallet (the local stack's throwaway key: Pera and Defly need their phone apps),
// votes for the asset's next round, sees the vote in "your votes", and the next generator run imports it as a
// human vote. The wallet code is fetched only on the first click.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleSitePrograms } from '../generator/buyer/bundle.ts';
import { startLocalStack, type LocalStack } from '../generator/local-stack.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';
import { allVotesTally } from '../generator/state/repo.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { freePort } from './free-port.ts';
import { copyTemplates } from './site-fixture.ts';

describe.skipIf(!hasChromium)('arena page: connect a wallet and vote', () => {
  let root = '';
  let stack: LocalStack;
  let browser: Browser;
  const dirs = { site: '', paid: '', state: '', dist: '' };
  const generate = async () => {
    const report = await runPipeline({
      outDir: dirs.site,
      paidDir: dirs.paid,
      stateDir: dirs.state,
      source: 'sim',
      seed: 7,
      asOf: Date.now(),
    });
    expect(report.status).not.toBe('failed');
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-arena-page-'));
    Object.assign(dirs, {
      site: join(root, 'site'),
      paid: join(root, 'paid'),
      state: join(root, 'state'),
      dist: join(root, 'dist'),
    });
    await mkdir(dirs.site, { recursive: true });
    await copyTemplates(dirs.site);
    await generate();
    await bundleSitePrograms(dirs.site);
    const port = await freePort();
    // The page signs for the site it was built for; the vote endpoint takes votes for its own origin.
    const origin = `http://127.0.0.1:${port}`;
    await buildSite({ siteDir: dirs.site, outDir: dirs.dist, baseUrl: `${origin}/`, quiet: true });
    stack = await startLocalStack({
      port,
      host: '127.0.0.1',
      dir: dirs.dist,
      paid: dirs.paid,
      devFacilitatorPort: 0,
      ledgerFile: join(root, 'publishers.sqlite'),
      voteStorePath: join(dirs.state, 'arena-votes.sqlite'),
      log: () => {},
    });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('a vote signed in the page is accepted, listed, refused a second time, and imported by the next run', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const scriptBytes: Promise<number>[] = [];
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scriptBytes.push(r.body().then((b) => b.length));
    });
    const loaded = async () => (await Promise.all(scriptBytes)).reduce((a, b) => a + b, 0);
    await page.goto(`${stack.url}/docs/arena-rules/`);
    await expect.poll(() => page.textContent('#arena-message')).toContain('asset:BTC');
    // A few kilobytes before a click; algosdk and the wallet SDKs (hundreds of kilobytes) only after one.
    expect(await loaded()).toBeLessThan(16_384);
    expect(await page.isDisabled('#arena-sign')).toBe(true);

    await page.click('#arena-connect-local');
    await expect
      .poll(() => page.textContent('#arena-wallet'))
      .toMatch(/^Connected: Throwaway key.*, [A-Z2-7]{58}$/);
    expect(await loaded()).toBeGreaterThan(100_000);
    await page.selectOption('#arena-asset', 'ETH');
    await page.selectOption('#arena-prediction', 'BEARISH');
    const text = (await page.textContent('#arena-message')) ?? '';
    expect(text).toMatch(
      /^emi-arena-vote\/v1\nsite:http:\/\/127\.0\.0\.1:\d+\nasset:ETH\nprediction:BEARISH\nround:ETH-\d{8}T\d\dZ\nnonce:/,
    );
    const round = /round:(\S+)/.exec(text)![1]!;

    await page.click('#arena-sign');
    await expect.poll(() => page.textContent('#arena-result')).toContain(`Vote received for ${round}`);
    // The page shows the answer, then fetches "your votes" again.
    await expect.poll(() => page.textContent('#arena-history tbody')).toContain(`${round}BEARISH`);

    // A second vote by the same wallet in the same round is refused by the endpoint, and said so.
    await page.click('#arena-sign');
    await expect.poll(() => page.textContent('#arena-result')).toMatch(/^Refused \(already_voted\)/);

    // The page has no horizontal overflow at phone width with the form filled in.
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);

    await generate();
    const store = openArenaStore(join(dirs.state, 'arena.sqlite'));
    try {
      expect(allVotesTally(store.db).human).toBe(1);
    } finally {
      store.close();
    }
    await page.close();
  });
});
