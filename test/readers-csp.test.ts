// Every page of a built site, and the buyer page, in Debian's chromium with the site's Content-Security-Policy
// served as `emi serve` serves it: the header is on every page, no `securitypolicyviolation` event fires, no
// console error names the policy, and the pages' own scripts still run (copy buttons, the API reference, the
// buyer page's wallet choice). A canary page with an inline script shows that a violation would be caught.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { CONTENT_SECURITY_POLICY } from '../schemas/delivery.ts';
import { hasChromium, launchChromium, startBuyerStack } from './buyer-stack.ts';
import type { BuyerStack } from './buyer-stack.ts';
import { generateAndBuild, htmlPages } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';
import { settleAll } from './helpers/settle-all.ts';

const CANARY = '/csp-canary.html';

interface Watched {
  page: Page;
  /** Policy violations and console errors about the policy seen so far. */
  problems: () => Promise<string[]>;
}

/** A page that records every policy violation (an init script runs outside the page's policy) and CSP console errors. */
async function watchedPage(context: BrowserContext): Promise<Watched> {
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (e) =>
      seen.push(
        `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`,
      ),
    );
  });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) consoleErrors.push(message.text());
  });
  return {
    page,
    problems: async () => [
      ...consoleErrors,
      ...(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)),
    ],
  };
}

describe.skipIf(!hasChromium)('a strict Content-Security-Policy', () => {
  let browser: Browser;
  let site: BuiltSite;
  let origin = '';
  let pages: string[] = [];
  let closeServer: () => Promise<void> = async () => {};
  let buyer: BuyerStack;

  beforeAll(async () => {
    // The site, the buyer stack and the browser do not depend on one another: start them together.
    await settleAll([
      (async () => {
        site = await generateAndBuild({ runs: 1 });
        pages = await htmlPages(site.distDir);
        await writeFile(
          join(site.distDir, CANARY.slice(1)),
          '<!doctype html><title>canary</title><script>document.title = "inline ran"</script>',
        );
        const server = await listen(createPreviewApp({ root: site.distDir }), 0);
        origin = server.url;
        closeServer = () => server.close();
      })(),
      (async () => {
        buyer = await startBuyerStack();
        await buyer.setConfig(buyer.developmentConfig());
      })(),
      (async () => {
        browser = await launchChromium();
      })(),
    ]);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await closeServer();
    await site?.cleanup();
    await buyer?.close();
  });

  it('forbids inline scripts and handlers and allows scripts from the site only', () => {
    const directives = new Map(
      CONTENT_SECURITY_POLICY.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)] as const),
    );
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
  });

  it('catches an inline script (the canary: the check can fail)', async () => {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    const answer = await page.goto(`${origin}${CANARY}`);
    expect(answer?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(await page.title()).toBe('canary');
    await expect
      .poll(problems)
      .toEqual([
        expect.stringMatching(/Executing inline script violates .*script-src 'self'/),
        expect.stringContaining('script-src-elem blocked inline'),
      ]);
    await context.close();
  }, 60_000);

  it('serves every page with the policy, and no page breaks it', async () => {
    expect(pages).toContain('/docs/api/');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    const found: string[] = [];
    for (const path of pages) {
      const answer = await page.goto(`${origin}${path}`);
      expect(answer?.headers()['content-security-policy'], path).toBe(CONTENT_SECURITY_POLICY);
      // The API reference draws itself after load; let it finish so that its styles and requests are checked too.
      await page.waitForFunction(() => !document.querySelector('.introduction-skeleton'), null, {
        timeout: 30_000,
      });
      for (const problem of await problems()) found.push(`${path}: ${problem}`);
    }
    expect(found).toEqual([]);
    await context.close();
  }, 180_000);

  it('still runs the pages’ own scripts: copy buttons and the API reference', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await watchedPage(context);
    await page.goto(`${origin}/docs/pay-from-code/`);
    await expect.poll(() => page.locator('button.copy').count()).toBeGreaterThan(0);
    await page.goto(`${origin}/docs/api/`);
    await page.waitForFunction(() => document.body.innerText.includes('Paid (x402)'), null, {
      timeout: 60_000,
    });
    expect(await problems()).toEqual([]);
    await context.close();
  }, 120_000);

  it('lets the buyer page run, and reach wallet bridges and an algod node', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    // Stand-ins for the wallet vendors' servers: the test never leaves this machine.
    await context.route(
      /^https:\/\/(wc\.perawallet\.app|static\.defly\.app|mainnet-api\.algonode\.cloud)\//,
      (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{}' }),
    );
    await context.routeWebSocket(/^wss:\/\//, (socket) => socket.onMessage(() => {}));
    const { page, problems } = await watchedPage(context);
    const answer = await page.goto(buyer.pageUrl);
    expect(answer?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    await page.waitForLoadState('networkidle');
    // The page's bundle ran: it read its config and says who would be paid.
    await expect
      .poll(() => page.locator('#config-status').innerText())
      .toContain('development stack: test money on a local ledger');
    const reached = await page.evaluate(async () => {
      const fetched = await Promise.all(
        [
          'https://wc.perawallet.app/config.json',
          'https://static.defly.app/wc-bridge-servers.json',
          'https://mainnet-api.algonode.cloud/v2/transactions/params',
        ].map((url) => fetch(url).then((r) => r.status)),
      );
      const opened = await new Promise<string>((resolve) => {
        const socket = new WebSocket('wss://wallet-connect-a.perawallet.app/?env=browser');
        socket.onopen = () => resolve('open');
        socket.onerror = () => resolve('error');
      });
      return { fetched, opened };
    });
    expect(reached).toEqual({ fetched: [200, 200, 200], opened: 'open' });
    expect(await problems()).toEqual([]);
    await context.close();
  }, 120_000);

  it('pays on the buyer page and renders the report with no violation', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const { page, problems } = await watchedPage(context);
    await page.goto(buyer.pageUrl);
    await page.click('#create-dev-wallet');
    await page.waitForSelector('#wallet-status:not([hidden])');
    await page.click('#pay');
    await page.waitForSelector('#result:not([hidden])');
    expect(await page.textContent('#tx-id')).toMatch(/^[A-Z2-7]{52}$/);
    expect(await page.locator('figure.report-chart svg').count()).toBeGreaterThan(0);
    expect(await problems()).toEqual([]);
    await context.close();
  }, 120_000);
});
