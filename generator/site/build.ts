// Builds the deployable site: Eleventy renders the docs and discovery files from the run's published files into
// a fresh folder, whose files then replace those of `outDir` one atomic rename at a time, so a server reading
// `outDir` (the preview, or nginx serving dist/ in place) never meets a half-written or missing file. The
// published API files are linked in by reference, not copied (for 700 assets, 700 links instead of 700 copies).
import { mkdir, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import Eleventy from '@11ty/eleventy';
import { PUBLISHED_FOLDERS, configureSite } from './configure.ts';
import { linkTree } from './link-tree.ts';
import { moveInto } from './move-into.ts';

export interface BuildSiteOptions {
  /** Eleventy input: templates plus the generated `api/` and `arena/` folders. */
  siteDir: string;
  outDir: string;
  /** Folder holding the published `api/` and `arena/` files, when they are not inside `siteDir`. */
  publishedDir?: string;
  /** Base of every absolute URL (OpenAPI servers, llms.txt, sitemap). */
  baseUrl: string;
  quiet?: boolean;
}

export async function buildSite(options: BuildSiteOptions): Promise<void> {
  const siteDir = resolve(options.siteDir);
  const outDir = resolve(options.outDir);
  if (outDir === siteDir || siteDir.startsWith(`${outDir}/`) || outDir.startsWith(`${siteDir}/`)) {
    throw new Error(`the output folder must be outside the site folder: ${outDir}`);
  }
  const building = join(dirname(outDir), `.${basename(outDir)}.building-${process.pid}`);
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { recursive: true });
  try {
    const eleventy = new Eleventy(siteDir, building, {
      quietMode: options.quiet ?? true,
      configPath: false, // everything is configured here; the root eleventy.config.js is for the Eleventy CLI
      config: (eleventyConfig) =>
        configureSite(eleventyConfig, {
          siteDir,
          publishedDir: options.publishedDir && resolve(options.publishedDir),
          baseUrl: options.baseUrl,
          linkPublished: true,
        }),
    });
    await eleventy.write();
    const published = options.publishedDir ? resolve(options.publishedDir) : siteDir;
    for (const folder of PUBLISHED_FOLDERS) await linkTree(join(published, folder), join(building, folder));
    await moveInto(building, outDir);
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}
