// The interactive API reference at /docs/api/ in chromium, with every request off the local origin cut: it renders
// the operations from the site's own openapi.json using only the bundled script (no CDN), shows a paid
// operation's documented 402, and its try-it sends a free request to the local server and gets its 200. The site
// is built for the local origin it is served on, as a deployment is built for its public one.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { freePort } from './free-port.ts';
import { generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';
import { settleAll } from './helpers/settle-all.ts';

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'readers');

describe.skipIf(!hasChromium)('interactive API reference', () => {
  let browser: Browser;
  let site: BuiltSite;
  let origin = '';
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    // The site and the browser do not depend on each other: start them together.
    await settleAll([
      (async () => {
        const port = await freePort();
        site = await generateAndBuild({ runs: 1, baseUrl: `http://127.0.0.1:${port}/` });
        const server = await listen(createPreviewApp({ root: site.distDir }), port);
        origin = server.url.replace(/\/$/, '');
        close = () => server.close();
      })(),
      (async () => {
        browser = await launchChromium();
      })(),
      mkdir(ARTIFACTS, { recursive: true }),
    ]);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await close();
    await site?.cleanup();
  });

  /** A page whose requests off the local origin are cut and recorded; page errors are recorded too. */
  async function offlinePage(width: number) {
    const context: BrowserContext = await browser.newContext({ viewport: { width, height: 900 } });
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      if (route.request().url().startsWith(origin)) return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    const page: Page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const open = async (hash = '') => {
      await page.goto(`${origin}/docs/api/${hash}`);
      await page.waitForFunction(() => document.body.innerText.includes('Paid (x402)'), undefined, {
        timeout: 60_000,
      });
    };
    return { context, page, open, outside, errors };
  }

  it.each([1280])(
    'renders the operations offline at %i px',
    async (width) => {
      const { context, page, open, outside, errors } = await offlinePage(width);
      await open();
      const text = await page.evaluate(() => document.body.innerText);
      // The operations are listed by their summaries, grouped by tag.
      for (const title of ['Market regime', 'Main brain snapshot', 'Statistics', 'Free snapshots'])
        expect(text).toContain(title);
      expect(text).toContain('402');
      // Scalar's cloud features (AI chat, MCP generation, sharing) would send the document off the site: off.
      for (const cloud of ['Ask AI', 'Generate MCP', 'Developer Tools']) expect(text).not.toContain(cloud);
      // The reference has room to read: the site's own page styles do not squeeze its content column.
      const column = await page.evaluate(
        () => document.querySelector('main.references-rendered')?.getBoundingClientRect().width ?? 0,
      );
      expect(column).toBeGreaterThan(width / 2);
      await page.screenshot({ path: join(ARTIFACTS, `api-reference-${width}.png`) });
      await context.close();
      expect(errors).toEqual([]);
      expect(outside).toEqual([]);
    },
    120_000,
  );

  it('shows a paid operation’s documented 402 and the body it carries', async () => {
    const { context, page, open, outside, errors } = await offlinePage(1280);
    const operation = 'tag/paid-x402/GET/api/x402-market-regime.php';
    await open(`#${operation}`);
    const section = page.locator(`[id$="${operation}"]`).first();
    await section.waitFor({ timeout: 30_000 });
    const answer402 = section.locator(`[id$="${operation}.responses.402"]`);
    await expect.poll(() => answer402.count()).toBeGreaterThan(0);
    expect(await answer402.first().innerText()).toMatch(/^402\s+Payment required/);
    // Opened from the keyboard: on hover, the media-type menu lies over the button's right half.
    await answer402.first().focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => answer402.first().getAttribute('aria-expanded')).toBe('true');
    // The expanded 402 lists the fields of the payment-required body, as openapi.json documents them.
    await expect
      .poll(() => section.innerText())
      .toMatch(/x402Version[\s\S]*accepts|accepts[\s\S]*x402Version/);
    const text = await section.innerText();
    expect(text).toContain('Payment required: no payment, or the payment was invalid or did not settle.');
    expect(text).toContain('PAYMENT-REQUIRED');
    await page.screenshot({ path: join(ARTIFACTS, 'api-reference-402.png') });
    await context.close();
    expect(errors).toEqual([]);
    expect(outside).toEqual([]);
  }, 120_000);

  it('tries a free endpoint against the local server and shows its 200', async () => {
    const { context, page, open, outside, errors } = await offlinePage(1280);
    await open('#tag/free-snapshots/GET/api/market-regime.php');
    await page
      .getByRole('button', { name: /Test Request.*\/api\/market-regime\.php/ })
      .first()
      .click();
    const send = page.getByRole('button', { name: /^Send Request/ }).first();
    await send.waitFor({ timeout: 30_000 });
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${origin}/api/market-regime.php`, { timeout: 30_000 }),
      send.click(),
    ]);
    expect(response.status()).toBe(200);
    expect(((await response.json()) as { endpoint: string }).endpoint).toBe('market-regime');
    // The client shows the answer it got: the status and the body.
    await expect.poll(() => page.evaluate(() => document.body.innerText)).toMatch(/200\s*OK|Status:?\s*200/i);
    expect(await page.evaluate(() => document.body.innerText)).toContain('"endpoint": "market-regime"');
    await page.screenshot({ path: join(ARTIFACTS, 'api-reference-try-it.png') });
    await context.close();
    expect(errors).toEqual([]);
    expect(outside).toEqual([]);
  }, 120_000);
});
