// A publisher's branded storefront (`/p/<id>/x402-buyer/`) in Debian's chromium, on the local stack of `emi serve`
// with a publishers config file, serving the buyer page as `emi build` bundles it: app.js at x402-buyer/app.js and
// its chunks under assets/x402-buyer/, imported relative to app.js. The page must load its code from the site's own
// /x402-buyer/app.js (its chunk imports then resolve where the chunks are; from /p/<id>/x402-buyer/app.js they
// would point into /p/<id>/assets/, a 404 on every host), become ready under the site's policy (same origin), show
// the publisher's brand and price, and sell the report with the development wallet paying the publisher's address.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import algosdk from 'algosdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBase64Json } from '../generator/buyer/x402-codec.ts';
import type { LocalStack } from '../generator/local-stack.ts';
import { CONTENT_SECURITY_POLICY } from '../schemas/delivery.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { humanReportFixture } from './buyer-report-fixture.ts';
import { portsInRange } from './free-port.ts';
import { writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { startStorefrontStack, type StorefrontStack } from './storefront-stack.ts';

/** The ports this suite may use (the stack's own port is part of every paid path's resource URL). */
const PORTS = { first: 19600, last: 19609 };
const REPORT_PATH = '/p/acme/api/x402-atlas-human-report.php';

/** The paid files, fresh, with a human report the page renders in full. */
async function writePaidFiles(paid: string): Promise<void> {
  await writePaidFixtures(paid);
  const report = PAID_RESOURCES.find((resource) => resource.id === 'atlasHumanReport')!;
  await writeFile(
    join(paid, report.file),
    JSON.stringify({ ...humanReportFixture, updated: new Date().toISOString() }),
  );
}

/** The receiver of the USDC transfer in a PAYMENT-SIGNATURE header (x402 v2, exact scheme on Algorand). */
function paidReceiver(paymentSignature: string): string | undefined {
  const { payload } = decodeBase64Json(paymentSignature) as {
    payload: { paymentGroup: string[]; paymentIndex: number };
  };
  const signed = algosdk.base64ToBytes(payload.paymentGroup[payload.paymentIndex]!);
  return algosdk.decodeSignedTransaction(signed).txn.assetTransfer?.receiver.toString();
}

describe.skipIf(!hasChromium)("a publisher's storefront in chromium, with the chunked buyer page", () => {
  const acmePayTo = account();
  let storefront: StorefrontStack;
  let stack: LocalStack;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const failed: string[] = [];

  beforeAll(async () => {
    storefront = await startStorefrontStack({
      prefix: 'emi-storefront-browser-',
      publishers: [publisherEntry('acme', acmePayTo)],
      credits: { acme: 2 },
      // The built buyer page as `emi build` leaves it in dist/: app.js minified, its chunks in assets/x402-buyer/.
      app: { bundle: true },
      pages: { '': '<!doctype html><title>home</title>\n' },
      port: portsInRange(PORTS.first, PORTS.last),
      writePaid: writePaidFiles,
    });
    ({ stack } = storefront);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    // Nothing leaves the machine.
    await context.route('**/*', (route) =>
      route.request().url().startsWith(stack.url) ? route.continue() : route.abort(),
    );
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().endsWith(REPORT_PATH))
        failed.push(`${response.status()} ${response.url()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await storefront?.close();
  });

  it(
    "becomes ready in the publisher's brand and price, and sells the report to the publisher's address",
    { timeout: 90_000 },
    async () => {
      const storefront = await page.goto(`${stack.url}/p/acme/x402-buyer/`);
      expect(storefront?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      // Ready means app.js and the chunks it imports ran: before that every control is disabled.
      await page.waitForSelector('body[data-ready="true"]').catch((error: unknown) => {
        expect(failed, 'what the page could not load').toEqual([]);
        throw error;
      });
      expect(await page.textContent('.publisher-brand')).toContain('Sold by acme Research');
      // The page checks the price at once; "Check the price again" is disabled while that check runs.
      await page.waitForSelector('#challenge:not([hidden])');
      for (const id of ['connect-pera', 'connect-defly', 'check-price'])
        expect(await page.isDisabled(`#${id}`), id).toBe(false);
      expect(await page.textContent('#offer-amount')).toBe('0.15 USDC (150000 units)');
      expect(await page.textContent('#offer-payee')).toBe(acmePayTo);

      await page.click('#create-dev-wallet');
      await page.waitForSelector('#wallet-status:not([hidden])');
      const paidAnswer = page.waitForResponse(
        (response) =>
          response.url().endsWith(REPORT_PATH) && !!response.request().headers()['payment-signature'],
      );
      await page.click('#pay');
      const answer = await paidAnswer;
      expect(answer.status()).toBe(200);
      expect(paidReceiver(answer.request().headers()['payment-signature']!)).toBe(acmePayTo);
      await page.waitForSelector('#result:not([hidden])');
      expect(await page.locator('.asset-table tbody tr').count()).toBe(3);
      expect(failed).toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );
});
