// A publisher storefront on the whole local stack (`emi serve`: preview origin, paywall worker, development
// facilitator), as the storefront tests need it: a temporary folder holding a built site (dist/x402-buyer/ with the
// buyer page's index.html and buyer.css, its app.js bundled as `emi build` does or a stub, and any other site pages),
// the paid files, an emi.config.json of publisher entries and a publishers.sqlite ledger with their credits. Several
// suites used to build this by hand, each slightly differently; one helper keeps what "a storefront stack" means in
// one place, and the tests state only how theirs differs.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBuyerPage } from '../generator/buyer/bundle.ts';
import { startLocalStack, type LocalStack } from '../generator/local-stack.ts';
import type { PublisherInput } from '../paywall-worker/publishers/config.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { writePaidFixtures } from './paywall-harness.ts';

const BUYER_PAGE_SOURCE = join(import.meta.dirname, '..', 'site', 'x402-buyer');

/**
 * The buyer page's code at dist/x402-buyer/app.js: the real page as `emi build` bundles it (chunks under
 * dist/assets/x402-buyer/; `minify` defaults to true, as in a build), or a stub whose source is given.
 */
export type StorefrontApp = { bundle: true; minify?: boolean } | { stub: string };

export interface StorefrontStackOptions {
  /** Prefix of the temporary folder (under the system's temp folder). */
  prefix: string;
  /** The config file's `publishers` entries. */
  publishers: PublisherInput[];
  /** Credits per publisher id in the ledger; a publisher not named has none. */
  credits?: Record<string, number>;
  app: StorefrontApp;
  /** Other pages of the built site: folder under dist/ ('' for the home page) to its index.html. */
  pages?: Record<string, string>;
  /** The stack's port, or a picker of one (default 0: any free port). */
  port?: number | (() => Promise<number>);
  /** Writes the paid files into the (existing) paid folder; default the paid fixtures. */
  writePaid?: (paid: string) => Promise<void>;
}

export interface StorefrontStack {
  stack: LocalStack;
  /** The temporary folder holding dist/, paid/, the config file and the ledger. */
  dir: string;
  config: string;
  ledgerFile: string;
  /** Stops the stack and removes the folder. */
  close(): Promise<void>;
}

async function writeBuyerPage(dist: string, app: StorefrontApp): Promise<void> {
  const page = join(dist, 'x402-buyer');
  await mkdir(page, { recursive: true });
  for (const file of ['index.html', 'buyer.css'])
    await copyFile(join(BUYER_PAGE_SOURCE, file), join(page, file));
  if ('stub' in app) await writeFile(join(page, 'app.js'), app.stub);
  else await bundleBuyerPage({ outFile: join(page, 'app.js'), minify: app.minify ?? true });
}

async function writePages(dist: string, pages: Record<string, string>): Promise<void> {
  for (const [folder, html] of Object.entries(pages)) {
    await mkdir(join(dist, folder), { recursive: true });
    await writeFile(join(dist, folder, 'index.html'), html);
  }
}

async function writeLedger(ledgerFile: string, credits: Record<string, number>): Promise<void> {
  const ledger = new SqliteCreditLedger(ledgerFile);
  try {
    for (const [id, amount] of Object.entries(credits)) await ledger.credit(id, amount);
  } finally {
    ledger.close();
  }
}

export async function startStorefrontStack(options: StorefrontStackOptions): Promise<StorefrontStack> {
  const dir = await mkdtemp(join(tmpdir(), options.prefix));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const dist = join(dir, 'dist');
    const paid = join(dir, 'paid');
    const config = join(dir, 'emi.config.json');
    const ledgerFile = join(dir, 'publishers.sqlite');
    await writeBuyerPage(dist, options.app);
    await writePages(dist, options.pages ?? {});
    await mkdir(paid, { recursive: true });
    await (options.writePaid ?? writePaidFixtures)(paid);
    await writeFile(config, JSON.stringify({ publishers: options.publishers }));
    await writeLedger(ledgerFile, options.credits ?? {});
    const port = typeof options.port === 'function' ? await options.port() : (options.port ?? 0);
    const stack = await startLocalStack({
      port,
      host: '127.0.0.1',
      dir: dist,
      paid,
      devFacilitatorPort: 0,
      config,
      ledgerFile,
      log: () => {},
    });
    const close = async () => {
      await stack.close();
      await remove();
    };
    return { stack, dir, config, ledgerFile, close };
  } catch (error) {
    await remove(); // a stack that did not start leaves no folder behind
    throw error;
  }
}
