// The buyer page's failure paths in chromium against the local stack: a network drop after the payment was sent,
// a reload mid-purchase, double clicks, a second price check while paying, a 503 before payment, a buyer without
// USDC, hostile strings in the report, slow answers and a 360x740 screen. Money is counted on the in-memory ledger.
import { mkdir } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { HUMAN_REPORT_AMOUNT, HUMAN_REPORT_PATH } from '../generator/buyer/human-report-terms.ts';
import {
  ARTIFACTS,
  freshBuyerContext,
  hasChromium,
  launchChromium,
  startBuyerStack,
  tamperedChallenge,
} from './buyer-stack.ts';
import type { BuyerConfigJson, BuyerStack } from './buyer-stack.ts';

const PARAMS = '**/x402-dev-facilitator/v2/transactions/params';

describe.skipIf(!hasChromium)('x402 buyer page failure paths in chromium', () => {
  let stack: BuyerStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    [stack, browser] = await Promise.all([startBuyerStack(), launchChromium()]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  beforeEach(async () => {
    context = await freshBuyerContext(stack, browser, { viewport: { width: 360, height: 740 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    pageErrors.length = 0;
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  afterEach(async () => {
    await context.close();
    expect(pageErrors).toEqual([]);
  });

  const open = async () => {
    await page.goto(stack.pageUrl);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#challenge:not([hidden])');
  };
  const useDevelopmentWallet = async () => {
    await page.click('#create-dev-wallet');
    await page.waitForSelector('#wallet-status:not([hidden])');
  };
  const received = () => stack.facilitator.ledger.assetBalance(stack.payTo);
  const price = BigInt(HUMAN_REPORT_AMOUNT);

  /** Holds every call for ledger params until `release` is called: a slow wallet or node, seen from the page. */
  const holdParams = async () => {
    const held: Route[] = [];
    let open = false;
    await page.route(PARAMS, (route) => (open ? route.continue() : void held.push(route)));
    return {
      count: () => held.length,
      release: async () => {
        open = true;
        await Promise.all(held.map((route) => route.continue()));
      },
    };
  };

  it('never signs a second payment when the price is checked again while a payment is under way', async () => {
    const before = received();
    await open();
    await useDevelopmentWallet();
    const params = await holdParams();
    await page.click('#pay');
    await expect.poll(params.count).toBe(1);
    // While the first payment waits for the node (or the wallet), the person checks the price again.
    // Ignored while busy, and said so to screen readers (aria-disabled keeps its focus for keyboard users).
    expect(await page.getAttribute('#check-price', 'aria-disabled')).toBe('true');
    await page.click('#check-price', { force: true }); // aria-disabled: a mouse can still press it
    await page.waitForTimeout(300);
    expect(await page.isDisabled('#pay')).toBe(true);
    await page.click('#pay', { force: true });
    await page.waitForTimeout(300);
    await params.release();
    await page.waitForSelector('#result:not([hidden])');
    await page.waitForTimeout(500);
    expect(new Set(stack.signatures).size).toBe(1);
    expect(received() - before).toBe(price);
  });

  it('ignores a double click on Pay: one signature, one charge', async () => {
    const before = received();
    await open();
    await useDevelopmentWallet();
    await page.dblclick('#pay');
    await page.waitForSelector('#result:not([hidden])');
    await page.waitForTimeout(300);
    expect(stack.signatures).toHaveLength(1);
    expect(received() - before).toBe(price);
  });

  it('ignores a double click on Retry: the same bytes, one charge, no stale problem over the report', async () => {
    let drops = 1;
    stack.hook = async (request, real) =>
      request.headers.get('PAYMENT-SIGNATURE') && drops-- > 0
        ? Response.json({ error: 'facilitator_unavailable', message: 'Unavailable.' }, { status: 503 })
        : real();
    const before = received();
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    await page.dblclick('#retry');
    await page.waitForSelector('#result:not([hidden])');
    await page.waitForTimeout(500);
    expect(new Set(stack.signatures).size).toBe(1);
    expect(received() - before).toBe(price);
    expect(await page.isVisible('#problem')).toBe(false);
  });

  it('keeps the signed payment when the answer is lost after settlement, and Retry resends the same bytes', async () => {
    const before = received();
    await open();
    await useDevelopmentWallet();
    let drops = 1;
    await page.route(`**${HUMAN_REPORT_PATH}`, async (route) => {
      if (!route.request().headers()['payment-signature'] || drops-- <= 0) return route.continue();
      await route.fetch(); // the server settles; the answer never reaches the page
      await route.abort('connectionreset');
    });
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.getAttribute('#problem', 'data-kind')).toBe('network');
    expect(await page.textContent('#retry')).toContain('same signed payment');
    expect(received() - before).toBe(price);
    // A reload mid-purchase keeps it too.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#problem:not([hidden])');
    await page.click('#retry');
    await page.waitForSelector('#result:not([hidden])');
    expect(stack.signatures).toHaveLength(2);
    expect(stack.signatures[1]).toBe(stack.signatures[0]);
    expect(received() - before).toBe(price);
  });

  it('explains a 503 before payment and no longer offers the earlier Pay step', async () => {
    await open();
    await useDevelopmentWallet();
    expect(await page.isVisible('#confirm')).toBe(true);
    stack.hook = async () =>
      Response.json({ error: 'stale', message: 'The report file is stale.' }, { status: 503 });
    await page.click('#check-price');
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.textContent('#problem-message')).toContain('HTTP 503');
    expect(await page.textContent('#problem-message')).toContain('stale');
    expect(await page.textContent('#problem-message')).toMatch(
      /^This report cannot be bought here right now\./,
    );
    expect(await page.isVisible('#confirm')).toBe(false);
    expect(await page.isDisabled('#pay')).toBe(true);
    expect(stack.signatures).toHaveLength(0);
  });

  it('explains a refusal for a buyer with no USDC, and charges nothing', async () => {
    await page.route('**/x402-dev-facilitator/dev/fund', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: '{}' }),
    );
    const before = received();
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    const message = (await page.textContent('#problem-message')) ?? '';
    expect(message.length).toBeGreaterThan(20);
    expect(await page.getAttribute('#retry', 'data-mode')).not.toBe('resend');
    expect(received() - before).toBe(0n);
  });

  it('renders hostile strings from the report as text, never as HTML', async () => {
    const hostile = '<img src=x onerror="window.__owned=1"><script>window.__owned=2</script>';
    stack.hook = async (request, real) => {
      const answer = await real();
      if (!request.headers.get('PAYMENT-SIGNATURE') || answer.status !== 200) return answer;
      const body = (await answer.json()) as Record<string, unknown> & {
        sections: { id: string; heading: string; paragraphs: string[] }[];
        asset_table: { columns: { key: string; label: string }[]; rows: Record<string, unknown>[] };
      };
      body.title = hostile;
      body.headline = hostile;
      body.updated = hostile;
      body.sections[0] = { id: `"><img src=x onerror=alert(1)>`, heading: hostile, paragraphs: [hostile] };
      body.asset_table.columns[0]!.label = hostile;
      body.asset_table.rows[0]!.asset = hostile;
      body.limitations = [hostile];
      body.disclaimers = [hostile];
      const headers = new Headers(answer.headers);
      headers.delete('content-length');
      return new Response(JSON.stringify(body), { status: 200, headers });
    };
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    expect(await page.evaluate(() => (window as { __owned?: number }).__owned)).toBeUndefined();
    expect(await page.locator('#result img, #result script').count()).toBe(0);
    expect(await page.textContent('#report-title')).toBe(hostile);
  });

  it('shows progress on a slow price check and stays usable at 360x740', async () => {
    stack.hook = async (_request, real) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return real();
    };
    await page.goto(stack.pageUrl);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.textContent('#status')).toContain('Asking the server');
    await page.click('#create-dev-wallet'); // the page does not freeze while it waits
    await page.waitForSelector('#wallet-status:not([hidden])');
    await page.waitForSelector('#challenge:not([hidden])');
    stack.hook = null;
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });

  it('the transaction id has a copy button (52 characters cannot be selected by hand on a phone)', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    const txId = (await page.textContent('#tx-id')) ?? '';
    expect(txId).toMatch(/^[A-Z2-7]{52}$/);
    const copy = page.locator('#proof-container button.copy');
    expect(await copy.textContent()).toBe('Copy transaction id');
    const box = await copy.boundingBox();
    expect(box?.height).toBeGreaterThanOrEqual(44); // a touch target
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(txId);
  });

  it("the Pay button states the checked payment request's price, not the page's own text", async () => {
    // A storefront selling at 0.15 USDC: its config.json names that amount and its 402 asks for it.
    await stack.setConfig({ ...stack.developmentConfig(), reportAmount: '150000' } as BuyerConfigJson);
    stack.hook = async (request, real) =>
      request.headers.get('PAYMENT-SIGNATURE')
        ? real()
        : tamperedChallenge(await real(), (accepted) => (accepted.amount = '150000'));
    await open();
    await useDevelopmentWallet();
    await page.waitForSelector('#confirm:not([hidden])');
    expect(await page.textContent('#pay')).toBe('Pay 0.15 USDC and get the report');
  });

  it('keeps saying why the report cannot be sold after a wallet is connected', async () => {
    // A storefront whose publisher has no credit left: its paywall answers 503 before any payment request.
    stack.hook = async () =>
      Response.json(
        { error: 'not_available_from_seller', message: 'Example has no shared-intelligence credit left.' },
        { status: 503 },
      );
    await page.goto(stack.pageUrl);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#problem:not([hidden])');
    await useDevelopmentWallet();
    expect(await page.isVisible('#problem')).toBe(true);
    expect(await page.textContent('#problem-message')).toBe(
      'This report cannot be bought here right now. Example has no shared-intelligence credit left. (HTTP 503)',
    );
    expect(await page.textContent('#retry')).toBe('Check the price again');
    expect(await page.isDisabled('#pay')).toBe(true);
  });

  it('after a reload with a kept signed payment, connecting keeps the explanation and Pay says it resends', async () => {
    let failures = 1;
    stack.hook = async (request, real) =>
      request.headers.get('PAYMENT-SIGNATURE') && failures-- > 0
        ? Response.json({ error: 'facilitator_unavailable', message: 'Unavailable.' }, { status: 503 })
        : real();
    const before = received();
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    await open(); // a reload: the development wallet is gone, the signed payment is kept
    await page.waitForSelector('#problem:not([hidden])');
    await useDevelopmentWallet();
    expect(await page.isVisible('#problem')).toBe(true);
    expect(await page.textContent('#problem-message')).toContain('Retry sends that same payment');
    expect(await page.textContent('#pay')).toBe('Send the signed payment again (no new charge)');
    expect(await page.textContent('#pay-hint')).toContain('cannot be charged twice');
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    expect(stack.signatures).toHaveLength(2);
    expect(stack.signatures[1]).toBe(stack.signatures[0]);
    expect(received() - before).toBe(price);
  });

  it('waits as long as Retry-After asks when the payment is still in progress, then resends the same bytes', async () => {
    let busy = 1;
    stack.hook = async (request, real) =>
      request.headers.get('PAYMENT-SIGNATURE') && busy-- > 0
        ? Response.json(
            { error: 'payment_in_progress', message: 'Still processing.' },
            { status: 503, headers: { 'Retry-After': '2' } },
          )
        : real();
    await open();
    await useDevelopmentWallet();
    await page.click('#pay');
    await page.waitForSelector('#problem:not([hidden])');
    expect(await page.textContent('#problem-message')).toContain('Try again in about 2 seconds');
    expect(await page.getAttribute('#retry', 'aria-disabled')).toBe('true');
    expect(await page.textContent('#retry')).toMatch(/^Retry in \d s/);
    await page.click('#retry', { force: true }); // too early: ignored
    await page.waitForTimeout(300);
    expect(stack.signatures).toHaveLength(1);
    await page.waitForSelector('#retry[aria-disabled="false"]', { timeout: 5_000 });
    expect(await page.textContent('#retry')).toBe('Retry (sends the same signed payment)');
    await page.click('#retry');
    await page.waitForSelector('#result:not([hidden])');
    expect(stack.signatures).toHaveLength(2);
    expect(stack.signatures[1]).toBe(stack.signatures[0]);
  });
});
