// The branded storefront on the whole local stack (`emi serve`: preview origin, paywall worker, development
// facilitator): `/p/<id>/x402-buyer/` is the buyer page in the publisher's brand, its config.json names only the
// publisher's address, brand text cannot inject markup, and unknown storefronts are JSON 404s.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../generator/local-stack.ts';
import { brandPage, escapeHtml } from '../paywall-worker/publishers/storefront.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import { parseBuyerConfig } from '../site/x402-buyer/src/config.ts';
import { checkChallenge } from '../generator/buyer/challenge.ts';
import { USDC_ASA_ID } from '../schemas/paid/terms.ts';
import { CONTENT_SECURITY_POLICY } from '../schemas/delivery.ts';
import { contrast, MIN_TEXT_CONTRAST } from '../paywall-worker/publishers/accent.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { fetchChallenge } from './paywall-harness.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { startStorefrontStack, type StorefrontStack } from './storefront-stack.ts';

const EVIL_NAME = `Evil </title><script>alert("x")</script> & 'Co'`;
const evilPayTo = account();
const evilEntry = {
  ...publisherEntry('evil', evilPayTo),
  brand: {
    name: EVIL_NAME,
    logoUrl: 'https://evil.example/logo.png?a="><script>alert(2)</script>',
    accentColor: '#123abc',
    contactUrl: 'mailto:desk@evil.example',
    termsUrl: 'https://evil.example/terms?x=<b>',
  },
};

let storefront: StorefrontStack;
let stack: LocalStack;
/** The built site's pages the buyer page links to: the home page, the docs and the payment terms. */
const SITE_PAGES = ['', 'docs', 'docs/payment-terms'];

beforeAll(async () => {
  const light = { ...publisherEntry('light', account()) };
  light.brand = { ...light.brand, accentColor: '#ffff00' }; // a light accent: white or yellow text would vanish
  storefront = await startStorefrontStack({
    prefix: 'emi-storefront-',
    publishers: [evilEntry, publisherEntry('plain', account()), light],
    credits: { evil: 2 },
    app: { stub: 'console.log("buyer page");\n' },
    // The site's pages the buyer page links to (as `emi build` writes them).
    pages: Object.fromEntries(
      SITE_PAGES.map((page) => [page, `<!doctype html><title>site page /${page}</title>\n`]),
    ),
  });
  ({ stack } = storefront);
}, 60_000);
afterAll(async () => {
  await storefront?.close();
});

describe('branded storefront', () => {
  it('serves the buyer page in the brand, with every brand text escaped', async () => {
    const response = await fetch(`${stack.url}/p/evil/x402-buyer/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    // The site's policy: even a brand text that slipped through could run no script.
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const html = await response.text();
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('</title><script>');
    expect(html).toContain(`<title>${escapeHtml(EVIL_NAME)}: Buy the atlas human report`);
    expect(html).toContain(`Sold by ${escapeHtml(EVIL_NAME)}</strong>`);
    expect(html).toContain('src="https://evil.example/logo.png?a=&quot;&gt;&lt;script&gt;');
    expect(html).toContain('href="https://evil.example/terms?x=&lt;b&gt;"');
    expect(html).toContain('--accent:#123abc');
    expect(html).toContain(evilPayTo);
    expect(html).toContain('<strong>0.15 USDC</strong>'); // the publisher's price, not the base price
    expect(html).not.toContain('0.10 USDC');
    // Exactly the page's own script tags remain: brand text added none.
    const source = (await import('node:fs')).readFileSync('site/x402-buyer/index.html', 'utf8');
    expect(html.match(/<script/g)?.length).toBe(source.match(/<script/g)?.length);
  });

  it("links to the site's own pages from a storefront as from the site's buyer page, never into /p/<id>/", async () => {
    const links = (html: string) =>
      [...html.matchAll(/<nav class="back[^>]*>([\s\S]*?)<\/nav>/g)].flatMap(([, nav]) =>
        [...(nav ?? '').matchAll(/href="([^"]+)"/g)].map(([, href]) => href ?? ''),
      );
    const storefront = `${stack.url}/p/evil/x402-buyer/`;
    const page = await (await fetch(storefront)).text();
    const hrefs = links(page);
    expect(hrefs).toHaveLength(3);
    for (const href of hrefs) {
      const target = new URL(href, storefront);
      // The same page from the site's own buyer page (`/x402-buyer/`), as Eleventy copies it unchanged.
      expect(target.href, href).toBe(new URL(href, `${stack.url}/x402-buyer/`).href);
      expect(SITE_PAGES.map((path) => `/${path}${path ? '/' : ''}`)).toContain(target.pathname);
      const response = await fetch(target);
      expect(response.status, target.pathname).toBe(200);
      expect(response.headers.get('content-type'), target.pathname).toMatch(/^text\/html/);
    }
  });

  it("serves a config.json naming only the publisher's address and path", async () => {
    const response = await fetch(`${stack.url}/p/evil/x402-buyer/config.json`);
    expect(response.status).toBe(200);
    const config = (await response.json()) as Record<string, unknown>;
    expect(config).toMatchObject({
      merchantAddress: evilPayTo,
      reportUrl: '/p/evil/api/x402-atlas-human-report.php',
      reportAmount: '150000',
      facilitatorMode: 'development',
      publisher: { id: 'evil', name: EVIL_NAME, accentColor: '#123abc' },
    });
  });

  it("passes the buyer page's own challenge check with the storefront's config, and only with it", async () => {
    const config = (await (await fetch(`${stack.url}/p/evil/x402-buyer/config.json`)).json()) as Record<
      string,
      unknown
    >;
    const parsed = parseBuyerConfig(config, `${stack.url}/p/evil/x402-buyer/config.json`, `${stack.url}/x`);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const { reportUrl, merchantAddress, reportAmount } = parsed.config;
    expect(reportUrl).toBe(`${stack.url}/p/evil/api/x402-atlas-human-report.php`);
    // The page's own check (generator/buyer/challenge.ts) with the terms the page derives from its config.
    const { paymentRequired } = await fetchChallenge(reportUrl);
    const terms = { asset: USDC_ASA_ID, payTo: merchantAddress, resourcePath: new URL(reportUrl).pathname };
    expect(checkChallenge(paymentRequired, { ...terms, amount: reportAmount! })).toMatchObject({ ok: true });
    // The base price does not match a publisher's challenge.
    expect(checkChallenge(paymentRequired, { ...terms, amount: '100000' })).toMatchObject({ ok: false });
    expect(parseBuyerConfig({ ...config, reportAmount: '0.15' }, stack.url, stack.url).ok).toBe(false);
  });

  it('sends the site’s header set on every storefront answer (CORS, nosniff, the one Content-Security-Policy)', async () => {
    for (const path of [
      '/p/evil/x402-buyer/',
      '/p/evil/x402-buyer/buyer.css',
      '/p/evil/x402-buyer/config.json',
    ]) {
      const response = await fetch(`${stack.url}${path}`, { redirect: 'manual' });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
    }
    const moved = await fetch(`${stack.url}/p/evil/x402-buyer`, { redirect: 'manual' });
    expect(moved.status).toBe(301);
    expect(moved.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves the page assets from the built buyer page, its code from the site’s only', async () => {
    const css = await fetch(`${stack.url}/p/evil/x402-buyer/buyer.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toBe(readFileSync('site/x402-buyer/buyer.css', 'utf8'));
    const script = await fetch(`${stack.url}/x402-buyer/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain('buyer page');
    // No copy of it under the storefront: the page loads the site's (test/storefront-s39-page-files.test.ts).
    expect((await fetch(`${stack.url}/p/evil/x402-buyer/app.js`)).status).toBe(404);
  });

  it('sells at the publisher path on the same origin, and refuses when credits are gone', async () => {
    const challenge = await fetch(`${stack.url}/p/evil/api/x402-atlas-human-report.php`);
    expect(challenge.status).toBe(402);
    const body = (await challenge.json()) as { accepts: { payTo: string; amount: string }[] };
    expect(body.accepts[0]).toMatchObject({ payTo: evilPayTo, amount: '150000' });
    const none = await fetch(`${stack.url}/p/plain/api/x402-atlas-human-report.php`);
    expect(none.status).toBe(503); // "plain" was never credited
  });

  it.each([
    '/p/nobody/x402-buyer/',
    '/p/nobody/x402-buyer/config.json',
    '/p/evil/x402-buyer/secret.txt',
    '/p/evil/x402-buyer/..%2F..%2Fpaid%2Fx402-atlas.json',
    '/p/evil/api/x402-unknown.php',
    '/p/evil/',
  ])('%s is a JSON 404', async (path) => {
    const response = await fetch(`${stack.url}${path}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { error: string }).error).toBe('not_found');
  });
});

