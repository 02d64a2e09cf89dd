// Bundles the buyer page's TypeScript (site/x402-buyer/src/main.ts) into one browser ES module. `emi build` calls
// this before Eleventy copies site/x402-buyer/ into dist/; the output (app.js) is generated, never committed.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const BUYER_ENTRY = fileURLToPath(new URL('../../site/x402-buyer/src/main.ts', import.meta.url));
export const BUYER_BUNDLE = fileURLToPath(new URL('../../site/x402-buyer/app.js', import.meta.url));

export interface BundleOptions {
  /** Where to write the bundle; defaults to site/x402-buyer/app.js. */
  outFile?: string;
  /** Minify (default true); tests may turn it off for readable stack traces. */
  minify?: boolean;
}

export async function bundleBuyerPage(options: BundleOptions = {}): Promise<void> {
  await build({
    entryPoints: [BUYER_ENTRY],
    outfile: options.outFile ?? BUYER_BUNDLE,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome109', 'safari16', 'firefox115'],
    minify: options.minify ?? true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
    // The wallet connect SDKs (WalletConnect v1) still read Node's `global`.
    define: { global: 'globalThis' },
  });
}
