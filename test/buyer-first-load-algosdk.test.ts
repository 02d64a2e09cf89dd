// The buyer page's first load without algosdk (about 490 KB minified, 11 s on a 2 s RTT / 50 KB/s phone link): the
// price check and the offer come without it, algosdk comes with the first wallet chosen and the payment is made
// with it; config.json's payee is checked for its form at load and for its checksum with algosdk then, refused with
// the words of a bad config.json before anything is signed. In Debian's chromium against the local stack on
// loopback (test/buyer-stack.ts), and the page's modules in Node.
import algosdk from 'algosdk';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PaymentRequirement } from '../generator/buyer/challenge.ts';
import { ALGORAND_MAINNET_GENESIS_HASH } from '../generator/buyer/human-report-terms.ts';
import { NO_VALID_MERCHANT, confirmPayee, parseBuyerConfig } from '../site/x402-buyer/src/config.ts';
import { buildPaymentGroup } from '../site/x402-buyer/src/payment-group.ts';
import {
  freshBuyerContext,
  hasChromium,
  launchChromium,
  startBuyerStack,
  tamperedChallenge,
} from './buyer-stack.ts';
import type { BuyerStack } from './buyer-stack.ts';

/** A string of algosdk's own (its address decoder's error) that no other code of the page carries. */
const ALGOSDK_MARK = 'wrong checksum for address';
const MAINNET = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';

/** A valid address with one character of its public key changed: the right form, a checksum that fails. */
function withBadChecksum(address: string): string {
  const changed = `${address.slice(0, 10)}${address[10] === 'A' ? 'B' : 'A'}${address.slice(11)}`;
  expect(algosdk.isValidAddress(changed)).toBe(false);
  return changed;
}

describe('config.json’s payee, checked without algosdk at load and with it before signing', () => {
  const base = 'http://127.0.0.1/x402-buyer/config.json';
  const report = 'http://127.0.0.1/report';
  const good = algosdk.generateAccount().addr.toString();
  const bad = withBadChecksum(good);
  const config = (merchantAddress: string) => ({
    merchantAddress,
    network: MAINNET,
    facilitatorMode: 'production',
  });

  it('refuses what is not of an address’s form at load, with the words it always used', () => {
    for (const merchantAddress of ['ABC', good.toLowerCase(), `${good}A`, good.replace(/.$/, '1')])
      expect(parseBuyerConfig(config(merchantAddress), base, report)).toEqual({
        ok: false,
        reason: NO_VALID_MERCHANT,
      });
    expect(NO_VALID_MERCHANT).toBe('config.json has no valid merchant address (merchantAddress).');
  });

  it('refuses a checksum that fails with algosdk (the same words), and lets a caller with algosdk check at once', async () => {
    const loaded = parseBuyerConfig(config(bad), base, report);
    expect(loaded.ok).toBe(true); // its form: the checksum waits for algosdk
    if (!loaded.ok) return;
    expect(await confirmPayee(loaded.config)).toEqual({ ok: false, reason: NO_VALID_MERCHANT });
    const fine = parseBuyerConfig(config(good), base, report);
    expect(fine.ok && (await confirmPayee(fine.config))).toEqual(fine);
    expect(parseBuyerConfig(config(bad), base, report, algosdk.isValidAddress)).toEqual({
      ok: false,
      reason: NO_VALID_MERCHANT,
    });
  });

  it('never builds a payment group to a payee whose checksum fails', () => {
    const requirement: PaymentRequirement = {
      scheme: 'exact',
      network: MAINNET,
      amount: '100000',
      asset: '31566704',
      payTo: bad,
      maxTimeoutSeconds: 60,
      extra: {},
    };
    const params = {
      genesisHash: ALGORAND_MAINNET_GENESIS_HASH,
      genesisId: 'mainnet-v1.0',
      lastRound: 1000n,
      minFee: 1000n,
      feePerByte: 0n,
    };
    expect(() => buildPaymentGroup(requirement, good, params, 'nonce')).toThrow(
      /fails its checksum\. Nothing was signed/,
    );
  });
});

describe.skipIf(!hasChromium)(
  'the buyer page’s first load in chromium, without algosdk',
  { timeout: 60_000 },
  () => {
    let stack: BuyerStack;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];
    /** Every script the page received, by URL, with whether it carries algosdk. */
    let scripts: Promise<{ url: string; algosdk: boolean }>[] = [];

    beforeAll(async () => {
      [stack, browser] = await Promise.all([startBuyerStack(), launchChromium()]);
    });

    afterAll(async () => {
      await browser?.close();
      await stack?.close();
    });

    beforeEach(async () => {
      context = await freshBuyerContext(stack, browser, { viewport: { width: 390, height: 844 } });
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
      pageErrors.length = 0;
      scripts = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      page.on('response', (response: Response) => {
        if (response.request().resourceType() !== 'script') return;
        scripts.push(
          response.text().then(
            (text) => ({ url: response.url(), algosdk: text.includes(ALGOSDK_MARK) }),
            () => ({ url: response.url(), algosdk: false }),
          ),
        );
      });
    });

    afterEach(async () => {
      await context.close();
      expect(pageErrors).toEqual([]);
    });

    const scriptsWithAlgosdk = async () =>
      (await Promise.all(scripts)).filter((script) => script.algosdk).map((script) => script.url);

    /** The page loaded, its price checked and the offer shown: what a person sees before choosing a wallet. */
    const offerShown = async () => {
      await page.goto(stack.pageUrl);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#challenge:not([hidden])');
      await page.waitForLoadState('networkidle');
    };

    it('shows the checked offer without algosdk, fetches it with the development wallet, and pays', async () => {
      await offerShown();
      expect(await page.isVisible('#confirm')).toBe(true);
      expect(await page.textContent('#config-status')).toContain(`Payments go only to ${stack.payTo}`);
      expect(await scriptsWithAlgosdk()).toEqual([]);

      await page.click('#create-dev-wallet');
      await page.waitForSelector('#wallet-status:not([hidden])');
      await expect.poll(scriptsWithAlgosdk).not.toEqual([]);
      await page.click('#pay');
      await page.waitForSelector('#result:not([hidden])');
      expect(stack.signatures).toHaveLength(1);
    });

    it('refuses a payee whose checksum fails as soon as a wallet is chosen, and signs nothing', async () => {
      const bad = withBadChecksum(stack.payTo);
      await stack.setConfig({ ...stack.developmentConfig(), merchantAddress: bad });
      // The paywall (a test double here) asks for that very address: only the checksum is wrong.
      stack.hook = async (_request, real) =>
        tamperedChallenge(await real(), (accepted) => (accepted.payTo = bad));
      await offerShown();
      expect(await scriptsWithAlgosdk()).toEqual([]);

      await page.click('#create-dev-wallet');
      await page.waitForSelector('#refusal:not([hidden])');
      const refusal = `${NO_VALID_MERCHANT} Without it this page cannot check who would be paid, so it will not pay.`;
      expect(await page.textContent('#config-status')).toBe(refusal);
      expect(await page.textContent('#refusal-reasons')).toBe(refusal);
      expect(await page.isVisible('#confirm')).toBe(false);
      expect(await page.isDisabled('#pay')).toBe(true);
      expect(await page.textContent('#status')).toBe('Payment request refused: nothing will be signed.');
      expect(stack.signatures).toEqual([]); // no payment ever reached the paywall
    });
  },
);
