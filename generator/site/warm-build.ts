// The site build of a long-running process (`emi schedule`, `emi up`): one Eleventy instance is kept warm across
// builds, so the templates are set up and compiled once rather than once per cycle. Each build reads the run's
// global data again, restarts the instance as Eleventy's own watch mode does, renders every page in memory
// (`toJSON`) and places the pages and the copied-through files into a new generation itself: a file whose bytes
// are those the served generation already holds is hard-linked from it, anything else is written. The switch is
// the same single atomic step as buildSite's, and the output is the same byte for byte
// (test/site-warm-build.test.ts). A failed build leaves the last good site served.
import { copyFile, link, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { configureSite, passthroughCopies } from './configure.ts';
import type { SiteOptions } from './configure.ts';
import { fileIdentity } from '../publish/file-identity.ts';
import { folderMaker } from '../publish/folders.ts';
import type { MakeFolder } from '../publish/folders.ts';
import { copiedThrough, linkTree } from './link-tree.ts';
import { causeFirst, createEleventy, keepCompiledTemplates, silenceBenchmarks } from './load-eleventy.ts';
import type { WithBenchmarks, WithEngines } from './load-eleventy.ts';
import { refuseDamagedHistory } from './history-check.ts';
import { buildInto } from './move-into.ts';
import { resolvePublished } from './build.ts';
import { loadSiteData } from './site-data.ts';
import type { SiteData } from './site-data.ts';

export interface WarmSiteOptions {
  siteDir: string;
  /** Folder the generator published to. */
  publishedDir: string;
  outDir: string;
  baseUrl: string;
}

/** What Eleventy 3's toJSON returns per page (outputPath is false for a page with `permalink: false`). */
interface RenderedPage {
  outputPath: string | false;
  content: string;
}

/** The parts of Eleventy's instance its watch mode uses between builds; not in its published types. */
interface Restartable extends WithEngines, WithBenchmarks {
  restart(): Promise<void>;
  disableLogger(): void;
  toJSON(): Promise<RenderedPage[]>;
}

export class WarmSiteBuilder {
  readonly #options: SiteOptions & { outDir: string };
  #eleventy: Restartable | null = null;
  #data: SiteData | null = null;
  #builds = 0;
  /**
   * The generation the last build served, with each page's text and each copied file's source identity: unchanged
   * text, or an unchanged source file, needs no reading to compare.
   */
  #last: { dir: string; pages: Map<string, string>; copies: Map<string, string> } | null = null;

  constructor(options: WarmSiteOptions) {
    this.#options = {
      siteDir: resolve(options.siteDir),
      publishedDir: resolve(options.publishedDir),
      outDir: resolve(options.outDir),
      baseUrl: options.baseUrl,
      linkPublished: true,
    };
  }

  /** Builds the kept Eleventy instance has rendered and served. */
  get warmBuilds(): number {
    return this.#builds;
  }

  async build(): Promise<void> {
    const { siteDir, outDir } = this.#options;
    if (outDir === siteDir || siteDir.startsWith(`${outDir}/`) || outDir.startsWith(`${siteDir}/`)) {
      throw new Error(`the output folder must be outside the site folder: ${outDir}`);
    }
    // A failed build (whatever step) leaves the served generation alone; the instance is kept, as Eleventy's own
    // watch mode keeps it after an error, and the next build restarts it.
    const published = this.#options.publishedDir ?? siteDir;
    // Resolved once: every file comes from the generation served now, even if a run switches meanwhile; and its
    // history is checked first (only the file versions not known to pass are read).
    const sources = await resolvePublished(published);
    await refuseDamagedHistory({ api: sources.get('api') ?? join(published, 'api'), published, outDir });
    this.#data = await loadSiteData(this.#options);
    const pages = await this.#render();
    const rendered = new Map<string, string>();
    const copies = new Map<string, string>();
    for (const page of pages) {
      if (page.outputPath === false) continue; // a page with `permalink: false` is not written
      const path = relative(outDir, resolve(page.outputPath));
      if (path.startsWith('..')) throw new Error(`a page renders outside the site: ${page.outputPath}`);
      rendered.set(path, page.content);
    }
    await buildInto(outDir, async (building, previous) => {
      const served = previous === null ? null : await realpath(previous);
      const last = served !== null && this.#last?.dir === served ? this.#last : null;
      const into: Placement = { building, previous, makeFolder: folderMaker() };
      await Promise.all([
        ...[...rendered].map(([path, content]) =>
          // When this builder wrote the served generation, its pages are known: the same text is linked, other
          // text written, without reading the served file.
          last?.pages.get(path) === content
            ? linkInto(join(previous as string, path), path, into)
            : placeBytes(Buffer.from(content), path, { ...into, previous: last ? null : previous }),
        ),
        ...passthroughCopies(this.#options).map(({ from, to }) =>
          placeCopy(from, to, into, { before: last?.copies ?? null, now: copies }),
        ),
      ]);
      await Promise.all([...sources].map(([folder, source]) => linkTree(source, join(building, folder))));
    });
    this.#last = { dir: await realpath(outDir), pages: rendered, copies };
    this.#builds += 1;
  }

  async #render(): Promise<RenderedPage[]> {
    if (!this.#eleventy) {
      // Eleventy only reports output paths in JSON mode (it writes nothing): `outDir` names where pages belong.
      const eleventy = (await createEleventy(this.#options.siteDir, this.#options.outDir, {
        quietMode: true,
        config: (eleventyConfig) =>
          configureSite(eleventyConfig, this.#options, () => this.#data as SiteData),
      })) as unknown as Restartable;
      // Silent, as `emi build`: a failure reaches the operator once, cause first, in the cycle's own line.
      eleventy.disableLogger();
      await eleventy.init();
      this.#eleventy = eleventy; // kept once it has set up
    } else {
      await this.#eleventy.restart();
      await this.#eleventy.init();
    }
    silenceBenchmarks(this.#eleventy);
    await keepCompiledTemplates(this.#eleventy);
    return this.#eleventy.toJSON().catch((error: unknown) => {
      throw causeFirst(error);
    });
  }
}

