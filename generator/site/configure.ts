// Eleventy configuration as code: global data from the run, the generated folders copied through untouched,
// and the filters the templates need. Used by `buildSite` and by the root eleventy.config.js alike.
import { join, relative } from 'node:path';
import type { EleventyPage, EleventyUserConfig } from '@11ty/eleventy';
import { buildSitemapXml } from '../discovery/crawl-files.ts';
import { STATUS_FILE } from '../publish/status.ts';
import { shortUtc } from './charts.ts';
import { loadSiteData } from './site-data.ts';
import type { SiteDataOptions } from './site-data.ts';

/** Folders that are published byte for byte and never read as templates. */
const COPIED_THROUGH = ['api', 'arena', 'assets'];
/** The generated ones among them, which `buildSite` links into the output itself (see link-tree.ts). */
export const PUBLISHED_FOLDERS = ['api', 'arena'];

export interface SiteOptions extends SiteDataOptions {
  /** Leave the published folders out of Eleventy's passthrough copy: the caller links them in after the build. */
  linkPublished?: boolean;
}
/** The buyer page ships its page, stylesheet and bundle, never its TypeScript sources. */
const BUYER_FILES = ['index.html', 'buyer.css', 'app.js'];

/** Eleventy matches passthrough and ignore globs against paths relative to the working directory. */
const fromCwd = (path: string) => relative(process.cwd(), path) || '.';

export async function configureSite(eleventyConfig: EleventyUserConfig, options: SiteOptions): Promise<void> {
  const data = await loadSiteData(options);
  for (const [key, value] of Object.entries(data)) eleventyConfig.addGlobalData(key, value);

  // The checkout's .gitignore names the generated folders; ignores are spelled out here instead.
  eleventyConfig.setUseGitIgnore(false);
  for (const folder of COPIED_THROUGH) {
    // Published files may live outside the templates (`emi generate --out elsewhere`); assets never do.
    const root = folder === 'assets' ? options.siteDir : (options.publishedDir ?? options.siteDir);
    const source = fromCwd(join(root, folder));
    if (!(options.linkPublished && PUBLISHED_FOLDERS.includes(folder))) {
      eleventyConfig.addPassthroughCopy({ [source]: folder });
    }
    eleventyConfig.ignores.add(`${source}/**`);
    eleventyConfig.ignores.add(`${fromCwd(join(options.siteDir, folder))}/**`);
  }
  const published = options.publishedDir ?? options.siteDir;
  eleventyConfig.addPassthroughCopy({ [fromCwd(join(published, STATUS_FILE))]: STATUS_FILE });
  const buyer = fromCwd(join(options.siteDir, 'x402-buyer'));
  eleventyConfig.ignores.add(`${buyer}/**`);
  // The arena vote form's TypeScript is bundled into assets/arena-vote.js; its sources are never published.
  eleventyConfig.ignores.add(`${fromCwd(join(options.siteDir, 'arena-vote'))}/**`);
  // What the browser bundles were made from (generator/buyer/bundle-stamp.ts): never published.
  eleventyConfig.ignores.add(`${fromCwd(join(options.siteDir, '.bundles'))}/**`);
  for (const file of BUYER_FILES) {
    eleventyConfig.addPassthroughCopy({ [`${buyer}/${file}`]: `x402-buyer/${file}` });
  }

  eleventyConfig.addFilter('shortUtc', (iso: string | null) => (iso ? `${shortUtc(iso)} UTC` : 'unknown'));
  eleventyConfig.addFilter('sitemapXml', (pages: EleventyPage[]) =>
    buildSitemapXml(data.site.baseUrl, [
      ...pages
        .filter((page): page is EleventyPage & { url: string } => typeof page.url === 'string')
        .map((page) => ({ path: page.url, lastmod: data.site.runTime })),
      ...data.sitemapApiEntries,
    ]),
  );
}
