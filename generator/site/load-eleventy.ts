// Eleventy as emi's builds use it: loaded without its watch-mode module resolver hook, and with each template
// compiled once per instance. Both rely on Eleventy 3.1 internals and are guarded by tests
// (test/site-load-eleventy.test.ts; the byte-for-byte comparisons of test/site-warm-build.test.ts and
// test/site-build-process.test.ts).
import { basename, dirname, join, relative, resolve } from 'node:path';
import type Eleventy from '@11ty/eleventy';
import type { EleventyUserConfig } from '@11ty/eleventy';
import { usageError } from '../cli-options.ts';

/**
 * On import, Eleventy 3.1 registers a module resolver hook (src/Util/EsmResolverPortAdapter.js) whose one job is
 * to bust the import cache of files its watch mode saw change; on Node 20 the hook runs on a loader thread of its
 * own, which every later import then waits for (about a tenth of a one-off `emi build`). emi never watches, and
 * its templates ship with it, so the hook is turned off with the switch Eleventy provides for it
 * (ELEVENTY_SKIP_ESM_RESOLVER, 11ty/eleventy#3371), unless the environment already sets that switch.
 */
export async function loadEleventy(): Promise<typeof Eleventy> {
  process.env.ELEVENTY_SKIP_ESM_RESOLVER ??= 'true';
  const { default: loaded } = await import('@11ty/eleventy');
  return loaded;
}

/** Characters a glob reads as syntax. */
const GLOB_SYNTAX = /[*?[\]{}()!]/;
/**
 * Characters Eleventy 3.1 cannot import a template from: it makes the template's absolute path into a URL as text
 * (`new URL(\`file:${path}\`)` in its Require.js), where `#` and `?` end the path and `%` starts an escape, so a
 * checkout under `hash#1/` failed every build with "Cannot find module '.../hash'".
 */
