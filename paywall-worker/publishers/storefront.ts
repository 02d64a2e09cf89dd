// The branded buyer page of each publisher at `/p/<id>/x402-buyer/`: the site's own buyer page (same checks, same
// code) with the publisher's brand written into it and a `config.json` that names the publisher's address as the
// only one the page will pay and the publisher's path as the one it buys from. Brand text is HTML-escaped where it
// is written; links and the logo are https (checked at start) and escaped as attributes; the colour is `#rrggbb`.
// The page's code is the site's own /x402-buyer/app.js (same origin, so the site's policy allows it): its chunks are
// imported relative to it (`../assets/x402-buyer/…`), which from /p/<id>/x402-buyer/app.js would point into
// /p/<id>/assets/, where nothing is. A site is always built for a base URL without a path, so the path is absolute.
import { Hono } from 'hono';
import { CONTENT_SECURITY_POLICY, SITE_HEADERS } from '../../schemas/delivery.ts';
import { errorResponse } from '../app.ts';
import { answerUnhandled } from '../unhandled.ts';
import { accentColors } from './accent.ts';
import { isClosed } from './closure.ts';
import { PRODUCTS } from './config.ts';
import type { Publisher } from './config.ts';
import { publisherPath, storefrontPrefix } from './sale-points.ts';

const HUMAN_REPORT = 'atlas-human-report';
/** How the buyer page states the base price in its text. */
const BASE_PRICE_TEXT = `${PRODUCTS.get(HUMAN_REPORT)?.priceUsd ?? '0.10'} USDC`;

export interface StorefrontOptions {
  publishers: readonly Publisher[];
  /** The operator's buyer config.json (network, facilitator mode, dev faucet); the payee is replaced. */
  buyerConfig: Readonly<Record<string, unknown>>;
  /** Reads one file of the built buyer page (`index.html`, `buyer.css`); null when absent. */
  readBuyerFile(name: string): Promise<Uint8Array | null>;
  /**
   * When a publisher's storefront closes (ms since the epoch, null: open), asked at each page request; default its
   * `closedAt` as configured at start (`emi serve` passes the one it reads again when the config file changes).
   */
  closedAt?: (publisher: Publisher) => Promise<number | null>;
  now?: () => number;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML content and quoted attribute values alike. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

function brandBanner(publisher: Publisher): string {
  const { brand } = publisher;
  const name = escapeHtml(brand.name);
  const logo = brand.logoUrl
    ? `<img class="publisher-logo" src="${escapeHtml(brand.logoUrl)}" alt="${name} logo" height="40" />`
    : '';
  return `<aside class="publisher-brand" aria-label="Publisher">
      ${logo}<p><strong>Sold by ${name}</strong>, an independent publisher. Your payment goes directly to its
      Algorand address <code class="break">${escapeHtml(publisher.payTo)}</code>; the service never holds it.
      <a href="${escapeHtml(brand.contactUrl)}" rel="noopener">Contact ${name}</a> ·
      <a href="${escapeHtml(brand.termsUrl)}" rel="noopener">${name}'s terms</a></p>
    </aside>`;
}

/**
 * What a closed storefront's page says before its code runs (and to a reader without JavaScript): closed since when,
 * that a payment already made is still delivered, and where the report is still sold.
 */
function closedNotice(publisher: Publisher, closedAt: number): string {
  const name = escapeHtml(publisher.brand.name);
  const since = `${new Date(closedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<p class="problem publisher-closed"><strong>This storefront is closed.</strong> ${name} stopped selling
      here on ${since}: this page sells nothing new. A payment already made here is still delivered (this page sends
      it again from the tab you paid in). The same report is sold on
      <a href="${SITE_BUYER_PAGE}">the site's own buyer page</a>.</p>`;
}

/** Where the site serves the buyer page's files, its code among them. */
const SITE_BUYER_PAGE = '/x402-buyer/';

/** The page's scripts named by a bare file name (`src="app.js"`) loaded from the site's buyer page instead. */
const siteScripts = (html: string): string =>
  html.replace(
    /(<script\b[^>]*\bsrc=")([^"/:]+)"/g,
    (_m, head: string, file: string) => `${head}${SITE_BUYER_PAGE}${file}"`,
  );

/**
 * Where the banner goes: after the page's skip link (SKIP_LINK), which stays the first stop of the keyboard (WCAG 2.4.1), or at
 * the top of a body that has none.
 */
const SKIP_LINK = /<a class="skip-link[^>]*>[^<]*<\/a>/;
const BODY = /<body[^>]*>/;

/**
 * The buyer page in the publisher's brand: title, banner, accent colour, and the publisher's price in its text;
 * its code from the site's own buyer page.
 */
