// The Cloudflare Worker ships as `wrangler deploy` bundles it: the dry run passes offline, and the bundle holds the
// web-standard paywall and site router, never the Node-only parts (filesystem storage, development facilitator).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleForDeploy } from '../deploy/cloudflare/run.ts';

describe('Cloudflare Worker bundle', () => {
  it('passes wrangler deploy --dry-run and leaves the Node-only modules out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-bundle-'));
    try {
      await mkdir(join(dir, 'dist'));
      await writeFile(join(dir, 'dist/index.html'), '<!doctype html><title>home</title>');
      await bundleForDeploy(join(dir, 'out'), join(dir, 'dist'));
      const map = JSON.parse(await readFile(join(dir, 'out/entry.js.map'), 'utf8')) as { sources: string[] };
      const own = map.sources.filter((source) => !source.includes('node_modules'));
      expect(own.some((source) => source.endsWith('paywall-worker/core/decide.ts'))).toBe(true);
      expect(own.some((source) => source.endsWith('schemas/delivery.ts'))).toBe(true);
      expect(
        own.filter((source) => /storage-fs|dev-facilitator|node-listen|better-sqlite3/.test(source)),
      ).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
