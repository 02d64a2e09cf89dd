#!/usr/bin/env node
// Compiles the TypeScript that runs at run time into build/ with esbuild; type checking stays in `npm run
// typecheck`. Run by `npm ci`/`npm install` (the `prepare` script), by the test suite's global set-up and by
// `npm run build`. Packages are bundled in, except a few left in node_modules (`leaveSomePackages`). Every
// output file sits directly in build/: the entry points under their own names, and the code behind each
// `await import()` in its own chunk, so a command loads only the chunks it uses.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { copyFile, link, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP_FILE, stampSources } from './build-stamp.js';
import { nodeTooOld } from './node-version.js';

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
 * Source files locate their assets with `new URL('../site/', import.meta.url)`, and Eleventy its own files the
 * same way. In build/ that URL would be the chunk's, so each file's `import.meta.url` is rewritten to the URL the
 * file has in the checkout (computed from the chunk's own URL, as every output file sits one level below the
 * project root).
 */
const keepSourceUrls = {
  name: 'keep-source-urls',
  setup(build) {
    build.onLoad({ filter: /\.(ts|js|mjs)$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const path = relative(ROOT, args.path).split('\\').join('/');
      const url = `new URL(${JSON.stringify(path)}, new URL("../", import.meta.url)).href`;
      return {
        contents: source.replaceAll('import.meta.url', url),
        loader: args.path.endsWith('.ts') ? 'ts' : 'js',
      };
    });
  },
};

/**
 * Packages are bundled into build/ too, except these: native code, esbuild (a binary of its own) and what only
 * Eleventy's watch mode and dev server use. From node_modules a command loads packages as many small modules
 * (`emi paywall` some 1 600, Eleventy some 400, zod 95), which Node resolves, reads and compiles one by one, and
 * for CommonJS parses twice; bundled, they are a few chunks (see the README's Decisions for what it saves). One
 * copy of each package serves every chunk, so zod schemas handed to the MCP SDK are read by the same zod. Bundled
 * packages keep their own `import.meta.url` (keepSourceUrls), so they still find their files.
 */
export const LEFT_IN_NODE_MODULES = new Set([
  '@11ty/eleventy-dev-server',
  'better-sqlite3',
  'chokidar',
  'esbuild',
  'fsevents',
]);
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

const leaveSomePackages = {
  name: 'leave-some-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      LEFT_IN_NODE_MODULES.has(packageName(args.path)) ? { external: true } : undefined,
    );
  },
};

/** CommonJS code bundled into an ES module still calls `require` (for Node's built-in modules). */
const REQUIRE_BANNER =
  "import { createRequire as __emiRequire } from 'node:module'; const require = __emiRequire(import.meta.url);";

/** Builds into a fresh folder, then swaps it in, so a running `emi` never meets a half-written build. */
export async function buildAll() {
  const started = performance.now();
  const fresh = `${OUT_DIR.replace(/\/$/, '')}.${process.pid}.tmp`;
  const old = `${OUT_DIR.replace(/\/$/, '')}.${process.pid}.old`;
  await rm(fresh, { recursive: true, force: true });
  const { metafile } = await build({
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
    banner: { js: REQUIRE_BANNER },
    sourcemap: 'linked',
    logLevel: 'warning',
    // Tells the code it runs compiled, tied to this build/ (generator/site/derived-cache.ts).
    define: { EMI_COMPILED: 'true' },
    plugins: [keepSourceUrls, leaveSomePackages],
    metafile: true,
  });
  // The files each output file was made from: the tests read it to tell which chunks hold a bundled package.
  const sources = Object.entries(metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, output]) => [basename(file), Object.keys(output.inputs)]);
  await writeFile(join(fresh, 'sources.json'), JSON.stringify(Object.fromEntries(sources)));
  // What it was compiled from, for bin/emi.js to tell when build/ has fallen behind: the project's own files, and
  // for the bundled packages the lockfile, which `npm install <package>` rewrites without compiling build/ again.
  const own = Object.keys(metafile.inputs).filter((file) => !file.startsWith('node_modules/'));
  if (existsSync(join(ROOT, 'package-lock.json'))) own.push('package-lock.json');
  await writeFile(join(fresh, STAMP_FILE), JSON.stringify(stampSources(ROOT, own)));
  await keepPreviousChunks(OUT_DIR, fresh);
  await rename(OUT_DIR, old).catch((error) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rename(fresh, OUT_DIR);
  await rm(old, { recursive: true, force: true });
  return performance.now() - started;
}

/**
 * A process started from the build being replaced (`emi up`, `emi paywall` during `git pull && npm ci`) loads some
 * chunks only when it first needs them: the previous build's own chunks are kept beside the new ones until the
 * next build, so an upgrade under a running process does not take them away before its restart. Chunk names carry
 * a hash of their content, so a kept chunk never differs from a new one of the same name; kept chunks are not in
 * the new sources.json, so the build after next drops them.
 */
export async function keepPreviousChunks(previous, fresh) {
  let made;
  try {
    made = Object.keys(JSON.parse(await readFile(join(previous, 'sources.json'), 'utf8')));
  } catch {
    return; // no previous build, or one from before sources.json: nothing to keep
  }
  const chunks = made.filter((name) => /-[A-Z0-9]{8}\.js$/.test(name));
  for (const name of chunks.flatMap((chunk) => [chunk, `${chunk}.map`])) {
    if (existsSync(join(fresh, name)) || !existsSync(join(previous, name))) continue;
    await link(join(previous, name), join(fresh, name)).catch(() =>
      copyFile(join(previous, name), join(fresh, name)),
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `npm ci` runs this (prepare): on a Node that emi cannot run on, the install stops here, saying why.
  const tooOld = nodeTooOld();
  if (tooOld) {
    console.error(tooOld);
    process.exit(1);
  }
  const ms = await buildAll();
  console.error(
    `emi: compiled ${Object.keys(ENTRY_POINTS).length} entry points into build/ in ${ms.toFixed(0)} ms`,
  );
}