export function brandPage(html: string, publisher: Publisher, closedAt: number | null = null): string {
  const name = escapeHtml(publisher.brand.name);
  const price = publisher.products.find((p) => p.slug === HUMAN_REPORT)?.priceUsd;
  const colors = accentColors(publisher.brand.accentColor);
  const style = `<style>:root{--accent:${colors.accent};--accent-ink:${colors.ink};--accent-text:${colors.text}}.publisher-brand{border-left:6px solid var(--accent);padding:.5rem 1rem;margin:0 0 1rem}.publisher-logo{float:right;max-height:40px}</style>`;
  return siteScripts(html)
    .replace(/<title>([^<]*)<\/title>/, (_m, title: string) => `<title>${name}: ${title}</title>`)
    .replace('</head>', `    ${style}\n  </head>`)
    .replace(SKIP_LINK.test(html) ? SKIP_LINK : BODY, (tag) => {
      const closed = closedAt === null ? '' : `\n    ${closedNotice(publisher, closedAt)}`;
      return `${tag}\n    ${brandBanner(publisher)}${closed}`;
    })
    .replaceAll(BASE_PRICE_TEXT, price ? `${price} USDC` : BASE_PRICE_TEXT);
}

/**
 * The files the branded page loads from its own folder besides itself and its config.json, with their types: its
 * stylesheet only. Its code is the site's (/x402-buyer/app.js, see `siteScripts`), so no copy of it is served here.
 */
const PAGE_FILES: Readonly<Record<string, string>> = {
  'buyer.css': 'text/css; charset=utf-8',
};

export function createStorefront(options: StorefrontOptions): Hono {
  const byId = new Map(options.publishers.map((publisher) => [publisher.id, publisher]));
  const closedAtOf = options.closedAt ?? ((publisher: Publisher) => Promise.resolve(publisher.closedAt));
  const now = options.now ?? Date.now;
  /** Since when `publisher` has been closed; null while it sells (a closing time ahead is not yet a close). */
  const closedSince = async (publisher: Publisher): Promise<number | null> => {
    const closedAt = await closedAtOf(publisher);
    return isClosed(closedAt, now()) ? closedAt : null;
  };
  const app = new Hono();
  const notFound = () => errorResponse(404, 'not_found', 'No such publisher storefront.');
  const sellsReport = (publisher: Publisher) => publisher.products.some((p) => p.slug === HUMAN_REPORT);
  // The site's header set on every answer, as every host sends it on the site's own pages.
  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SITE_HEADERS)) {
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  });

  // Only a real storefront is redirected: any other id is the JSON 404, never a Location built from the URL.
  app.get('/p/:id/x402-buyer', (c) => {
    const publisher = byId.get(c.req.param('id'));
    if (!publisher || !sellsReport(publisher)) return notFound();
    return c.redirect(`${storefrontPrefix(publisher.id)}/x402-buyer/`, 301);
  });

  app.get('/p/:id/x402-buyer/:file{[a-z0-9.-]*}', async (c) => {
    const publisher = byId.get(c.req.param('id'));
    if (!publisher || !sellsReport(publisher)) return notFound();
    const file = c.req.param('file') || 'index.html';
    c.header('Cache-Control', 'no-store');
    if (file === 'config.json') {
      const product = publisher.products.find((p) => p.slug === HUMAN_REPORT);
      return c.json({
        ...options.buyerConfig,
        merchantAddress: publisher.payTo,
        reportUrl: product ? publisherPath(publisher.id, product) : undefined,
        reportAmount: product?.amountAtomic,
        publisher: { id: publisher.id, ...publisher.brand },
      });
    }
    if (file === 'index.html') {
      const page = await options.readBuyerFile('index.html');
      if (!page) return notFound();
      c.header('Content-Type', 'text/html; charset=utf-8');
      // The same policy as the site's pages: the branding adds a style element, never a script.
      c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      // A closed storefront's page is Gone, as its paths are (410), and says so in words; its code still runs, to
      // send again a payment made here before the close.
      const closedAt = await closedSince(publisher);
      return c.body(
        brandPage(new TextDecoder().decode(page), publisher, closedAt),
        closedAt === null ? 200 : 410,
      );
    }
    // The page's stylesheet; anything else (its code among it: the page loads the site's) is the JSON 404.
    const type = Object.hasOwn(PAGE_FILES, file) ? PAGE_FILES[file] : undefined;
    const asset = type ? await options.readBuyerFile(file) : null;
    if (!asset || !type) return notFound();
    c.header('Content-Type', type);
    return c.body(asset as Uint8Array<ArrayBuffer>);
  });

  // Mounted on the Worker's `/p/` routes, whose fetch the Worker calls itself (Hono's text 500 otherwise).
  app.onError(answerUnhandled('The storefront could not handle this request.'));
  return app;
}
