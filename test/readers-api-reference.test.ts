// The interactive API reference at /docs/api/ in chromium, with every request off the local origin cut: it renders
// the operations from the site's own openapi.json using only the bundled script (no CDN).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreviewApp } from '../generator/serve/preview.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts', 'readers');

describe.skipIf(!hasChromium)('interactive API reference', () => {
  let browser: Browser;
  let site: BuiltSite;
  let origin = '';
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    site = await generateAndBuild({ runs: 1 });
    const server = await listen(createPreviewApp({ root: site.distDir }), 0);
    origin = server.url;
    close = () => server.close();
    browser = await launchChromium();
    await mkdir(ARTIFACTS, { recursive: true });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await close();
    await site?.cleanup();
  });

  it.each([1280])(
    'renders the operations offline at %i px',
    async (width) => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const outside: string[] = [];
      await context.route('**/*', (route) => {
        if (route.request().url().startsWith(origin)) return route.continue();
        outside.push(route.request().url());
        return route.abort();
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${origin}/docs/api/`);
      await page.waitForFunction(() => document.body.innerText.includes('Paid (x402)'), undefined, {
        timeout: 60_000,
      });
      const text = await page.evaluate(() => document.body.innerText);
      // The operations are listed by their summaries, grouped by tag.
      for (const title of ['Market regime', 'Main brain snapshot', 'Statistics', 'Free snapshots'])
        expect(text).toContain(title);
      expect(text).toContain('402');
      await page.screenshot({ path: join(ARTIFACTS, `api-reference-${width}.png`) });
      await context.close();
      expect(errors).toEqual([]);
      expect(outside).toEqual([]);
    },
    120_000,
  );
});
