// Bundles the site's two browser programs into ES modules: the buyer page (site/x402-buyer/src/main.ts ->
// x402-buyer/app.js, its shared code, algosdk and the Pera and Defly SDKs in chunks under assets/x402-buyer/, algosdk
// loaded with the first wallet or payment, the SDKs on the first click of their button) and the arena vote form (site/arena-vote/src/main.ts ->
// assets/arena-vote/main.js, with the wallet code in chunks loaded on the first click). Chunks sit under assets/,
// which the site copies through as it is and every host serves as a plain file. Each program also gets its licence
// file in assets/licenses/: the npm packages bundled into it with their licence texts (licenses.ts), beside the
// chunk folders rather than in them (hosts cache those for a year). `emi build` calls this before Eleventy copies
// them into dist/; the outputs are generated, never committed.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Metafile } from 'esbuild';
import { isCurrent, writeStamp } from './bundle-stamp.ts';
import { bundledPackages, renderLicenses } from './licenses.ts';
import type { PackageReader } from './licenses.ts';

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

/** Each program's third-party licences, inside a site folder (`assets/` is copied through as it is). */
export const LICENSE_PATHS = {
  buyer: 'assets/licenses/x402-buyer.txt',
  arenaVote: 'assets/licenses/arena-vote.txt',
} as const;

/** The Apache License 2.0, for packages that name it without shipping a copy. */
const APACHE_TEXT = fileURLToPath(new URL('./licence-texts/Apache-2.0.txt', import.meta.url));

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
  /** Where to write the program's licence file, and what its header calls the program. */
  licenses: { file: string; program: string };
}

/** The files of the packages on disk, each path read recorded (the stamp's inputs). */
function recordingReader(read: Set<string>): PackageReader {
  return {
    readFile(path) {
      try {
        const text = readFileSync(path, 'utf8');
        read.add(path);
        return text;
      } catch {
        return null; // absent, or a folder named like a licence file
      }
    },
    listDir(path) {
      try {
        return readdirSync(path);
      } catch {
        return null;
      }
    },
  };
}

/**
 * The input files of which some bytes are in an output: a module esbuild read but tree-shook away entirely
 * (bytesInOutput 0) ships nothing, so it owes no notice.
 */
const shippedInputs = (metafile: Metafile, workingDir: string): Set<string> =>
  new Set(
    Object.values(metafile.outputs).flatMap((output) =>
      Object.entries(output.inputs)
        .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
        .map(([path]) => resolve(workingDir, path)),
    ),
  );

/** Writes the program's licence file; returns the package files it read. */
async function writeLicenses(
  metafile: Metafile,
  workingDir: string,
  { file, program }: BundleJob['licenses'],
): Promise<string[]> {
  const read = new Set<string>();
  const packages = bundledPackages(shippedInputs(metafile, workingDir), recordingReader(read));
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, renderLicenses(program, packages, await readFile(APACHE_TEXT, 'utf8')));
  return [...read];
}

/**
 * Notices kept in the source files (`/*!`, `@license`) stay with the code, at the end of each chunk: some are in no
 * licence file of their package (lottie-web's Transformation Matrix, "MIT, header required"). 2.5 KB in all, none
 * of it in app.js; the packages' licence files go to the program's licence file.
 */
const LEGAL_COMMENTS = 'eof';

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

async function bundle({ entry, minify, out, stamp, before, licenses }: BundleJob): Promise<void> {
  const key = JSON.stringify({
    esbuild: esbuildVersion(),
    entry,
    minify,
    out,
    legalComments: LEGAL_COMMENTS,
  });
  // A missing licence file makes the bundle not current (a stamp from before the file was written names none).
  if (stamp && (await isCurrent(stamp, key)) && (await exists(licenses.file))) return;
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
    legalComments: LEGAL_COMMENTS,
    logLevel: 'silent',
    metafile: true, // the licences are read from it, and the stamp
    // The wallet connect SDKs (WalletConnect v1) still read Node's `global`.
    define: { global: 'globalThis' },
  });
  const licenseInputs = await writeLicenses(result.metafile, workingDir, licenses);
  if (stamp) await writeStamp(stamp, key, result.metafile, workingDir, licenseInputs);
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
    licenses: {
      file: join(siteDir, LICENSE_PATHS.buyer),
      program: 'the buyer page (x402-buyer/app.js and its chunks)',
    },
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
    licenses: {
      // outdir is <site>/assets/arena-vote
      file: join(dirname(dirname(outdir)), LICENSE_PATHS.arenaVote),
      program: 'the arena vote form (main.js and its chunks)',
    },
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
