// Bundles the site's two browser programs into ES modules: the buyer page (site/x402-buyer/src/main.ts ->
// x402-buyer/app.js, its shared code, algosdk and the Pera and Defly SDKs in chunks under assets/x402-buyer/, algosdk
// loaded with the first wallet or payment, the SDKs on the first click of their button) and the arena vote form (site/arena-vote/src/main.ts ->
// assets/arena-vote/main.js, with the wallet code in chunks loaded on the first click). Chunks sit under assets/,
// which the site copies through as it is and every host serves as a plain file. `emi build` calls this before
// Eleventy copies them into dist/; the outputs are generated, never committed.
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCurrent, writeStamp } from './bundle-stamp.ts';

/**
 * esbuild's version (part of each stamp's key), read from its package.json: a build whose bundles are current
 * does not load esbuild at all.
 */
const esbuildVersion = (): string =>
  (createRequire(import.meta.url)('esbuild/package.json') as { version: string }).version;

const SITE = fileURLToPath(new URL('../../site/', import.meta.url));
export const BUYER_ENTRY = join(SITE, 'x402-buyer/src/main.ts');
export const BUYER_BUNDLE = join(SITE, 'x402-buyer/app.js');
export const ARENA_VOTE_ENTRY = join(SITE, 'arena-vote/src/main.ts');

/** Where each program lands inside a site folder. */
export const BUNDLE_PATHS = {
  buyer: 'x402-buyer/app.js',
  buyerChunks: 'assets/x402-buyer',
  arenaVote: 'assets/arena-vote',
} as const;

export interface BundleOptions {
  /**
   * Where to write the page's entry (`<site>/x402-buyer/app.js`); defaults to the checkout's site folder. Its chunks
   * go to `<site>/assets/x402-buyer/`, the site folder being the one above the entry's.
   */
  outFile?: string;
  /** Minify (default true); tests may turn it off for readable stack traces. */
  minify?: boolean;
}

/** Whether esbuild (and so its service process) was started by this process. */
let esbuildLoaded = false;

interface BundleJob {
  /** The source, or the source and its output's path inside `outdir` without `.js`. */
  entry: string | { in: string; out: string };
  minify: boolean;
  out: { outfile: string } | { outdir: string; chunkNames?: string };
  /** Stamp file: when given, an unchanged bundle is not made again (see bundle-stamp.ts). */
  stamp?: string;
  /** Run before bundling (not when the bundle is skipped). */
  before?: () => Promise<void>;
}

async function bundle({ entry, minify, out, stamp, before }: BundleJob): Promise<void> {
  const key = JSON.stringify({ esbuild: esbuildVersion(), entry, minify, out });
  if (stamp && (await isCurrent(stamp, key))) return;
  await before?.();
  const { build } = await import('esbuild');
  esbuildLoaded = true;
  const workingDir = process.cwd();
  const result = await build({
    entryPoints: [entry],
    ...out,
    absWorkingDir: workingDir,
    splitting: 'outdir' in out,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome109', 'safari16', 'firefox115'],
    minify,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
    metafile: stamp !== undefined,
    // The wallet connect SDKs (WalletConnect v1) still read Node's `global`.
    define: { global: 'globalThis' },
  });
  if (stamp && result.metafile) await writeStamp(stamp, key, result.metafile, workingDir);
}

/**
 * The buyer page, split: app.js carries what the price check and the offer need (about 36 KB with its two small
 * chunks). algosdk (about 490 KB, imported with import() by config.ts, wallets/development.ts and x402-flow.ts) comes
 * with the first wallet chosen or the first payment, and the Pera and Defly SDKs (about 1 MB, in
 * wallets/connect-sdk.ts) with the first click of their button. As one file, the page took 1.6 MB before any button
 * worked; with algosdk at once, 540 KB (about 11 s on a 2 s RTT / 50 KB/s phone link).
 */
export async function bundleBuyerPage(options: BundleOptions & { stamp?: string } = {}): Promise<void> {
  const outFile = options.outFile ?? BUYER_BUNDLE;
  const siteDir = dirname(dirname(outFile));
  const chunks = join(siteDir, BUNDLE_PATHS.buyerChunks);
  await bundle({
    entry: { in: BUYER_ENTRY, out: relative(siteDir, outFile).replace(/\.js$/, '') },
    minify: options.minify ?? true,
    out: { outdir: siteDir, chunkNames: `${BUNDLE_PATHS.buyerChunks}/[name]-[hash]` },
    stamp: options.stamp,
    // Chunk names carry hashes: no stale chunk is left behind.
    before: () => rm(chunks, { recursive: true, force: true }),
  });
}

export async function bundleArenaVote(
  options: { outDir?: string; minify?: boolean; stamp?: string } = {},
): Promise<void> {
  const outdir = options.outDir ?? join(SITE, BUNDLE_PATHS.arenaVote);
  await bundle({
    entry: ARENA_VOTE_ENTRY,
    minify: options.minify ?? true,
    out: { outdir },
    stamp: options.stamp,
    // Chunk names carry hashes: no stale chunk is left behind.
    before: () => rm(outdir, { recursive: true, force: true }),
  });
}

/** Where the stamps of a site folder's bundles are kept (never published: the build ignores the folder). */
export const STAMP_FOLDER = '.bundles';

/** Both programs into a site folder (the checkout's `site/` or a copy of it), each only when it changed. */
export async function bundleSitePrograms(siteDir: string): Promise<void> {
  await Promise.all([
    bundleBuyerPage({
      outFile: join(siteDir, BUNDLE_PATHS.buyer),
      stamp: join(siteDir, STAMP_FOLDER, 'buyer.json'),
    }),
    bundleArenaVote({
      outDir: join(siteDir, BUNDLE_PATHS.arenaVote),
      stamp: join(siteDir, STAMP_FOLDER, 'arena-vote.json'),
    }),
  ]);
  await stopBundler();
}

/**
 * Stops esbuild's service process once both programs are bundled: `emi up` and `emi schedule` bundle once and then
 * run for days, and the idle service kept 25 MB (176 MB at first) beside them. A later build starts it again.
 */
async function stopBundler(): Promise<void> {
  if (!esbuildLoaded) return;
  const { stop } = await import('esbuild');
  await stop();
}
