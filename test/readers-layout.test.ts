// Every page of a built site, and the buyer page, in Debian's chromium at 360, 390 and 768 px: the page never
// scrolls sideways and no element is wider than the viewport (content inside an element that scrolls sideways
// on purpose, such as a wide table's scroll box or a code block, is that element's business). The tables, at 360
// and 1280 px: no word in a cell is cut in two (names break at the <wbr> after / . - _ and [] only), a table wider
// than its box scrolls in it and says so, and the endpoints' field tables fit their column. The buyer page at 360 px:
// a skip link first and navigation links large enough to tap.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { hasChromium, launchChromium, startBuyerStack } from './buyer-stack.ts';
import type { BuyerStack } from './buyer-stack.ts';
import { generateAndBuild, htmlPages } from './site-fixture.ts';
import { settleAll } from './helpers/settle-all.ts';
import type { BuiltSite } from './site-fixture.ts';

const WIDTHS = [360, 390, 768];

/** Elements wider than the viewport or reaching past its right edge, outside deliberate horizontal scrollers. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const found: string[] = [];
    if (document.documentElement.scrollWidth > width + 1)
      found.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    // Whether an element, or an ancestor of it below body, scrolls sideways. querySelectorAll lists elements in
    // document order, so a parent's answer is known before its children's: one computed style per element rather
    // than one per ancestor of every element.
    const scrollsHere = new Map<Element, boolean>();
    for (const el of document.body.querySelectorAll('*')) {
      const overflowX = getComputedStyle(el).overflowX;
      const parent = el.parentElement;
      const inScroller = parent !== null && parent !== document.body && scrollsHere.get(parent) === true;
      scrollsHere.set(el, inScroller || ['auto', 'scroll'].includes(overflowX));
      if (inScroller) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      // Text that does not wrap spills out of a box that fits: it widens the page just the same.
      const spills = overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1;
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

interface TableLayout {
  table: number;
  box: number;
  scrolls: boolean;
  marked: boolean;
  /** Places where a line ends between two letters or digits of one word: "mar|ket". */
  cuts: string[];
}

/** Each table's width against its box's, and the words its cells cut across two lines. */
function tableLayouts(page: Page): Promise<TableLayout[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('main table')].map((table) => {
      const box = table.closest('.table-wrap') ?? table.parentElement!;
      const cuts: string[] = [];
      const range = document.createRange();
      const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        // A text node drawn on one line (or not at all) has every letter at one top: none of its words is cut.
        // Only a node drawn in more than one piece is measured letter by letter.
        range.selectNodeContents(node);
        if (range.getClientRects().length <= 1) continue;
        let previousTop: number | null = null;
        for (let i = 0; i < text.length; i += 1) {
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const top = range.getBoundingClientRect().top;
          const wordGoesOn = i > 0 && /[\p{L}\p{N}]/u.test(text[i - 1]!) && /[\p{L}\p{N}]/u.test(text[i]!);
          if (previousTop !== null && top > previousTop + 2 && wordGoesOn)
            cuts.push(`${text.slice(Math.max(0, i - 10), i)}|${text.slice(i, i + 10)}`);
          previousTop = top;
        }
      }
      return {
        table: Math.round(table.getBoundingClientRect().width),
        box: box.clientWidth,
        scrolls: ['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
        marked: box.classList.contains('scrolls') && (box as HTMLElement).tabIndex === 0,
        cuts: cuts.slice(0, 5),
      };
    }),
  );
}

/** The endpoint pages with the longest field names (teacher_brain.metrics.calibration[].mean_forecast_probability). */
const FIELD_TABLE_PAGES = [
  '/docs/endpoints/teacher-lessons/',
  '/docs/endpoints/statistics/',
  '/docs/endpoints/shared-intelligence/',
  '/docs/endpoints/paid-main-brain/',
];

describe.skipIf(!hasChromium)('no horizontal overflow on a phone or a tablet', () => {
  let browser: Browser;
  let site: BuiltSite;
  let origin = '';
  let pages: string[] = [];
  let closeServer: () => Promise<void> = async () => {};
  let buyer: BuyerStack;
  /** One tab for the site's pages: each width loads every page anew, the site's scripts from a warm cache. */
  let sitePage: Page;

  beforeAll(async () => {
    // The site, the buyer stack and the browser do not depend on one another: start them together.
    await settleAll([
      (async () => {
        site = await generateAndBuild({ runs: 3 });
        const server = await listen(createPreviewApp({ root: site.distDir }), 0);
        origin = server.url;
        closeServer = () => server.close();
        pages = await htmlPages(site.distDir);
      })(),
      (async () => {
        buyer = await startBuyerStack();
        await buyer.setConfig(buyer.developmentConfig());
      })(),
      (async () => {
        browser = await launchChromium();
        sitePage = await browser.newPage();
      })(),
    ]);
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
      const page = sitePage;
      await page.setViewportSize({ width, height: 800 });
      const problems: string[] = [];
      for (const path of pages) {
        await page.goto(`${origin}${path}`);
        // Measure pages as rendered: the API reference draws itself after load (its loading skeleton is not the page).
        await page.waitForFunction(() => !document.querySelector('.introduction-skeleton'), null, {
          timeout: 15_000,
        });
        for (const problem of await overflowing(page)) problems.push(`${path} ${problem}`);
      }
      expect(problems).toEqual([]);
    },
    120_000,
  );

  it.each([360, 1280])(
    'tables at %i px: no word cut in two, wider tables scroll in their box and say so',
    async (width) => {
      const page = sitePage;
      await page.setViewportSize({ width, height: 800 });
      const problems: string[] = [];
      let tables = 0;
      for (const path of pages.filter((p) => p === '/' || p.startsWith('/docs/'))) {
        await page.goto(`${origin}${path}`);
        for (const [i, layout] of (await tableLayouts(page)).entries()) {
          tables += 1;
          const where = `${path} table ${i + 1}`;
          for (const cut of layout.cuts) problems.push(`${where} cuts a word: ${cut}`);
          if (layout.table > layout.box + 1) {
            if (!layout.scrolls)
              problems.push(`${where} is ${layout.table} px in a ${layout.box} px box that does not scroll`);
            if (!layout.marked) problems.push(`${where} is wider than its box but not marked as scrolling`);
          }
          if (FIELD_TABLE_PAGES.includes(path) && layout.table > layout.box + 1)
            problems.push(`${where}: the field table is ${layout.table} px in its ${layout.box} px column`);
        }
      }
      expect(tables).toBeGreaterThan(FIELD_TABLE_PAGES.length);
      expect(problems).toEqual([]);
    },
    180_000,
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

  // As on the site's own pages (site-phone.test.ts): a skip link first, and navigation links large enough to tap.
  it('the buyer page at 360 px: the first Tab skips to main, navigation links are at least 24 x 24 px', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const page = await context.newPage();
    await page.goto(buyer.pageUrl);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN');
    const links = await page.evaluate(() =>
      [...document.querySelectorAll('header nav a')].map((a) => {
        const r = a.getBoundingClientRect();
        return { text: a.textContent, width: r.width, height: r.height };
      }),
    );
    await context.close();
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((a) => a.width < 24 || a.height < 24)).toEqual([]);
  });
});