describe('brandPage', () => {
  it('escapes the brand in title, banner and links of any page', () => {
    const [publisher] = parsePublishers([evilEntry]);
    const html = brandPage(
      '<html><head><title>T</title></head><body class="x"><p>page</p></body></html>',
      publisher!,
    );
    expect(html).toMatch(/^<html><head><title>Evil &lt;\/title&gt;&lt;script&gt;alert\(&quot;x&quot;\)/);
    expect(html).toContain('&amp; &#39;Co&#39;');
    expect(html).toContain('<body class="x">\n    <aside class="publisher-brand"');
    expect(html).not.toMatch(/<script>/);
  });

  it('keeps the buyer page’s skip link the first thing in its body, the banner after it', () => {
    const [publisher] = parsePublishers([evilEntry]);
    const html = brandPage(readFileSync('site/x402-buyer/index.html', 'utf8'), publisher!);
    const body = html.slice(html.indexOf('<body'));
    const skipLink = body.indexOf('<a class="skip-link');
    expect(skipLink).toBeGreaterThan(0);
    expect(skipLink).toBeLessThan(body.indexOf('<aside class="publisher-brand"'));
    expect(body.slice(0, skipLink)).not.toMatch(/<a\b|<button\b/);
  });
});

describe('a light accent colour on a phone', () => {
  it.skipIf(!hasChromium)(
    'keeps every button readable (4.5:1) and the raw-JSON toggle a 44 px target at 360x640',
    async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 360, height: 640 } });
        await page.goto(`${stack.url}/p/light/x402-buyer/`);
        const colours = await page.evaluate(() => {
          const rgb = (value: string) => {
            const [r, g, b] = value.match(/\d+/g)!.map(Number) as [number, number, number];
            return `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
          };
          return [...document.querySelectorAll('button')].map((button) => {
            const style = getComputedStyle(button);
            const background =
              style.backgroundColor === 'rgba(0, 0, 0, 0)' ? '#ffffff' : rgb(style.backgroundColor);
            return { id: button.id, text: rgb(style.color), background };
          });
        });
        expect(colours.length).toBeGreaterThan(5);
        const unreadable = colours.filter((c) => contrast(c.text, c.background) < MIN_TEXT_CONTRAST);
        expect(unreadable).toEqual([]);
        expect(colours.find((c) => c.id === 'pay')?.background).toBe('#ffff00'); // still the brand
        const summary = await page.evaluate(() => {
          const details = document.querySelector('details')!;
          details.hidden = false;
          for (let node = details.parentElement; node; node = node.parentElement) node.hidden = false;
          return document.querySelector('summary')!.getBoundingClientRect().height;
        });
        expect(summary).toBeGreaterThanOrEqual(44);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
