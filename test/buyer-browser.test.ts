// The buyer page in Debian's chromium (playwright-core) against the local stack on loopback: the challenge shown,
// tampered challenges refused with nothing signed, the full paid flow with the development wallet, a retry that
// resends the same signature, refusals explained, and the print view. Screenshots go to artifacts/buyer/.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import algosdk from 'algosdk';
import { decodeBase64Json, encodeBase64Json } from '../generator/buyer/x402-codec.ts';
import { HUMAN_REPORT_AMOUNT } from '../generator/buyer/human-report-terms.ts';
import {
  ARTIFACTS,
  freshBuyerContext,
  hasChromium,
  launchChromium,
  startBuyerStack,
  tamperedChallenge,
} from './buyer-stack.ts';
import type { BuyerStack } from './buyer-stack.ts';

if (!hasChromium) {
  console.warn('buyer browser tests skipped: /usr/bin/chromium is missing (apt-get install -y chromium)');
}

const OTHER_ADDRESS = algosdk.generateAccount().addr.toString();

describe.skipIf(!hasChromium)('x402 buyer page in chromium', () => {
  let stack: BuyerStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    [stack, browser] = await Promise.all([startBuyerStack(), launchChromium()]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  beforeEach(async () => {
    // A phone-sized viewport: the page must work there. Requests off the local origin are cut (and still recorded
    // as requested, below).
    context = await freshBuyerContext(stack, browser, {
      viewport: { width: 390, height: 844 },
      acceptDownloads: true,
    });
    page = await context.newPage();
    page.setDefaultTimeout(10_000); // a missing element fails with its selector, well before the test's own timeout
    pageErrors.length = 0;
    requested.length = 0;
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('request', (request) => requested.push(request.url()));
  });

  afterEach(async () => {
    await context.close();
    expect(pageErrors).toEqual([]);
  });

  const open = async () => {
    await page.goto(stack.pageUrl);
    await page.waitForSelector('body[data-ready="true"]');
  };
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const useDevelopmentWallet = async () => {
    await page.click('#create-dev-wallet');
    await page.waitForSelector('#wallet-status:not([hidden])');
  };

  it('decodes the 402 challenge and shows amount, network and payee', async () => {
    await open();
    await page.waitForSelector('#challenge:not([hidden])');
    expect(await page.textContent('#offer-amount')).toBe('0.10 USDC (100000 units)');
    expect(await page.textContent('#offer-asset')).toBe('31566704');
    expect(await page.textContent('#offer-network')).toBe('Algorand mainnet');
    expect(await page.textContent('#offer-payee')).toBe(stack.payTo);
    expect(await page.textContent('#offer-source')).toContain('PAYMENT-REQUIRED header');
    expect(await page.isVisible('#refusal')).toBe(false);
    expect(await page.textContent('#confirm-text')).toContain(`0.10 USDC`);
    // What the data is, before the Pay step: the stack sells the simulated example, and the page says so in Step 2,
    // above the pay button, and again beside it.
    expect(await page.isVisible('#data-mode')).toBe(true);
    expect(await page.getAttribute('#data-mode', 'data-mode')).toBe('simulated');
    expect(await page.textContent('#data-mode-label')).toMatch(/^SIMULATED DATA: not real market data/);
    expect(await page.textContent('#data-mode-detail')).toMatch(
      /Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC \((less than a minute|\d+ minutes?) ago\)/,
    );
    expect(await page.textContent('#offer-data')).toMatch(/^SIMULATED data/);
    const [modeBox, payBox] = await Promise.all([
      page.locator('#data-mode').boundingBox(),
      page.locator('#pay').boundingBox(),
    ]);
    expect(modeBox!.y + modeBox!.height).toBeLessThan(payBox!.y);
    expect(await page.isVisible('#confirm-data')).toBe(true);
    expect(await page.textContent('#confirm-data')).toMatch(/^SIMULATED DATA/);
    expect(await page.textContent('#confirm-text')).toContain('for a report built from SIMULATED data');
    // No wallet yet: the pay button waits.
    expect(await page.isDisabled('#pay')).toBe(true);
    // Nothing leaves the origin until the person picks a wallet (the connect SDKs are created lazily).
    expect(requested).toContain(`${stack.origin}/x402-buyer/config.json`);
    expect(requested.filter((url) => !url.startsWith(stack.origin))).toEqual([]);
    await shot('challenge');
  });

  const tampers: [string, (a: Record<string, unknown>) => void, RegExp][] = [
    ['amount', (a) => (a.amount = '200000'), /0\.20 USDC.*exactly 0\.10 USDC/],
    ['asset', (a) => (a.asset = '12345'), /asset 12345, not USDC/],
    ['network', (a) => (a.network = 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe'), /not Algorand mainnet/],
    ['payee', (a) => (a.payTo = OTHER_ADDRESS), /not to the merchant address/],
  ];
  for (const [name, mutate, reason] of tampers) {
    it(`refuses a challenge with a tampered ${name} and signs nothing`, async () => {
      stack.hook = async (_request, real) => tamperedChallenge(await real(), mutate);
      const transactionsBefore = stack.facilitator.ledger.transactionCount;
      await open();
      await useDevelopmentWallet();
      await page.waitForSelector('#refusal:not([hidden])');
      expect(await page.textContent('#refusal-reasons')).toMatch(reason);
      expect(await page.isVisible('#confirm')).toBe(false);
      expect(await page.isDisabled('#pay')).toBe(true);
      // Even a forced click on the hidden button must not pay.
      await page.$eval('#pay', (button) => (button as HTMLButtonElement).click());
      await page.waitForTimeout(300);
      expect(stack.signatures).toEqual([]);
      expect(stack.facilitator.ledger.transactionCount).toBe(transactionsBefore);
      await shot(`refused-${name}`);
    });
  }

  it('names replayed data, and takes the less live answer when header and body disagree', async () => {
    stack.hook = async (request, real) => {
      const answer = await real();
      if (request.headers.get('PAYMENT-SIGNATURE') || answer.status !== 402) return answer;
      const paymentRequired = decodeBase64Json(answer.headers.get('PAYMENT-REQUIRED') ?? '') as {
        resource: { description: string };
      };
      paymentRequired.resource.description = paymentRequired.resource.description.replace(
        'SIMULATED (not live) data',
        'live data',
      );
      const body = (await answer.json()) as { data: { mode: string } };
      body.data.mode = 'replay';
      const headers = new Headers(answer.headers);
      headers.set('PAYMENT-REQUIRED', encodeBase64Json(paymentRequired));
      headers.delete('content-length');
      return new Response(JSON.stringify(body), { status: 402, headers });
    };
    await open();
    await page.waitForSelector('#challenge:not([hidden])');
    expect(await page.getAttribute('#data-mode', 'data-mode')).toBe('replay');
    expect(await page.textContent('#data-mode-label')).toMatch(/^REPLAYED DATA: not live/);
    expect(await page.textContent('#confirm-data')).toMatch(/^REPLAYED DATA/);
    await shot('replayed-data');
  });

  it('falls back to the body when the PAYMENT-REQUIRED header is absent', async () => {
    stack.hook = async (_request, real) =>
      tamperedChallenge(await real(), () => undefined, { dropHeader: true });
    await open();
    await page.waitForSelector('#challenge:not([hidden])');
    expect(await page.textContent('#offer-source')).toContain('response body');
    expect(await page.isVisible('#confirm')).toBe(true);
  });

  it('refuses to pay without config.json and says why', async () => {
    await stack.setConfig(null);
    await open();
    await page.waitForSelector('#challenge:not([hidden])');
    expect(await page.textContent('#config-status')).toContain('config.json is missing');
    expect(await page.textContent('#refusal-reasons')).toContain('will not pay');
    expect(await page.isVisible('#dev-wallet')).toBe(false);
    expect(await page.isVisible('#confirm')).toBe(false);
  });

  it('never offers the development wallet with a production config', async () => {
    await stack.setConfig({ ...stack.developmentConfig(), facilitatorMode: 'production' });
    await open();
    expect(await page.isVisible('#connect-pera')).toBe(true);
    expect(await page.isVisible('#connect-defly')).toBe(true);
    expect(await page.isVisible('#dev-wallet')).toBe(false);
  });

  it('pays with the development wallet and renders the report with its proof', async () => {
    const balanceBefore = stack.facilitator.ledger.assetBalance(stack.payTo);
    await open();
    await useDevelopmentWallet();
    expect(await page.textContent('#wallet-status')).toContain('Development wallet');
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');

    const txId = (await page.textContent('#tx-id')) ?? '';
    expect(txId).toMatch(/^[A-Z2-7]{52}$/);
    expect(stack.facilitator.ledger.confirmedRound(txId)).toBeDefined();
    expect(stack.facilitator.ledger.assetBalance(stack.payTo) - balanceBefore).toBe(
      BigInt(HUMAN_REPORT_AMOUNT),
    );
    expect(stack.signatures).toHaveLength(1);

    expect(await page.textContent('.proof')).toContain('0.10 USDC');
    expect(await page.textContent('.report-headline')).toBe(
      'Test headline: a quiet, mixed market <b>not bold</b>.',
    );
    expect(await page.locator('.report-section').count()).toBe(2);
    expect(await page.locator('.asset-table tbody tr').count()).toBe(3);
    expect(await page.locator('figure.report-chart svg rect.chart-bar').count()).toBe(3 + 5);
    expect(await page.textContent('.report-disclaimers')).toContain('not financial');
    expect(JSON.parse((await page.textContent('#raw-json')) ?? '').payment_status).toBe('settled');
    await shot('paid-report');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
    expect(download.suggestedFilename()).toMatch(/^atlas-human-report-.*\.json$/);
  });

  it('keeps the paid report for the tab across a reload, without paying again, and links back', async () => {
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    const txId = (await page.textContent('#tx-id')) ?? '';
    expect(stack.signatures).toHaveLength(1);

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#result:not([hidden])');
    expect(await page.textContent('#tx-id')).toBe(txId);
    expect(await page.locator('.asset-table tbody tr').count()).toBe(3);
    expect(await page.textContent('#status')).toContain('paid for earlier in this tab');
    expect(stack.signatures).toHaveLength(1); // shown again, not bought again
    expect(await page.getAttribute('nav.back a >> nth=0', 'href')).toBe('/');
  });

  it('resends the same signed payment after the facilitator was unavailable, even across a reload', async () => {
    let failures = 1;
    stack.hook = async (request, real) =>
      request.headers.get('PAYMENT-SIGNATURE') && failures-- > 0
        ? Response.json(
            { error: 'facilitator_unavailable', message: 'The facilitator is unavailable.' },
            { status: 503 },
          )
        : real();
    const balanceBefore = stack.facilitator.ledger.assetBalance(stack.payTo);
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.getAttribute('#problem', 'data-kind')).toBe('facilitator-unavailable');
    expect(await page.textContent('#problem-message')).toContain('payment service is unavailable');
    expect(await page.textContent('#retry')).toContain('same signed payment');
    await shot('facilitator-unavailable');

    // The development key is gone after a reload; the kept signed payment is not, and no new one is made.
    await open();
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.textContent('#problem-message')).toContain('cannot be charged twice');
    await page.click('#retry');
    await page.waitForSelector('#result:not([hidden])');
    expect(stack.signatures).toHaveLength(2);
    expect(stack.signatures[1]).toBe(stack.signatures[0]);
    expect(stack.facilitator.ledger.assetBalance(stack.payTo) - balanceBefore).toBe(
      BigInt(HUMAN_REPORT_AMOUNT),
    );
    expect(await page.textContent('.proof')).toContain('local development ledger');
  });

  it('explains a refused settlement (402 with PAYMENT-RESPONSE)', async () => {
    stack.hook = async (request, real) => {
      if (!request.headers.get('PAYMENT-SIGNATURE')) return real();
      const failed = {
        success: false,
        errorReason: 'insufficient_funds',
        errorMessage: 'not enough USDC',
        transaction: '',
        network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
      };
      return Response.json(
        { error: 'insufficient_funds' },
        { status: 402, headers: { 'PAYMENT-RESPONSE': encodeBase64Json(failed) } },
      );
    };
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.getAttribute('#problem', 'data-kind')).toBe('settlement-refused');
    expect(await page.textContent('#problem-message')).toContain('not enough USDC');
  });

  it('prints the report and its proof without the controls', async () => {
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    await page.emulateMedia({ media: 'print' });
    for (const selector of [
      '#print',
      '#save',
      '#pay',
      '#check-price',
      '#create-dev-wallet',
      '#raw',
      '#status',
    ]) {
      expect(await page.isVisible(selector), selector).toBe(false);
    }
    for (const selector of ['.report', '.proof', '#tx-id', '.report-disclaimers', '.asset-table']) {
      expect(await page.isVisible(selector), selector).toBe(true);
    }
    await shot('print-view');
  });

  it('leaves focus and scroll alone when the first price check fails, and announces it instead', async () => {
    let failures = 1;
    stack.hook = async (_request, real) =>
      failures-- > 0
        ? Response.json({ error: 'paywall_down', message: 'The paywall is down.' }, { status: 503 })
        : real();
    await open();
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.getAttribute('#problem', 'role')).toBe('alert');
    expect(await page.evaluate(() => [document.activeElement?.tagName, window.scrollY])).toEqual(['BODY', 0]);
    // Asked for by the person, a failure does take focus to its retry button; here the second check succeeds.
    await page.click('#retry');
    await page.waitForSelector('#challenge:not([hidden])');
    expect(await page.isVisible('#problem')).toBe(false);
  });

  it('moves focus on to the next control after connecting and after disconnecting', async () => {
    await open();
    await page.waitForSelector('#challenge:not([hidden])');
    await page.focus('#create-dev-wallet');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#wallet-status:not([hidden])');
    await page.waitForFunction(() => document.activeElement?.id === 'pay');
    await page.focus('#disconnect');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#wallet-choices:not([hidden])');
    await page.waitForFunction(() => document.activeElement?.id === 'connect-pera');
  });

  it('is keyboard operable: the controls are focusable buttons with visible focus', async () => {
    await open();
    await page.keyboard.press('Tab'); // skip link
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('Back to the site');
    for (let link = 0; link < 2; link += 1) await page.keyboard.press('Tab'); // API docs, payment terms
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('connect-pera');
    const outline = await page.evaluate(
      () => getComputedStyle(document.activeElement as Element).outlineStyle,
    );
    expect(outline).toBe('solid');
  });
});
