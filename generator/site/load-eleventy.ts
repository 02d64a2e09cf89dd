// Eleventy as emi's builds use it: loaded without its watch-mode module resolver hook, and with each template
// compiled once per instance. Both rely on Eleventy 3.1 internals and are guarded by tests
// (test/site-load-eleventy.test.ts; the byte-for-byte comparisons of test/site-warm-build.test.ts and
// test/site-build-process.test.ts).
import { relative } from 'node:path';
import type Eleventy from '@11ty/eleventy';
import type { EleventyUserConfig } from '@11ty/eleventy';

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
 * A path as Eleventy takes it: relative to the working directory, where it matches its input, passthrough and
 * ignore globs. Eleventy reads each path as a glob, so one holding glob syntax would silently match nothing (a
 * checkout under `~/sites (old)/` built a site with no pages); relative, the checkout's own path stays out of it
 * when emi runs from the checkout, and anything else is refused.
 */
export function eleventyPath(path: string): string {
  const fromCwd = relative(process.cwd(), path) || '.';
  if (GLOB_SYNTAX.test(fromCwd)) {
    throw new Error(
      `Eleventy reads ${fromCwd} (the way from the working directory to ${path}) as a glob, and would build ` +
        'nothing from it: run emi from a folder with none of * ? [ ] { } ( ) ! on that way (the checkout itself)',
    );
  }
  return fromCwd;
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
  return new Loaded(eleventyPath(siteDir), outDir, { ...options, configPath: false, loader: 'esm' });
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
