// Bundles the site's two browser programs into ES modules: the buyer page (site/x402-buyer/src/main.ts ->
// x402-buyer/app.js) and the arena vote form (site/arena-vote/src/main.ts -> assets/arena-vote/main.js, with the
// wallet code in chunks loaded on the first click). `emi build` calls this before Eleventy copies them into
// dist/; the outputs are generated, never committed.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const SITE = fileURLToPath(new URL('../../site/', import.meta.url));
export const BUYER_ENTRY = join(SITE, 'x402-buyer/src/main.ts');
export const BUYER_BUNDLE = join(SITE, 'x402-buyer/app.js');
export const ARENA_VOTE_ENTRY = join(SITE, 'arena-vote/src/main.ts');

/** Where each program lands inside a site folder. */
export const BUNDLE_PATHS = { buyer: 'x402-buyer/app.js', arenaVote: 'assets/arena-vote' } as const;

export interface BundleOptions {
  /** Where to write the bundle; defaults to the checkout's site folder. */
  outFile?: string;
  /** Minify (default true); tests may turn it off for readable stack traces. */
  minify?: boolean;
}

const bundle = (entry: string, minify: boolean, out: { outfile: string } | { outdir: string }) =>
  build({
    entryPoints: [entry],
    ...out,
    splitting: 'outdir' in out,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome109', 'safari16', 'firefox115'],
    minify,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
    // The wallet connect SDKs (WalletConnect v1) still read Node's `global`.
    define: { global: 'globalThis' },
  });

export async function bundleBuyerPage(options: BundleOptions = {}): Promise<void> {
  await bundle(BUYER_ENTRY, options.minify ?? true, { outfile: options.outFile ?? BUYER_BUNDLE });
}

export async function bundleArenaVote(options: { outDir?: string; minify?: boolean } = {}): Promise<void> {
  const outdir = options.outDir ?? join(SITE, BUNDLE_PATHS.arenaVote);
  await rm(outdir, { recursive: true, force: true }); // chunk names carry hashes: no stale chunk is left behind
  await bundle(ARENA_VOTE_ENTRY, options.minify ?? true, { outdir });
}

/** Both programs into a site folder (the checkout's `site/` or a copy of it). */
export async function bundleSitePrograms(siteDir: string): Promise<void> {
  await Promise.all([
    bundleBuyerPage({ outFile: join(siteDir, BUNDLE_PATHS.buyer) }),
    bundleArenaVote({ outDir: join(siteDir, BUNDLE_PATHS.arenaVote) }),
  ]);
}
