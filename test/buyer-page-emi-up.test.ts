// The buyer page as a person meets it on `emi up` (generate, bundle, build, then the local stack's composition on
// 127.0.0.1) in Debian's chromium: what it downloads before a wallet is chosen, controls that look usable only once
// they work, a 320 px screen at 200 % text, the Pera connect dialog from the keyboard, the proof of payment's explorer
// link, and a file that goes stale between the price check and Pay (nothing charged, said plainly, the signed
// payment dropped).
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HUMAN_REPORT_PATH } from '../generator/buyer/human-report-terms.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { ALGORAND_MAINNET } from '../schemas/paid/terms.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { KEPT_REPORT_KEY } from '../site/x402-buyer/src/kept-report.ts';
import type { KeptReport } from '../site/x402-buyer/src/kept-report.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { startEmiUpSite, type EmiUpSite } from './helpers/emi-up-site.ts';

/**
 * What the page may download before any wallet button is pressed, in bytes as served (uncompressed): its HTML, CSS,
 * config.json, the price check's 402 and its own code (app.js and two small chunks, about 36 KB), 50,823 bytes in
 * all when this was set; 61 KB is that and 20 % to grow. algosdk (about 490 KB minified, 541,688 bytes in all when
 * it came at once) waits for a wallet button or Pay: config.json's payee is checked for its form at load and for
 * its checksum with algosdk then (config.ts). The Pera and Defly SDKs (about 1 MB more) never fit.
 */
const FIRST_LOAD_BUDGET = 61_000;
/** The Pera SDK alone is over 300 KB minified: fetched on the first click of its button, not before. */
const PERA_SDK_MIN_BYTES = 300_000;

