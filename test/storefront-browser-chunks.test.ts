// A publisher's branded storefront (`/p/<id>/x402-buyer/`) in Debian's chromium, on the local stack of `emi serve`
// with a publishers config file, serving the buyer page as `emi build` bundles it: app.js at x402-buyer/app.js and
// its chunks under assets/x402-buyer/, imported relative to app.js. The page must load its code from the site's own
// /x402-buyer/app.js (its chunk imports then resolve where the chunks are; from /p/<id>/x402-buyer/app.js they
// would point into /p/<id>/assets/, a 404 on every host), become ready under the site's policy (same origin), show
// the publisher's brand and price, and sell the report with the development wallet paying the publisher's address.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleBuyerPage } from '../generator/buyer/bundle.ts';
import { decodeBase64Json } from '../generator/buyer/x402-codec.ts';
import { startLocalStack, type LocalStack } from '../generator/local-stack.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { CONTENT_SECURITY_POLICY } from '../schemas/delivery.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { humanReportFixture } from './buyer-report-fixture.ts';
import { writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry } from './publishers-harness.ts';

/** The ports this suite may use (the stack's own port is part of every paid path's resource URL). */
const PORTS = { first: 19600, last: 19609 };
const REPORT_PATH = '/p/acme/api/x402-atlas-human-report.php';

const portIsFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

async function freePortInRange(): Promise<number> {
  for (let port = PORTS.first; port <= PORTS.last; port += 1) if (await portIsFree(port)) return port;
  throw new Error(`no free port in ${PORTS.first}-${PORTS.last}`);
}

/** The built buyer page as `emi build` leaves it in dist/: index.html, buyer.css, app.js and its chunks. */
async function writeBuiltBuyerPage(dist: string): Promise<void> {
  const page = join(dist, 'x402-buyer');
  await mkdir(page, { recursive: true });
  for (const file of ['index.html', 'buyer.css'])
    await copyFile(join(import.meta.dirname, '..', 'site', 'x402-buyer', file), join(page, file));
  await bundleBuyerPage({ outFile: join(page, 'app.js') }); // chunks in dist/assets/x402-buyer/
}

/** The paid files, fresh, with a human report the page renders in full. */
async function writePaidFiles(paid: string): Promise<void> {
  await mkdir(paid, { recursive: true });
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
  let root = '';
  let stack: LocalStack;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const failed: string[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-storefront-browser-'));
    const dist = join(root, 'dist');
    const paid = join(root, 'paid');
    await Promise.all([writeBuiltBuyerPage(dist), writePaidFiles(paid)]);
    await writeFile(join(dist, 'index.html'), '<!doctype html><title>home</title>\n');
    const config = join(root, 'emi.config.json');
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', acmePayTo)] }));
    const ledgerFile = join(root, 'publishers.sqlite');
    const ledger = new SqliteCreditLedger(ledgerFile);
    await ledger.credit('acme', 2);
    ledger.close();
    stack = await startLocalStack({
      port: await freePortInRange(),
      host: '127.0.0.1',
      dir: dist,
      paid,
      devFacilitatorPort: 0,
      config,
      ledgerFile,
      log: () => {},
    });
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
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
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
