// robots.txt and sitemap.xml: every page and every file llms.txt links, with its last modification taken from
// the run.
import { absoluteUrl } from './urls.ts';

export interface SitemapEntry {
  /** URL path, e.g. `/api/market-regime.php`. */
  path: string;
  /** ISO time of the last modification, when known. */
  lastmod: string | null;
}

export const buildRobotsTxt = (baseUrl: string): string =>
  ['User-agent: *', 'Allow: /', '', `Sitemap: ${absoluteUrl(baseUrl, '/sitemap.xml')}`, ''].join('\n');

const escapeXml = (text: string): string =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] ?? c,
  );

export function buildSitemapXml(baseUrl: string, entries: readonly SitemapEntry[]): string {
  const unique = [...new Map(entries.map((entry) => [entry.path, entry])).values()];
  const urls = unique.map((entry) => {
    const lastmod = entry.lastmod ? `<lastmod>${escapeXml(entry.lastmod)}</lastmod>` : '';
    return `  <url><loc>${escapeXml(absoluteUrl(baseUrl, entry.path))}</loc>${lastmod}</url>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...urls,
    '</urlset>',
    '',
  ].join('\n');
}