describe.skipIf(!hasChromium)('the buyer page on emi up, as a person meets it', { timeout: 120_000 }, () => {
  let site: EmiUpSite;
  let stack: LocalStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const dirs = { site: '', paid: '', state: '', dist: '' };
  const pageErrors: string[] = [];
  const atlasFile = () =>
    join(dirs.paid, PAID_RESOURCES.find((resource) => resource.id === 'atlasHumanReport')!.file);

  beforeAll(async () => {
    site = await startEmiUpSite('emi-buyer-page-', {
      // The page's own sources, as the checkout has them.
      prepare: async (siteDir) => {
        const buyer = join(import.meta.dirname, '..', 'site', 'x402-buyer');
        await mkdir(join(siteDir, 'x402-buyer'), { recursive: true });
        for (const file of ['index.html', 'buyer.css'])
          await cp(join(buyer, file), join(siteDir, 'x402-buyer', file));
      },
    });
    ({ stack } = site);
    Object.assign(dirs, site.dirs);
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    // Nothing leaves the machine: the Pera SDK's calls to its servers are cut, its dialog still opens.
    await context.route('**/*', (route) =>
      route.request().url().startsWith(stack.url) ? route.continue() : route.abort(),
    );
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    pageErrors.length = 0;
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  afterEach(async () => {
    await context.close();
  });

  const pageUrl = () => `${stack.url}/x402-buyer/`;
  const ready = async () => {
    await page.goto(pageUrl());
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#challenge:not([hidden])');
  };

  it('shows its controls disabled, saying it is loading, until app.js has wired them', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/x402-buyer/app.js', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(pageUrl(), { waitUntil: 'commit' });
    await page.waitForSelector('#connect-pera');
    for (const id of ['connect-pera', 'connect-defly', 'check-price'])
      expect(await page.isDisabled(`#${id}`), id).toBe(true);
    expect(await page.textContent('#config-status')).toMatch(/Loading…/);
    await page.click('#connect-pera', { force: true }); // a click now does nothing, and is not lost as an error
    release();
    await page.waitForSelector('body[data-ready="true"]');
    const controls = ['connect-pera', 'connect-defly', 'check-price'];
    for (const id of controls)
      expect(await page.$eval(`#${id}`, (button) => (button as HTMLButtonElement).disabled), id).toBe(false);
    // The first price check starts at once and marks its button busy (aria-disabled) while it runs: once it is
    // over, every control is usable.
    await page.waitForSelector('#check-price[aria-disabled="false"]');
    for (const id of controls) expect(await page.isDisabled(`#${id}`), id).toBe(false);
    expect(await page.textContent('#config-status')).not.toMatch(/Loading/);
    expect(pageErrors).toEqual([]);
  });

  it('downloads what the price check needs, the Pera SDK only on its button', async () => {
    const bodies: Promise<number>[] = [];
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      // A body still coming when the test ends counts for nothing (it is not an error of the page).
      else
        bodies.push(
          response.body().then(
            (body) => body.length,
            () => 0,
          ),
        );
    });
    const loaded = async () => (await Promise.all(bodies)).reduce((sum, bytes) => sum + bytes, 0);
    await ready();
    await page.waitForLoadState('networkidle');
    const firstLoad = await loaded();
    console.info(`buyer page: ${firstLoad} bytes before any wallet button`);
    expect(firstLoad).toBeLessThan(FIRST_LOAD_BUDGET);

    await page.click('#connect-pera');
    await page.waitForSelector('#pera-wallet-connect-modal-wrapper', { state: 'attached' });
    // Playwright reports responses a moment after the page has used them: wait for them to be counted.
    await expect.poll(async () => (await loaded()) - firstLoad).toBeGreaterThan(PERA_SDK_MIN_BYTES);
    // Every chunk the build published is served (the 402 of the price check is the only answer above 399).
    expect(failed.filter((line) => !line.includes(HUMAN_REPORT_PATH))).toEqual([]);
  });

  /** The element that has focus, looked for through open shadow roots (the Pera dialog is made of them). */
  const deepFocus = () =>
    page.evaluate(() => {
      let element = document.activeElement;
      while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
      return { id: element?.id ?? '', label: element?.getAttribute('aria-label') ?? '' };
    });

  it('takes a keyboard user into the Pera dialog, keeps the page behind it inert, and closes it on Escape', async () => {
    await ready();
    await page.focus('#connect-pera');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#pera-wallet-connect-modal-wrapper', { state: 'attached' });
    await expect.poll(deepFocus).toEqual({
      id: 'pera-wallet-modal-header-close-button',
      label: 'Close the Pera Wallet connection dialog',
    });
    expect(await page.evaluate(() => document.querySelector('main')?.inert)).toBe(true);
    expect(await page.getAttribute('#pera-wallet-connect-modal-wrapper', 'aria-modal')).toBe('true');

    // Escape presses the dialog's close button. (Offline the SDK never finishes setting up its session, so it
    // never wires that button: whether it then closes is the SDK's part, checked here only up to the press.)
    await page.evaluate(() => {
      const close = document
        .querySelector('pera-wallet-connect-modal')
        ?.shadowRoot?.querySelector('pera-wallet-modal-header')
        ?.shadowRoot?.getElementById('pera-wallet-modal-header-close-button');
      close?.addEventListener('click', () => (document.body.dataset.closePressed = 'true'));
    });
    await page.keyboard.press('Escape');
    expect(await page.getAttribute('body', 'data-close-pressed')).toBe('true');

    // The SDK closes its dialog by removing it (what its close button does): the page is usable again, and focus,
    // lost with the dialog, is back on the button that opened it.
    await page.evaluate(() => document.getElementById('pera-wallet-connect-modal-wrapper')?.remove());
    await expect.poll(() => page.evaluate(() => document.querySelector('main')?.inert)).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('connect-pera');
    expect(pageErrors).toEqual([]);
  });

  it('fits a 320 x 568 screen at 200 % text without scrolling sideways', async () => {
    await page.setViewportSize({ width: 320, height: 568 });
    await ready();
    await page.evaluate(() => {
      document.documentElement.style.fontSize = '200%';
    });
    await page.click('#create-dev-wallet');
    await page.waitForSelector('#wallet-status:not([hidden])');
    await expectNoSidewaysScroll('before paying');
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    await expectNoSidewaysScroll('with the report');
  });

  async function expectNoSidewaysScroll(when: string): Promise<void> {
    const overflow = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      // Elements reaching past the screen, and those whose own content (text, ::before) spills out of them; not
      // what a scroll region of its own holds (the per-asset table scrolls inside its frame, by design).
      const scrolled = (element: HTMLElement) => {
        for (let up = element.parentElement; up; up = up.parentElement)
          if (getComputedStyle(up).overflowX !== 'visible') return true;
        return false;
      };
      const beyond = [...document.querySelectorAll<HTMLElement>('body *')]
        .filter(
          (element) =>
            !scrolled(element) &&
            (element.getBoundingClientRect().right > width + 0.5 ||
              (getComputedStyle(element).overflowX === 'visible' &&
                element.scrollWidth > element.clientWidth + 1)),
        )
        .map((element) => `${element.tagName.toLowerCase()}#${element.id}.${element.className}`);
      return { scrollWidth: document.documentElement.scrollWidth, width, beyond };
    });
    expect(overflow.beyond, when).toEqual([]);
    expect(overflow.scrollWidth, when).toBeLessThanOrEqual(overflow.width);
  }

  it('links the proof of a mainnet payment kept in the tab to allo.info, and a development one to nothing', async () => {
    const txId = '4R5VV7FJF5ZZQPWANIASBL77RBFALGW4WZM32WTTIL3JFHPHXXKA';
    const kept = (development: boolean): KeptReport => ({
      reportUrl: `${stack.url}${HUMAN_REPORT_PATH}`,
      proof: { txId, network: ALGORAND_MAINNET, amountAtomic: '100000', payTo: 'PAYEE', development },
      report: { title: 'Atlas human report' },
      rawText: '{}',
    });
    const explorer = page.locator('#proof-container dd').last();
    for (const development of [false, true]) {
      await page.goto(pageUrl());
      await page.evaluate(([key, value]) => sessionStorage.setItem(key, value), [
        KEPT_REPORT_KEY,
        JSON.stringify(kept(development)),
      ] as const);
      await page.reload();
      await page.waitForSelector('#result:not([hidden])');
      expect(await page.textContent('#tx-id')).toBe(txId);
      if (development) {
        expect(await explorer.textContent()).toBe(
          'None: this transaction exists only on the local development ledger.',
        );
        expect(await page.locator('#explorer-link').count()).toBe(0);
      } else {
        const link = page.locator('#explorer-link');
        expect(await link.getAttribute('href')).toBe(`https://allo.info/tx/${txId}`);
        expect(await link.getAttribute('target')).toBe('_blank');
        expect(await link.getAttribute('rel')).toContain('noopener');
        expect(await link.textContent()).toBe('View on allo.info');
      }
    }
    expect(pageErrors).toEqual([]);
  });

  it('words an HTML error page from a proxy in between by its status, never as raw markup', async () => {
    await ready();
    await page.click('#create-dev-wallet');
    await page.waitForSelector('#wallet-status:not([hidden])');
    // A proxy between the buyer and the site (not the paywall) answers the payment with its own HTML page.
    await page.route(`**${HUMAN_REPORT_PATH}`, (route) =>
      route.request().headers()['payment-signature']
        ? route.fulfill({
            status: 502,
            contentType: 'text/html',
            body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>',
          })
        : route.continue(),
    );
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    const message = (await page.textContent('#problem-message')) ?? '';
    expect(message).not.toMatch(/<|Bad Gateway/);
    expect(message).toMatch(/\(HTTP 502\)\. Your signed payment is kept\./);
    // The outcome is unknown: the same signed payment is kept and offered again, with its transaction id.
    expect(await page.textContent('#retry')).toBe('Retry (sends the same signed payment)');
    expect(await page.textContent('#problem-tx')).toMatch(/Signed transaction id: [A-Z2-7]{52}/);
  });

  // Last: it leaves the paid file stale.
  it('says nothing was charged when the file went stale after the price check, and drops the signed payment', async () => {
    await ready();
    await page.click('#create-dev-wallet');
    await page.waitForSelector('#wallet-status:not([hidden])');

    // The generator stops: the file on sale is now three hours old (the paywall sells 180 s old at most).
    const file = JSON.parse(await readFile(atlasFile(), 'utf8')) as { updated: string };
    file.updated = new Date(Date.now() - 3 * 3600_000).toISOString();
    await writeFile(atlasFile(), JSON.stringify(file));
    await expect
      .poll(async () => (await fetch(`${stack.url}${HUMAN_REPORT_PATH}`)).status, { timeout: 10_000 })
      .toBe(503);

    const answers: { status: number; body: { error?: string; transaction?: unknown } }[] = [];
    page.on('response', async (response) => {
      if (response.url().endsWith(HUMAN_REPORT_PATH) && response.request().headers()['payment-signature'])
        answers.push({ status: response.status(), body: await response.json().catch(() => ({})) });
    });
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    await expect
      .poll(() => answers)
      .toEqual([{ status: 503, body: expect.objectContaining({ error: 'data_stale', transaction: null }) }]);

    expect(await page.getAttribute('#problem', 'data-kind')).toBe('not-for-sale');
    const message = (await page.textContent('#problem-message')) ?? '';
    expect(message).toMatch(/^Nothing was charged/);
    expect(message).toMatch(/generated \d+ s ago/); // the server's reason
    expect(message).not.toMatch(/unavailable|is kept/);
    expect(await page.textContent('#retry')).toBe('Check the price again');
    expect(await page.textContent('#problem-tx')).toBe(''); // no transaction to look up, nothing to copy
    expect(await page.isHidden('#confirm')).toBe(true); // no Pay for an offer that is gone
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0); // the signed payment is not kept

    // A reload offers no resend of it either.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.textContent('#retry')).toBe('Check the price again');
    expect(pageErrors).toEqual([]);
  });
});
