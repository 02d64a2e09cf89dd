// A publisher's storefront that the operator closed (`emi publisher close`: its paths answer 410 for new sales) on
// its buyer page `/p/<id>/x402-buyer/`, in a real browser at a phone's size, on the whole local stack (`emi serve`)
// with the freshly bundled page: the refusal is final (no button offers to check the price again or retry) and the
// page links to the site's own buyer page, where the report is still sold. A storefront that is open but has no
// credit left (503) keeps its retry. The payment path reads a 410 as final too. Without JavaScript the page itself
// is Gone (410) and says it is closed, from the config file as it is now (`emi publisher close` on a running stack).
import { readFile, rename, writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { LocalStack } from '../generator/local-stack.ts';
import { errorBody } from '../paywall-worker/core/decide.ts';
import { pendingPayments, sendPayment } from '../site/x402-buyer/src/x402-flow.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { pendingPayment } from './helpers/pending-payment.ts';
import { stubSessionStorage } from './helpers/session-storage.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { startStorefrontStack, type StorefrontStack } from './storefront-stack.ts';

const PHONE = { width: 360, height: 640 };

let storefront: StorefrontStack;
let config: string;
let stack: LocalStack;
let browser: Browser;

beforeAll(async () => {
  const closedAt = new Date(Date.now() - 60_000).toISOString();
  storefront = await startStorefrontStack({
    prefix: 'emi-storefront-closed-',
    publishers: [publisherEntry('gone', account(), { closedAt }), publisherEntry('dry', account())],
    credits: { gone: 2 }, // credit left: the refusal is the closing, not a lack of credit
    // The page's real code, as `emi build` bundles it (its chunks under dist/assets/x402-buyer/).
    app: { bundle: true, minify: false },
  });
  ({ config, stack } = storefront);
  if (hasChromium) browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await storefront?.close();
});

/** The storefront's buyer page at a phone's size, once its own price check has shown a problem. */
async function openStorefront(id: string): Promise<Page> {
  const page = await browser.newPage({ viewport: PHONE });
  await page.route('**/*', (route) =>
    route.request().url().startsWith(stack.url) ? route.continue() : route.abort(),
  );
  await page.goto(`${stack.url}/p/${id}/x402-buyer/`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#problem', { state: 'visible' });
  return page;
}

describe.skipIf(!hasChromium)("a storefront's buyer page at a phone's size", () => {
  it('closed (410): says so for good, offers no check or retry, and links to the site’s own buyer page', async () => {
    const page = await openStorefront('gone');
    try {
      expect(await page.isVisible('#check-price')).toBe(false);
      expect(await page.isVisible('#retry')).toBe(false);
      const message = (await page.textContent('#problem-message')) ?? '';
      expect(message).toMatch(/This storefront no longer sells this report/);
      expect(message).toContain('HTTP 410');
      expect(message).not.toContain('/api/');

      // A real link, inside the alert region, to the site's own buyer page, which answers.
      const link = page.locator('#problem a[href]');
      await expect.poll(() => link.count()).toBe(1);
      expect(await link.isVisible()).toBe(true);
      const href = await link.evaluate((a) => (a as HTMLAnchorElement).href);
      expect(href).toBe(`${stack.url}/x402-buyer/`);
      expect((await link.textContent())?.trim()).toBe("the site's own buyer page");
      const box = await link.boundingBox();
      expect(box && box.x + box.width).toBeLessThanOrEqual(PHONE.width);
      expect((await fetch(href)).status).toBe(200);

      // The page's own notice, written before its code ran, fits the phone too.
      const notice = page.locator('.publisher-closed');
      expect(await notice.isVisible()).toBe(true);
      const noticeBox = await notice.boundingBox();
      expect(noticeBox && noticeBox.x + noticeBox.width).toBeLessThanOrEqual(PHONE.width);

      // The rest of the page stays as it was: the wallet choices work, the status is announced.
      expect(await page.getAttribute('#problem', 'role')).toBe('alert');
      expect(await page.getAttribute('#status', 'aria-live')).toBe('polite');
      expect(await page.isEnabled('#connect-pera')).toBe(true);
      expect(await page.isVisible('#connect-pera')).toBe(true);
      expect(await page.isVisible('#confirm')).toBe(false);

      // The link is a Tab stop that leads to the site's buyer page.
      await link.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`${stack.url}/x402-buyer/`);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('open without credit (503): keeps its retry and its price check, and no link elsewhere', async () => {
    const page = await openStorefront('dry');
    try {
      expect(await page.textContent('#problem-message')).toContain('HTTP 503');
      expect(await page.isVisible('#retry')).toBe(true);
      expect(await page.textContent('#retry')).toBe('Check the price again');
      expect(await page.isVisible('#check-price')).toBe(true);
      expect(await page.isVisible('#problem-elsewhere')).toBe(false);
    } finally {
      await page.close();
    }
  }, 60_000);
});

describe("a storefront's buyer page without JavaScript", () => {
  const page = async (id: string) => {
    const response = await fetch(`${stack.url}/p/${id}/x402-buyer/`);
    return { status: response.status, html: await response.text() };
  };
  const CLOSED = /<p class="problem publisher-closed"><strong>This storefront is closed\.<\/strong>/;

  it('closed: is Gone (410) and says since when, that payments made are delivered, and where it is still sold', async () => {
    const { status, html } = await page('gone');
    expect(status).toBe(410);
    expect(html).toMatch(CLOSED);
    const closedAt = Date.parse(
      (JSON.parse(await readFile(config, 'utf8')) as { publishers: Array<{ closedAt?: string }> })
        .publishers[0]?.closedAt ?? '',
    );
    const since = `${new Date(closedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    expect(html.replace(/\s+/g, ' ')).toContain(
      `stopped selling here on ${since}: this page sells nothing new.`,
    );
    expect(html).toContain('A payment already made here is still delivered');
    expect(html).toMatch(/<a href="\/x402-buyer\/">the site's own buyer page<\/a>/);
    expect(html).toContain('src="/x402-buyer/app.js"'); // its code still runs, to send a made payment again
  });

  it('open: answers 200 and says nothing of a close', async () => {
    const { status, html } = await page('dry');
    expect(status).toBe(200);
    expect(html).not.toContain('publisher-closed');
  });

  it('closed on the running stack by a change of the config file: says so at the next request', async () => {
    const before = await readFile(config, 'utf8');
    const entries = JSON.parse(before) as { publishers: Array<{ id: string; closedAt?: string }> };
    const dry = entries.publishers.find((p) => p.id === 'dry');
    if (!dry) throw new Error('no dry publisher in the fixture');
    const write = async () => {
      await writeFile(`${config}.new`, JSON.stringify(entries));
      await rename(`${config}.new`, config); // as `emi publisher close` writes it
    };
    try {
      // A closing time ahead is not a close yet.
      dry.closedAt = new Date(Date.now() + 3_600_000).toISOString();
      await write();
      expect((await page('dry')).status).toBe(200);

      dry.closedAt = new Date(Date.now() - 1_000).toISOString();
      await write();
      const { status, html } = await page('dry');
      expect(status).toBe(410);
      expect(html).toMatch(CLOSED);

      // Closed for good on this running stack: an entry without the close does not reopen it (README).
      delete dry.closedAt;
      await write();
      expect((await page('dry')).status).toBe(410);
    } finally {
      await writeFile(`${config}.new`, before);
      await rename(`${config}.new`, config);
    }
  });
});

describe('a signed payment refused for good (410)', () => {
  const payment = pendingPayment('http://127.0.0.1:9/p/gone/api/x402-atlas-human-report.php');
  afterEach(() => vi.unstubAllGlobals());

  it.each([
    [410, 'seller_closed', true],
    [503, 'not_available_from_seller', false],
  ] as const)('%i %s: final is %s', async (status, error, final) => {
    stubSessionStorage();
    pendingPayments.save(payment);
    vi.stubGlobal('fetch', async () =>
      Response.json(errorBody(status, error, 'Not sold here.', null, null), { status }),
    );
    const result = await sendPayment(payment);
    const problem = result.kind === 'problem' ? result.problem : null;
    expect(problem?.kind).toBe('not-for-sale');
    expect(problem?.final === true).toBe(final);
    expect(problem?.message.includes('Check the price again')).toBe(!final);
  });
});