/** Where one build places its files: the new generation, the served one (null: none, or not to be read). */
interface Placement {
  building: string;
  previous: string | null;
  makeFolder: MakeFolder;
}

/** Hard-links `source` at `path` in the new generation. */
async function linkInto(source: string, path: string, { building, makeFolder }: Placement): Promise<void> {
  const target = join(building, path);
  await makeFolder(dirname(target));
  await link(source, target);
}

/** Puts `bytes` at `path` in the new generation: a hard link to the served generation's file if it is the same. */
async function placeBytes(bytes: Buffer, path: string, { building, previous, makeFolder }: Placement) {
  const target = join(building, path);
  await makeFolder(dirname(target));
  if (previous !== null) {
    const served = join(previous, path);
    const old = await readFile(served).catch(() => null);
    if (old?.equals(bytes)) return link(served, target);
  }
  await writeFile(target, bytes, { flag: 'wx' });
}

/** Source identities of the copied files, by path in the site: those the served generation was built with, if known. */
interface CopiedSources {
  before: ReadonlyMap<string, string> | null;
  now: Map<string, string>;
}

/**
 * Copies a file, or every file under a folder, through as Eleventy's passthrough copy does (a missing source
 * copies nothing; dotfiles are copied too). Copied, not linked, from the source: the site's own files may be
 * rewritten in place (the browser bundles); a file equal to the served one is linked from the served generation,
 * without reading either when its source is the very file the served one was copied from.
 */
async function placeCopy(from: string, to: string, into: Placement, sources: CopiedSources): Promise<void> {
  const { building, previous, makeFolder } = into;
  await Promise.all(
    (await copiedThrough(from, to)).map(async ({ source, path }) => {
      const identity = fileIdentity(await stat(source));
      sources.now.set(path, identity);
      if (previous !== null && sources.before?.get(path) === identity)
        return linkInto(join(previous, path), path, into);
      if (previous !== null) return placeBytes(await readFile(source), path, into);
      await makeFolder(dirname(join(building, path)));
      await copyFile(source, join(building, path));
    }),
  );
}
