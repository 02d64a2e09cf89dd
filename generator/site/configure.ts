// Eleventy configuration as code: global data from the run, the generated folders copied through untouched,
// and the filters the templates need. Used by `buildSite` and by the root eleventy.config.js alike.
import { join } from 'node:path';
import type { EleventyPage, EleventyUserConfig } from '@11ty/eleventy';
import { buildSitemapXml } from '../discovery/crawl-files.ts';
import { STATUS_FILE } from '../publish/status.ts';
import { FIELD_SEPARATORS, PATH_SEPARATORS, withBreakPoints } from './break-points.ts';
import { BUYER_CONFIG_PATH, buyerConfigJson } from './buyer-config.ts';
import { shortUtc } from './charts.ts';
import { eleventyPath } from './load-eleventy.ts';
import { loadSiteData } from './site-data.ts';
import type { SiteData, SiteDataOptions } from './site-data.ts';

/** Folders that are published byte for byte and never read as templates. */
const COPIED_THROUGH = ['api', 'arena', 'assets'];
/** The generated ones among them, which `buildSite` links into the output itself (see link-tree.ts). */
export const PUBLISHED_FOLDERS = ['api', 'arena'];

export interface SiteOptions extends SiteDataOptions {
  /** Leave the published folders out of Eleventy's passthrough copy: the caller links them in after the build. */
  linkPublished?: boolean;
  /** Leave every passthrough copy to the caller (see build.ts); Eleventy then only renders and writes pages. */
  copyThrough?: false;
}
/**
 * The buyer page ships its page, stylesheet and bundle, never its TypeScript sources. Its config.json is rendered
 * (buyer-config.ts): from the operator's own file in the templates, checked, or from EMI_PAYTO and EMI_NETWORK.
 */
const BUYER_FILES = ['index.html', 'buyer.css', 'app.js'];

/** Eleventy 3's virtual templates (not in eleventy.d.ts): a template given in code, at a path of the input. */
interface VirtualTemplates {
  addTemplate(inputPath: string, content: unknown, data?: Record<string, unknown>): void;
}

/** A file or folder Eleventy copies through untouched: absolute source, path inside the output. */
export interface Passthrough {
  from: string;
  to: string;
}

/**
 * What the site copies through: the assets, the run's status file and the buyer page (and the published folders
 * unless `linkPublished`). The warm build (warm-build.ts) places the same list itself.
 */
export function passthroughCopies(options: SiteOptions): Passthrough[] {
  const published = options.publishedDir ?? options.siteDir;
  const folders = COPIED_THROUGH.filter(
    (folder) => !(options.linkPublished && PUBLISHED_FOLDERS.includes(folder)),
  );
  return [
    // Published files may live outside the templates (`emi generate --out elsewhere`); assets never do.
    ...folders.map((folder) => ({
      from: join(folder === 'assets' ? options.siteDir : published, folder),
      to: folder,
    })),
    { from: join(published, STATUS_FILE), to: STATUS_FILE },
    ...BUYER_FILES.map((file) => ({
      from: join(options.siteDir, 'x402-buyer', file),
      to: `x402-buyer/${file}`,
    })),
  ];
}

/**
 * Configures Eleventy for the site. The global data is read through `data` at each build (a warm instance renders
 * many builds with one configuration); by default it is loaded once, here.
 */
export async function configureSite(
  eleventyConfig: EleventyUserConfig,
  options: SiteOptions,
  data?: () => SiteData,
): Promise<void> {
  const loaded = data ? null : await loadSiteData(options);
  const current = data ?? (() => loaded as SiteData);
  for (const key of Object.keys(current()) as Array<keyof SiteData>) {
    eleventyConfig.addGlobalData(key, () => current()[key]);
  }

  // The checkout's .gitignore names the generated folders; ignores are spelled out here instead.
  eleventyConfig.setUseGitIgnore(false);
  for (const folder of COPIED_THROUGH) {
    const root = folder === 'assets' ? options.siteDir : (options.publishedDir ?? options.siteDir);
    eleventyConfig.ignores.add(`${eleventyPath(join(root, folder))}/**`);
    eleventyConfig.ignores.add(`${eleventyPath(join(options.siteDir, folder))}/**`);
  }
  if (options.copyThrough !== false) {
    for (const { from, to } of passthroughCopies(options))
      eleventyConfig.addPassthroughCopy({ [eleventyPath(from)]: to });
  }
  const buyer = eleventyPath(join(options.siteDir, 'x402-buyer'));
  eleventyConfig.ignores.add(`${buyer}/**`);
  // The buyer page's config.json, read again at every build (a warm build's process may outlive an edit of the
  // operator's file); none without a payee, and a bad payee or file fails the build, naming it.
  const buyerConfig = () => buyerConfigJson(options.siteDir, current().site.baseUrl);
  buyerConfig(); // checked here first: a bad payee stops the build in one line, before Eleventy reads anything
  (eleventyConfig as EleventyUserConfig & VirtualTemplates).addTemplate('emi-buyer-config.11ty.js', {
    data: {
      eleventyExcludeFromCollections: true,
      permalink: () => (buyerConfig() === null ? false : `/${BUYER_CONFIG_PATH}`),
    },
    render: () => buyerConfig() ?? '',
  });
  // The arena vote form's TypeScript is bundled into assets/arena-vote.js; its sources are never published.
  eleventyConfig.ignores.add(`${eleventyPath(join(options.siteDir, 'arena-vote'))}/**`);
  // What the browser bundles were made from (generator/buyer/bundle-stamp.ts): never published.
  eleventyConfig.ignores.add(`${eleventyPath(join(options.siteDir, '.bundles'))}/**`);

  eleventyConfig.addFilter('shortUtc', (iso: string | null) => (iso ? `${shortUtc(iso)} UTC` : 'unknown'));
  // Escaped HTML with <wbr> break points (break-points.ts): `{{ path | breakable | safe }}`, and for a field name
  // (breaks at its dots and after `[]` only) `{{ name | breakable('field') | safe }}`.
  eleventyConfig.addFilter('breakable', (text: unknown, kind?: string) =>
    withBreakPoints(text, kind === 'field' ? FIELD_SEPARATORS : PATH_SEPARATORS),
  );
  eleventyConfig.addFilter('sitemapXml', (pages: EleventyPage[]) =>
    buildSitemapXml(current().site.baseUrl, [
      // In path order: Eleventy's own order follows the template files' dates, which differ from clone to clone.
      ...pages
        .filter((page): page is EleventyPage & { url: string } => typeof page.url === 'string')
        .map((page) => ({ path: page.url, lastmod: current().site.runTime }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      ...current().sitemapApiEntries,
    ]),
  );
}
