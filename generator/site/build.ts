// Builds the deployable site: Eleventy renders the docs and discovery files from the run's published files into
// a fresh generation folder that then replaces `outDir` in one atomic step (see move-into.ts), so a server reading
// `outDir` (the preview, or nginx serving dist/ in place) never meets a half-written, missing or mixed file. The
// published API files are linked in by reference, not copied (for 700 assets, 700 links instead of 700 copies).
import { copyFile, realpath } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { folderMaker } from '../publish/folders.ts';
import { PUBLISHED_FOLDERS, configureSite, passthroughCopies } from './configure.ts';
import type { SiteOptions } from './configure.ts';
import { copiedThrough, linkTree } from './link-tree.ts';
import { causeFirst, createEleventy, keepCompiledTemplates, silenceBenchmarks } from './load-eleventy.ts';
import type { WithBenchmarks, WithEngines } from './load-eleventy.ts';
import { refuseDamagedHistory } from './history-check.ts';
import { buildInto } from './move-into.ts';

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
  const site: SiteOptions = {
    siteDir,
    publishedDir: options.publishedDir && resolve(options.publishedDir),
    baseUrl: options.baseUrl,
    linkPublished: true,
    // Eleventy 3.1 can leave a failed passthrough copy without a handler (a full disk ended the process with a
    // stack trace): the files are copied here instead, where every failure is awaited.
    copyThrough: false,
  };
  const published = options.publishedDir ? resolve(options.publishedDir) : siteDir;
  // Resolved once: every file comes from the generation served now, even if a run switches meanwhile; and its
  // history is checked before anything is built (a refusal leaves the site served before as it is).
  const sources = await resolvePublished(published);
  await refuseDamagedHistory({ api: sources.get('api') ?? join(published, 'api'), published, outDir });
  await buildInto(outDir, async (building) => {
    const eleventy = await createEleventy(siteDir, building, {
      quietMode: options.quiet ?? true,
      config: (eleventyConfig) => configureSite(eleventyConfig, site),
    });
    // Quiet means silent: Eleventy's quiet mode still printed "[11ty] Wrote N files" and, on a failure, its own
    // report with a stack trace before emi's one line (the cause first, below). `DEBUG=Eleventy*` shows them.
    if (options.quiet ?? true) (eleventy as unknown as { disableLogger(): void }).disableLogger();
    await eleventy.init();
    if (options.quiet ?? true) silenceBenchmarks(eleventy as unknown as WithBenchmarks);
    // Each template compiled once, not once per page (see load-eleventy.ts).
    await keepCompiledTemplates(eleventy as unknown as WithEngines);
    await eleventy.write().catch((error: unknown) => {
      throw causeFirst(error);
    });
    const makeFolder = folderMaker();
    for (const { from, to } of passthroughCopies(site)) {
      for (const { source, path } of await copiedThrough(from, to)) {
        await makeFolder(dirname(join(building, path)));
        await copyFile(source, join(building, path));
      }
    }
    for (const [folder, source] of sources) await linkTree(source, join(building, folder));
  });
}

/** Each published folder (`api/`, `arena/`) resolved to the generation it points at now (as is, if not a link). */
export async function resolvePublished(published: string): Promise<Map<string, string>> {
  return new Map(
    await Promise.all(
      PUBLISHED_FOLDERS.map(async (folder) => {
        const path = join(published, folder);
        return [folder, await realpath(path).catch(() => path)] as const;
      }),
    ),
  );
}
