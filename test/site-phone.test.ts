// The built site as a phone shows it (360 x 740 in Debian's chromium), for what a reader meets first: chart labels
// inside their chart and large enough to read, a skip link as the first Tab stop, navigation links large enough to
// tap, a styled arena vote form that fits the screen, one h1 per page, and dates that say their year.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { MIN_CHART_RUNS } from '../generator/site/history.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { generateAndBuild, htmlPages } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';
import { settleAll } from './helpers/settle-all.ts';

const PHONE = { width: 360, height: 740 };
/** WCAG 2.2 target size (minimum), in CSS px. */
const MIN_TARGET = 24;
/** The smallest chart label we call readable, in CSS px as drawn (after the SVG is scaled to the screen). */
const MIN_LABEL_PX = 10;

/** Labels of each `svg.chart` that reach outside it, are drawn too small, or overlap another label. */
function chartLabelProblems(page: Page): Promise<{ charts: number; problems: string[] }> {
  return page.evaluate(
    ({ minPx }) => {
      const problems: string[] = [];
      const charts = [...document.querySelectorAll<SVGSVGElement>('svg.chart')];
      charts.forEach((svg, n) => {
        const box = svg.getBoundingClientRect();
        const scale = box.width / svg.viewBox.baseVal.width;
        const labels = [...svg.querySelectorAll('text')].map((text) => ({
          text: text.textContent ?? '',
          r: text.getBoundingClientRect(),
          px: parseFloat(getComputedStyle(text).fontSize) * scale,
        }));
        for (const { text, r, px } of labels) {
          if (
            r.left < box.left - 0.5 ||
            r.right > box.right + 0.5 ||
            r.top < box.top - 0.5 ||
            r.bottom > box.bottom + 0.5
          )
            problems.push(`chart ${n + 1}: "${text}" reaches outside the chart`);
          if (px < minPx) problems.push(`chart ${n + 1}: "${text}" is drawn at ${px.toFixed(1)} px`);
        }
        labels.forEach((a, i) => {
          for (const b of labels.slice(i + 1)) {
            if (a.r.left < b.r.right && b.r.left < a.r.right && a.r.top < b.r.bottom && b.r.top < a.r.bottom)
              problems.push(`chart ${n + 1}: "${a.text}" overlaps "${b.text}"`);
          }
        });
      });
      if (document.documentElement.scrollWidth > document.documentElement.clientWidth)
        problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px`);
      return { charts: charts.length, problems };
    },
    { minPx: MIN_LABEL_PX },
  );
}

/** Waits until the API reference has drawn the document, title heading included. */
async function apiReferenceDrawn(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      // textContent: on a phone the reference's sidebar, which names the paid operations, is hidden.
      document.body.textContent?.includes('Paid (x402)') &&
      [...document.querySelectorAll('#api-reference-root h1, #api-reference-root h2')].some((h) =>
        h.textContent?.includes('Educational Market Intelligence API'),
      ),
    undefined,
    { timeout: 60_000 },
  );
}

describe.skipIf(!hasChromium)('the site on a phone (360 x 740)', () => {
  let browser: Browser;
  let site: BuiltSite;
  let origin = '';
  let pages: string[] = [];
  let closeServer: () => Promise<void> = async () => {};
  let page: Page;

  beforeAll(async () => {
    // The site and the browser do not depend on each other: start them together.
    await settleAll([
      (async () => {
        // Enough runs for every chart of the home and track record pages.
        site = await generateAndBuild({ runs: MIN_CHART_RUNS });
        const server = await listen(createPreviewApp({ root: site.distDir }), 0);
        origin = server.url.replace(/\/$/, '');
        closeServer = () => server.close();
        pages = await htmlPages(site.distDir);
      })(),
      (async () => {
        browser = await launchChromium();
        page = await browser.newPage({ viewport: PHONE });
      })(),
    ]);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await closeServer();
    await site?.cleanup();
  });

  it('chart labels stay inside their chart, readable and apart, and the page does not scroll sideways', async () => {
    const found: Record<string, number> = {};
    const problems: string[] = [];
    for (const path of ['/', '/docs/track-record/']) {
      await page.goto(`${origin}${path}`);
      const result = await chartLabelProblems(page);
      found[path] = result.charts;
      problems.push(...result.problems.map((p) => `${path} ${p}`));
    }
    expect(found).toEqual({ '/': 3, '/docs/track-record/': 1 });
    expect(problems).toEqual([]);
  });

  it('the first Tab focuses a visible "Skip to content" link, which moves the focus to main', async () => {
    const problems: string[] = [];
    for (const path of pages) {
      await page.goto(`${origin}${path}`);
      await page.keyboard.press('Tab');
      const link = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement;
        const r = a.getBoundingClientRect();
        const onTop = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return {
          text: a.textContent?.trim(),
          href: a.getAttribute('href'),
          visible: r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && a.contains(onTop),
        };
      });
      const mainId = await page.evaluate(() => document.querySelector('body > main')?.id);
      if (link.text !== 'Skip to content' || !mainId || link.href !== `#${mainId}` || !link.visible) {
        problems.push(`${path}: first Tab stop is ${JSON.stringify(link)}, main is #${mainId}`);
        continue;
      }
      await page.keyboard.press('Enter');
      if (!(await page.evaluate(() => document.activeElement === document.querySelector('body > main'))))
        problems.push(`${path}: the skip link does not move the focus to main`);
    }
    expect(pages.length).toBeGreaterThan(10);
    expect(problems).toEqual([]);
  }, 120_000);

  it(`every navigation link is at least ${MIN_TARGET} x ${MIN_TARGET} px, apart, and in one row at 1280 px`, async () => {
    const problems: string[] = [];
    const boxesOf = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('body > header a')].map((a) => {
          const r = a.getBoundingClientRect();
          return {
            text: a.textContent?.trim() ?? '',
            left: r.left,
            right: r.right,
            top: r.top,
            bottom: r.bottom,
          };
        }),
      );
    for (const path of pages) {
      await page.goto(`${origin}${path}`);
      const boxes = await boxesOf();
      if (boxes.length < 5) problems.push(`${path}: ${boxes.length} links in the header`);
      boxes.forEach((a, i) => {
        const [w, h] = [a.right - a.left, a.bottom - a.top];
        if (w < MIN_TARGET || h < MIN_TARGET)
          problems.push(`${path}: "${a.text}" is ${w.toFixed(0)} x ${h.toFixed(0)} px`);
        for (const b of boxes.slice(i + 1)) {
          if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
            problems.push(`${path}: "${a.text}" overlaps "${b.text}"`);
        }
      });
    }
    expect(problems).toEqual([]);

    // The desktop layout keeps its single row of links under a short header.
    const desktop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await desktop.goto(`${origin}/`);
    const tops = await desktop.evaluate(() =>
      [...document.querySelectorAll('body > header nav a')].map((a) =>
        Math.round(a.getBoundingClientRect().top),
      ),
    );
    const header = await desktop.evaluate(
      () => document.querySelector('body > header')!.getBoundingClientRect().height,
    );
    await desktop.close();
    expect(new Set(tops).size).toBe(1);
    expect(header).toBeLessThan(90);
  }, 120_000);

  it('the arena vote form has styled controls that fit the screen', async () => {
    // What chromium draws for unstyled controls, to compare with.
    const blank = await browser.newPage({ viewport: PHONE });
    await blank.setContent('<button>b</button><select><option>a</option></select><input>');
    const STYLE = [
      'background-color',
      'border-top-color',
      'border-top-width',
      'border-top-left-radius',
      'padding-top',
    ];
    const stylesOf = (p: Page, selector: string) =>
      p.evaluate(
        ({ selector, props }) =>
          [...document.querySelectorAll<HTMLElement>(selector)]
            .filter((el) => el.getClientRects().length > 0)
            .map((el) => {
              const r = el.getBoundingClientRect();
              const style = getComputedStyle(el);
              return {
                name: `${el.tagName.toLowerCase()}#${el.id}`,
                tag: el.tagName.toLowerCase(),
                style: props.map((prop) => style.getPropertyValue(prop)),
                left: r.left,
                right: r.right,
                height: r.height,
              };
            }),
        { selector, props: STYLE },
      );
    const defaults = new Map((await stylesOf(blank, 'button, select, input')).map((c) => [c.tag, c.style]));
    await blank.close();

    await page.goto(`${origin}/docs/arena-rules/`);
    await page.click('#arena-vote summary'); // the pasted-signature fields
    const controls = await stylesOf(page, '#arena-vote :is(button, select, input)[id]');
    expect(controls.length).toBeGreaterThanOrEqual(6);
    const problems: string[] = [];
    for (const c of controls) {
      const plain = defaults.get(c.tag)!;
      const changed = STYLE.filter((_, i) => c.style[i] !== plain[i]);
      if (changed.length < 2)
        problems.push(`${c.name} looks unstyled (${changed.join(', ') || 'no change'})`);
      if (c.left < 0 || c.right > PHONE.width) problems.push(`${c.name} spans ${c.left}-${c.right} px`);
      if (c.height < 44) problems.push(`${c.name} is ${c.height} px tall`);
    }
    const form = await page.evaluate(() => {
      const root = document.getElementById('arena-vote')!;
      return { right: root.getBoundingClientRect().right, page: document.documentElement.scrollWidth };
    });
    expect(problems).toEqual([]);
    expect(form.right).toBeLessThanOrEqual(PHONE.width);
    expect(form.page).toBeLessThanOrEqual(PHONE.width);
  });

  it('every page has exactly one h1, also for assistive technology', async () => {
    const counts: Record<string, number[]> = {};
    for (const path of pages) {
      await page.goto(`${origin}${path}`);
      if (path === '/docs/api/') await apiReferenceDrawn(page);
      counts[path] = [
        await page.locator('h1').count(),
        await page.getByRole('heading', { level: 1, includeHidden: false }).count(),
      ];
    }
    expect(Object.entries(counts).filter(([, [tags, roles]]) => tags !== 1 || roles !== 1)).toEqual([]);
  }, 120_000);

  it('dates say their year: in <time datetime> on the home page, and nowhere without one', async () => {
    await page.goto(`${origin}/`);
    const times = await page.evaluate(() =>
      [...document.querySelectorAll('main time')].map((t) => ({
        datetime: t.getAttribute('datetime') ?? '',
        text: t.textContent ?? '',
      })),
    );
    expect(times.length).toBeGreaterThanOrEqual(2);
    for (const { datetime, text } of times) {
      expect(Number.isNaN(Date.parse(datetime))).toBe(false);
      expect(text).toContain(datetime.slice(0, 4));
      expect(text).toMatch(/\b\d{4}\b/);
    }

    // "11-26 01:01" or "Nov 21, 12:00" anywhere a reader (or a screen reader) meets it, without a year before it.
    const yearless =
      /(?<!\d{4}-)\b\d{2}-\d{2} \d{2}:\d{2}\b|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2}\b(?!,? \d{4})/g;
    const problems: string[] = [];
    for (const path of pages.filter((p) => p !== '/docs/api/')) {
      await page.goto(`${origin}${path}`);
      const text = await page.evaluate(() =>
        [
          document.body.textContent ?? '',
          ...[...document.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label')),
        ].join('\n'),
      );
      for (const match of text.matchAll(yearless)) problems.push(`${path}: "${match[0]}"`);
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
