// Every page of a built site, and the buyer page, in Debian's chromium at 360, 390 and 768 px: the page never
// scrolls sideways and no element is wider than the viewport (content inside an element that scrolls sideways
// on purpose, such as a wide table's scroll box or a code block, is that element's business).
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { hasChromium, launchChromium, startBuyerStack } from './buyer-stack.ts';
import type { BuyerStack } from './buyer-stack.ts';
import { generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

const WIDTHS = [360, 390, 768];

async function htmlPages(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.html'))
    .map((e) => `/${relative(dir, join(e.parentPath, e.name))}`.replace(/index\.html$/, ''))
    .sort();
}

/** Elements wider than the viewport or reaching past its right edge, outside deliberate horizontal scrollers. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const found: string[] = [];
    if (document.documentElement.scrollWidth > width + 1)
      found.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    const scrolls = (el: Element) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    for (const el of document.body.querySelectorAll('*')) {
      let parent = el.parentElement;
      let inScroller = false;
      while (parent && parent !== document.body) {
        if (scrolls(parent)) inScroller = true;
        parent = parent.parentElement;
      }
      if (inScroller) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      // Text that does not wrap spills out of a box that fits: it widens the page just the same.
      const spills = getComputedStyle(el).overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1;
      if (
        box.width > width + 1 ||
        box.right > width + 1 ||
        (spills && el.clientWidth > 0 && box.right + el.scrollWidth - el.clientWidth > width + 1)
      ) {
        const name = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''}`;
        found.push(
          `${name}: ${Math.round(box.width)} px wide, right edge ${Math.round(box.right)}, content ${el.scrollWidth} px`,
        );
      }
    }
    return found.slice(0, 10);
  });
}

describe.skipIf(!hasChromium)('no horizontal overflow on a phone or a tablet', () => {
  let browser: Browser;
  let site: BuiltSite;
  let origin = '';
  let pages: string[] = [];
  let closeServer: () => Promise<void> = async () => {};
  let buyer: BuyerStack;

  beforeAll(async () => {
    site = await generateAndBuild({ runs: 3 });
    const server = await listen(createPreviewApp({ root: site.distDir }), 0);
    origin = server.url;
    closeServer = () => server.close();
    pages = await htmlPages(site.distDir);
    buyer = await startBuyerStack();
    await buyer.setConfig(buyer.developmentConfig());
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await closeServer();
    await site?.cleanup();
    await buyer?.close();
  });

  it('builds the pages it checks', () => {
    expect(pages).toContain('/');
    expect(pages.some((p) => p.startsWith('/docs/'))).toBe(true);
    expect(pages).toContain('/docs/pay-from-code/');
  });

  it.each(WIDTHS)(
    'every site page at %i px',
    async (width) => {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      const problems: string[] = [];
      for (const path of pages) {
        await page.goto(`${origin}${path}`);
        // Measure pages as rendered: the API reference draws itself after load (its loading skeleton is not the page).
        await page.waitForFunction(() => !document.querySelector('.introduction-skeleton'), null, {
          timeout: 15_000,
        });
        for (const problem of await overflowing(page)) problems.push(`${path} ${problem}`);
      }
      await context.close();
      expect(problems).toEqual([]);
    },
    120_000,
  );

  it.each(WIDTHS)(
    'the buyer page at %i px',
    async (width) => {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      await page.goto(buyer.pageUrl);
      await page.waitForLoadState('networkidle');
      const problems = await overflowing(page);
      await context.close();
      expect(problems).toEqual([]);
    },
    60_000,
  );
});
