#!/usr/bin/env node
// Compiles the TypeScript that runs at run time into build/ with esbuild; type checking stays in `npm run
// typecheck`. Run by `npm ci`/`npm install` (the `prepare` script), by the test suite's global set-up and by
// `npm run build`. Packages stay external (node_modules is imported as is). Every output file sits directly in
// build/: the entry points under their own names, and the code behind each `await import()` in its own chunk,
// so a command loads only the chunks it uses.
import { build } from 'esbuild';
import { readFile, rename, rm } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const OUT_DIR = fileURLToPath(new URL('../build/', import.meta.url));
export const ENTRY_POINTS = {
  cli: 'generator/cli.ts',
  'site-configure': 'generator/site/configure.ts',
  'discovery-urls': 'generator/discovery/urls.ts',
  'bench-generate-once': 'bench/generate-once.ts',
  'bench-paywall-once': 'bench/paywall-once.ts',
  'bench-run': 'bench/run.ts',
};

/**
 * Source files locate their assets with `new URL('../site/', import.meta.url)`. In build/ that URL would be the
 * chunk's, so each source's `import.meta.url` is rewritten to the URL its source file has in the checkout
 * (computed from the chunk's own URL, as every output file sits one level below the project root).
 */
const keepSourceUrls = {
  name: 'keep-source-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const path = relative(ROOT, args.path).split('\\').join('/');
      const url = `new URL(${JSON.stringify(path)}, new URL("../", import.meta.url)).href`;
      return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

/** Builds into a fresh folder, then swaps it in, so a running `emi` never meets a half-written build. */
export async function buildAll() {
  const started = performance.now();
  const fresh = `${OUT_DIR.replace(/\/$/, '')}.${process.pid}.tmp`;
  const old = `${OUT_DIR.replace(/\/$/, '')}.${process.pid}.old`;
  await rm(fresh, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRY_POINTS,
    outdir: fresh,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    // Tells the code it runs compiled, tied to this build/ (generator/site/derived-cache.ts).
    define: { EMI_COMPILED: 'true' },
    plugins: [keepSourceUrls],
  });
  await rename(OUT_DIR, old).catch((error) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rename(fresh, OUT_DIR);
  await rm(old, { recursive: true, force: true });
  return performance.now() - started;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ms = await buildAll();
  console.error(
    `emi: compiled ${Object.keys(ENTRY_POINTS).length} entry points into build/ in ${ms.toFixed(0)} ms`,
  );
}
