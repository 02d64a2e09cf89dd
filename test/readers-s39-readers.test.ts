// What a reader met on `emi up` in Debian's chromium (an accessibility audit), each on the real stack: a storefront
// priced above 1 USDC bought with the development wallet and with the real `emi buy`; the Pera connect dialog,
// offline (its relay unreachable), closed from the keyboard and by its close button on the buyer page and the arena
// vote form; the buyer page's focus ring against what surrounds it; both pages without JavaScript; and the bought
// report's "Updated" time written as every other time on the page.
import { execFile } from 'node:child_process';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HUMAN_REPORT_PATH } from '../generator/buyer/human-report-terms.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { BUY_EXIT_CODES } from '../paywall-worker/buy-command.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { EMI } from './ops-cli.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { freePort } from './free-port.ts';
import { startEmiUpSite } from './helpers/emi-up-site.ts';
import type { EmiUpSite } from './helpers/emi-up-site.ts';

/** A storefront price above the 1 test USDC the development wallet used to be given, with every decimal used. */
const DEAR_PRICE = '1.234567';
const DEAR_ATOMIC = '1234567';
const STOREFRONT = '/p/acme/x402-buyer/';
const STOREFRONT_REPORT = `/p/acme${HUMAN_REPORT_PATH}`;
/** WCAG 1.4.11: a focus indicator against the colours next to it. */
const MIN_NON_TEXT_CONTRAST = 3;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real `emi` (build/ through bin/emi.js), without this machine's EMI_* variables. */
const emi = (args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')));
    execFile(process.execPath, [EMI, ...args], { timeout: 90_000, env }, (error, stdout, stderr) => {
      const code = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

describe.skipIf(!hasChromium)('readers on emi up (s39)', { timeout: 120_000 }, () => {
  let site: EmiUpSite;
  let stack: LocalStack;
  let facilitatorUrl = '';
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const acmePayTo = account();
  /** A generator run into the site's folders: fresh paid files (the paywall sells them 120 s old at most). */
  const generate = () => site.generate();

  beforeAll(async () => {
    // As `emi up` does it, with the buyer page's own files and a publisher's storefront priced above 1 USDC.
    const facilitatorPort = await freePort();
    facilitatorUrl = `http://127.0.0.1:${facilitatorPort}`;
    const config = (siteDir: string) => join(dirname(siteDir), 'emi.config.json');
    site = await startEmiUpSite('emi-readers-s39-', {
      prepare: async (siteDir) => {
        const buyer = join(import.meta.dirname, '..', 'site', 'x402-buyer');
        await mkdir(join(siteDir, 'x402-buyer'), { recursive: true });
        for (const file of ['index.html', 'buyer.css'])
          await cp(join(buyer, file), join(siteDir, 'x402-buyer', file));
        const acme = publisherEntry('acme', acmePayTo, {
          products: { 'atlas-human-report': { priceUsd: DEAR_PRICE } },
        });
        await writeFile(config(siteDir), JSON.stringify({ publishers: [acme] }));
        const ledger = new SqliteCreditLedger(join(dirname(siteDir), 'publishers.sqlite'));
        await ledger.credit('acme', 5);
        ledger.close();
      },
      stack: (dirs) => ({ devFacilitatorPort: facilitatorPort, config: config(dirs.site) }),
    });
    stack = site.stack;
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  const newPage = async (options: { javaScriptEnabled?: boolean } = {}) => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    // Nothing leaves the machine: the Pera SDK cannot reach its relay (as offline), its dialog still opens.
    await context.route('**/*', (route) =>
      route.request().url().startsWith(stack.url) ? route.continue() : route.abort(),
    );
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    return page;
  };

  beforeEach(() => {
    pageErrors.length = 0;
  });
  afterEach(async () => {
    await context?.close();
  });

  const readyAt = async (path: string) => {
    await generate(); // the paywall sells a file 120 s old at most: each visit gets a fresh one
    await newPage();
    await page.goto(`${stack.url}${path}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#challenge:not([hidden])');
  };

  describe('a storefront priced above 1 USDC', () => {
    it('is bought with the development wallet on its buyer page', async () => {
      await readyAt(STOREFRONT);
      expect(await page.textContent('#offer-amount')).toBe(`${DEAR_PRICE} USDC (${DEAR_ATOMIC} units)`);
      await page.click('#create-dev-wallet');
      await page.waitForSelector('#wallet-status:not([hidden])');
      const paidAnswers: number[] = [];
      page.on('response', (response) => {
        if (response.url().endsWith(STOREFRONT_REPORT) && response.request().headers()['payment-signature'])
          paidAnswers.push(response.status());
      });
      await page.click('#pay');
      // The report, or the problem the page met (a settlement refused for want of funds, before the fix).
      await page.waitForSelector('#result:not([hidden]), #problem:not([hidden])', { timeout: 90_000 });
      expect(await page.isHidden('#problem'), (await page.textContent('#problem-message')) ?? '').toBe(true);
      expect(paidAnswers).toEqual([200]);
      expect(pageErrors).toEqual([]);
    });

    it('is bought by `emi buy`, which pays exactly the price asked and says so', async () => {
      await generate();
      const run = await emi([
        'buy',
        STOREFRONT_REPORT,
        '--base-url',
        stack.url,
        '--facilitator-url',
        facilitatorUrl, // its own origin: the x402 client reads /v2/transactions/params from its root
        '--retry-for',
        '0',
      ]);
      expect(run.stderr).not.toMatch(/maxAmountPerPayment|spendControls/);
      expect(run.code, run.stderr).toBe(BUY_EXIT_CODES.paid);
      expect(run.stderr).toContain(`signed one payment of ${DEAR_PRICE} USDC (${DEAR_ATOMIC} atomic units`);
      expect(run.stderr).toMatch(/settled, transaction [A-Z2-7]{52}/);
      expect(JSON.parse(run.stdout)).toMatchObject({ sections: expect.any(Array) });
    });
  });

  /** The element that has focus, looked for through open shadow roots (the Pera dialog is made of them). */
  const deepFocusId = () =>
    page.evaluate(() => {
      let element = document.activeElement;
      while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
      return element?.id ?? '';
    });
  const WRAPPER = '#pera-wallet-connect-modal-wrapper';
  const CLOSE = '#pera-wallet-modal-header-close-button';

  /** Opens the Pera dialog from the keyboard and waits until focus is on its close button. */
  async function openPeraDialog(button: string): Promise<void> {
    await page.focus(button);
    await page.keyboard.press('Enter');
    await page.waitForSelector(WRAPPER, { state: 'attached' });
    await expect.poll(deepFocusId).toBe(CLOSE.slice(1));
    expect(await page.evaluate(() => document.querySelector('main')?.inert)).toBe(true);
  }

  /** The dialog is gone, the page usable again, focus back on `button`, and `status` no longer "connecting". */
  async function expectPageBack(button: string, status: string, connecting: RegExp): Promise<void> {
    await expect.poll(() => page.locator(WRAPPER).count(), { timeout: 10_000 }).toBe(0);
    expect(await page.evaluate(() => document.querySelector('main')?.inert)).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(button.slice(1));
    await expect.poll(() => page.textContent(status)).not.toMatch(connecting);
    expect(pageErrors).toEqual([]);
    // Usable: a second press opens the dialog again.
    await page.keyboard.press('Enter');
    await page.waitForSelector(WRAPPER, { state: 'attached' });
    expect(pageErrors).toEqual([]);
  }

  describe("the Pera dialog when Pera's relay cannot be reached", () => {
    it('closes on Escape on the buyer page, giving the page and focus back', async () => {
      await readyAt('/x402-buyer/');
      await openPeraDialog('#connect-pera');
      await page.keyboard.press('Escape');
      await expectPageBack('#connect-pera', '#status', /Opening the wallet connection/);
    });

    it('closes on a click of its close button on the buyer page', async () => {
      await readyAt('/x402-buyer/');
      await openPeraDialog('#connect-pera');
      await page.locator(CLOSE).click(); // Playwright's CSS pierces the open shadow roots
      await expectPageBack('#connect-pera', '#status', /Opening the wallet connection/);
    });

    it('closes on Escape on the arena vote form', async () => {
      await newPage();
      await page.goto(`${stack.url}/docs/arena-rules/`);
      await page.waitForSelector('#arena-connect-pera:not([disabled])');
      await openPeraDialog('#arena-connect-pera');
      await page.keyboard.press('Escape');
      await expectPageBack('#arena-connect-pera', '#arena-wallet', /Connecting/);
    });
  });

  it('draws a focus ring with at least 3:1 against the white panel and the development wallet box', async () => {
    await readyAt('/x402-buyer/');
    const ratios: Record<string, number> = {};
    for (const id of ['check-price', 'create-dev-wallet']) {
      // Focus from the keyboard (the ring is :focus-visible): Tab until the button has it.
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      for (let tab = 0; tab < 40 && (await page.evaluate(() => document.activeElement?.id)) !== id; tab++)
        await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe(id);
      ratios[id] = await page.evaluate(() => {
        const rgb = (color: string) => {
          const canvas = document.createElement('canvas').getContext('2d')!;
          canvas.fillStyle = color;
          canvas.fillRect(0, 0, 1, 1);
          return [...canvas.getImageData(0, 0, 1, 1).data.slice(0, 3)];
        };
        const luminance = (color: number[]) =>
          color
            .map((v) => v / 255)
            .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
            .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i]!, 0);
        const focused = document.activeElement as HTMLElement;
        const style = getComputedStyle(focused);
        if (style.outlineStyle === 'none' || parseFloat(style.outlineWidth) === 0) return 0;
        // What the ring is drawn on (outline-offset: beside the button): the nearest opaque background around it.
        let around: HTMLElement | null = focused.parentElement;
        while (around && getComputedStyle(around).backgroundColor === 'rgba(0, 0, 0, 0)')
          around = around.parentElement;
        const [ring, back] = [
          luminance(rgb(style.outlineColor)),
          luminance(rgb(around ? getComputedStyle(around).backgroundColor : '#fff')),
        ];
        return (Math.max(ring, back) + 0.05) / (Math.min(ring, back) + 0.05);
      });
    }
    expect(ratios['check-price']).toBeGreaterThanOrEqual(MIN_NON_TEXT_CONTRAST);
    expect(ratios['create-dev-wallet']).toBeGreaterThanOrEqual(MIN_NON_TEXT_CONTRAST);
  });

  describe('without JavaScript', () => {
    it('the buyer page says it needs JavaScript and promises no loading', async () => {
      await newPage({ javaScriptEnabled: false });
      await page.goto(`${stack.url}/x402-buyer/`);
      // (Playwright's text= engine skips <noscript>: the line is found by its class.)
      const line = page.locator('noscript .config-status');
      expect(await line.isVisible()).toBe(true);
      expect(await line.textContent()).toBe('This page needs JavaScript to check and pay.');
      expect(await page.isVisible('#config-status')).toBe(false); // "Loading… the buttons below work once…"
      expect(await page.isDisabled('#connect-pera')).toBe(true);
    });

    it('the arena vote form says voting needs JavaScript, names the API, and shows no usable control until it runs', async () => {
      await newPage({ javaScriptEnabled: false });
      await page.goto(`${stack.url}/docs/arena-rules/`);
      const line = page.locator('#arena-vote noscript p');
      expect(await line.isVisible()).toBe(true);
      expect(await line.textContent()).toMatch(/needs JavaScript.*POST \/arena\/vote/s);
      for (const id of [
        'arena-connect-pera',
        'arena-connect-defly',
        'arena-send',
        'arena-address',
        'arena-signature',
      ])
        expect(await page.isDisabled(`#${id}`), id).toBe(true);
      expect(await page.isVisible('#arena-message')).toBe(false); // the empty "Text your wallet signs:" box
      await context.close();

      // With its script, the same form works: every control wired, the text to sign shown.
      await newPage();
      await page.goto(`${stack.url}/docs/arena-rules/`);
      for (const id of ['arena-connect-pera', 'arena-connect-defly', 'arena-send', 'arena-address'])
        await page.waitForSelector(`#${id}:not([disabled])`, { state: 'attached' });
      await expect.poll(() => page.textContent('#arena-message')).toContain('emi-arena-vote/v1');
      expect(await page.isVisible('#arena-message')).toBe(true);
    });
  });

  describe('the bought report', () => {
    it('writes its "Updated" time as the rest of the page does (2026-11-26 19:16 UTC)', async () => {
      await readyAt('/x402-buyer/');
      await page.click('#create-dev-wallet');
      await page.waitForSelector('#wallet-status:not([hidden])');
      await page.click('#pay');
      await page.waitForSelector('#result:not([hidden])');
      expect(await page.textContent('.report-updated')).toMatch(/^Updated \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
      expect(pageErrors).toEqual([]);
    });
  });
});