const URL_SYNTAX = /[#%?]/;

/** The characters of `syntax` found in `text`, once each, in order. */
const charactersOf = (text: string, syntax: RegExp): string[] => [
  ...new Set([...text].filter((char) => syntax.test(char))),
];

/**
 * The deepest folder on `path` (itself included) whose name holds glob syntax: from there or any folder inside it,
 * the way to `path` holds none.
 */
function globFreeStart(path: string): string {
  for (let folder = resolve(path); dirname(folder) !== folder; folder = dirname(folder)) {
    if (GLOB_SYNTAX.test(basename(folder))) return folder;
  }
  return resolve(path);
}

/**
 * Why Eleventy cannot take `path` from this working directory, in one line, or null. One rule for every path a
 * build hands it: relative to the working directory it must hold no glob syntax (Eleventy reads it as a glob and
 * would silently match nothing: a checkout under `~/sites (old)/` built a site with no pages); and for the
 * templates' folder (`imported`), the absolute path Eleventy makes of it (the working directory, which the system
 * gives with every link resolved, joined to that relative path) must hold no `#`, `%` or `?`.
 */
export function eleventyPathProblem(path: string, { imported = false } = {}): string | null {
  const fromCwd = relative(process.cwd(), path) || '.';
  const glob = charactersOf(fromCwd, GLOB_SYNTAX);
  if (glob.length > 0) {
    return (
      `Eleventy reads ${fromCwd} (the way from the working directory to ${path}) as a glob (it holds ` +
      `${glob.join(' ')}), and would build nothing from it: run emi from ${globFreeStart(path)} or a folder ` +
      'inside it, or rename the folders on that way'
    );
  }
  const absolute = join(process.cwd(), fromCwd);
  const url = charactersOf(absolute, URL_SYNTAX);
  if (imported && url.length > 0) {
    return (
      `Eleventy cannot load the site templates from ${absolute}: its path holds ${url.join(' ')}, which Eleventy ` +
      `3.1 reads as URL syntax: move or rename the folder so that its path holds none of # % ? (a link to it ` +
      'does not help from inside it, as the working directory resolves links; only a --site given through a ' +
      'link, from a working directory without them, is read as it is spelled)'
    );
  }
  return null;
}

/** A path as Eleventy takes it (see eleventyPathProblem): relative to the working directory; refused in one line. */
export function eleventyPath(path: string, options: { imported?: boolean } = {}): string {
  const problem = eleventyPathProblem(path, options);
  if (problem !== null) throw usageError(problem);
  return relative(process.cwd(), path) || '.';
}

/** Throws the one line unless Eleventy can build from the templates in `siteDir` run from this working directory. */
export function assertEleventyCanRead(siteDir: string): void {
  eleventyPath(siteDir, { imported: true });
}

/**
 * An Eleventy instance as every emi build makes one: configured in code (the root eleventy.config.js is for the
 * Eleventy CLI), its input given through `eleventyPath`, and its `.11ty.js` templates loaded as the ES modules they
 * are. Eleventy's default loader ('auto') asks the working directory's package.json instead, so a build run from
 * any other folder rendered every template exporting `data` beside its default function (robots.txt, llms.txt,
 * the sitemap, the OpenAPI document, the JSON Schemas) as an empty file.
 */
export async function createEleventy(
  siteDir: string,
  outDir: string,
  options: { quietMode: boolean; config: (eleventyConfig: EleventyUserConfig) => void | Promise<void> },
): Promise<Eleventy> {
  const Loaded = await loadEleventy();
  return new Loaded(eleventyPath(siteDir, { imported: true }), outDir, {
    ...options,
    configPath: false,
    loader: 'esm',
  });
}

/** The part of Eleventy's instance that reaches its template engines; not in its published types. */
export interface WithEngines {
  init(): Promise<void>;
  extensionMap: { engineManager: { getEngine(name: string, map: unknown): Promise<object> } };
}

/**
 * Eleventy 3.1 marks its Nunjucks and JavaScript engines not cacheable, so it compiles a Nunjucks template again
 * for every page it renders (the endpoint page's body 13 times and its permalink 39 times in one build) and, on
 * each build of a kept instance, imports every .11ty.js template again (a fresh module copy each time, which a
 * long-running process would keep forever). Marked cacheable, an instance compiles and imports each template
 * once, for as long as it lives: the templates ship with emi, and a process started after an upgrade starts a new
 * instance. Call after `init()`, which makes the engines.
 */
export async function keepCompiledTemplates(eleventy: WithEngines): Promise<void> {
  const { engineManager } = eleventy.extensionMap;
  for (const name of ['njk', '11ty.js']) {
    const engine = await engineManager.getEngine(name, eleventy.extensionMap);
    Object.defineProperty(engine, 'cacheable', { value: true });
  }
}

/** The benchmark groups an Eleventy instance keeps; not in its published types. */
export interface WithBenchmarks {
  bench: { getAll(): Record<string, { setIsVerbose(verbose: boolean): void }> };
}

/**
 * Quiet mode reaches only the benchmark groups Eleventy makes after its configuration has loaded: the one made
 * while it loads ("Configuration", which times every filter) stays verbose, so a filter slowed by a busy machine
 * printed "[11ty] Benchmark ... (Configuration) ..." from a build. Call after `init()`; `DEBUG=Eleventy:Benchmark`
 * still shows them.
 */
export function silenceBenchmarks(eleventy: WithBenchmarks): void {
  for (const group of Object.values(eleventy.bench.getAll())) group.setIsVerbose(false);
}

/** Eleventy wraps a failure in errors of its own (`originalError`): the one line an operator reads starts with the cause. */
export function causeFirst(error: unknown): unknown {
  let cause = error;
  while ((cause as { originalError?: unknown }).originalError instanceof Error)
    cause = (cause as { originalError: Error }).originalError;
  if (cause === error || !(error instanceof Error)) return error;
  return new Error(`${(cause as Error).message} (${error.message})`, { cause: error });
}
