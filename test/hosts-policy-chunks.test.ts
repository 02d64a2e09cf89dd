// The cache hints of the browser programs' files (schemas/delivery.ts `cacheFor`) against what esbuild really writes
// (generator/buyer/bundle.ts): every chunk a build names with its content hash is kept for a year, the entry scripts,
// whose names never change, are revalidated, and nothing else in the site's folders is taken for a chunk.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_PATHS, bundleArenaVote, bundleBuyerPage, LICENSE_PATHS } from '../generator/buyer/bundle.ts';
import { cacheFor } from '../schemas/delivery.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/** Every file under `dir`, as URL paths of the site rooted there. */
async function urlPathsUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => `/${relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/')}`);
}

describe('cache hints of the browser programs’ files, as esbuild names them', { timeout: 120_000 }, () => {
  let site: string;
  let written: string[];

  beforeAll(async () => {
    site = await mkdtemp(join(tmpdir(), 'emi-hosts-chunks-'));
    await bundleBuyerPage({ outFile: join(site, BUNDLE_PATHS.buyer) });
    await bundleArenaVote({ outDir: join(site, BUNDLE_PATHS.arenaVote) });
    written = await urlPathsUnder(site);
  }, 120_000);

  afterAll(() => rm(site, { recursive: true, force: true }));

  it('revalidates the two entry scripts and keeps every chunk for a year', () => {
    const entries = [`/${BUNDLE_PATHS.buyer}`, `/${BUNDLE_PATHS.arenaVote}/main.js`];
    for (const entry of entries) {
      expect(written).toContain(entry);
      expect(cacheFor(entry), entry).toBe(REVALIDATE);
    }
    // The programs' licence files sit outside the chunk folders, under a fixed name: never kept for a year.
    const licences = Object.values(LICENSE_PATHS).map((path) => `/${path}`);
    for (const licence of licences) {
      expect(written).toContain(licence);
      expect(cacheFor(licence), licence).toBeNull();
    }
    const chunks = written.filter((path) => !entries.includes(path) && !licences.includes(path));
    // Both programs are split (the buyer page's algosdk and wallet SDKs, the vote form's wallet code).
    expect(chunks.filter((path) => path.startsWith(`/${BUNDLE_PATHS.buyerChunks}/`)).length).toBeGreaterThan(
      1,
    );
    expect(chunks.filter((path) => path.startsWith(`/${BUNDLE_PATHS.arenaVote}/`)).length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(cacheFor(chunk), chunk).toBe(IMMUTABLE);
  });

  it('keeps no other script or page for a year: a name without the content hash, or outside the programs’ folders', () => {
    for (const path of [
      '/assets/site.js',
      '/assets/api-reference.js',
      '/x402-buyer/index.html',
      '/assets/arena-vote/main-ABCDEFGH.json',
      '/assets/arena-vote/chunk-abcdefgh.js', // esbuild's hashes are upper-case base32
      '/assets/arena-vote/chunk-ABCDEFG1.js', // ... of A-Z and 2-7
      '/assets/x402-buyer/nested/chunk-ABCDEFGH.js',
      '/x402-buyer/chunk-ABCDEFGH.js',
      '/api/history/chunk-ABCDEFGH.js',
    ])
      expect(cacheFor(path), path).not.toBe(IMMUTABLE);
  });
});
