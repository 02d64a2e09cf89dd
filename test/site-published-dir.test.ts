// `emi generate --out elsewhere` then `emi build --published elsewhere`: the templates come from the project's
// site/ folder, the published files from the other folder, and nothing of site/api leaks into the build.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildSite } from '../generator/site/build.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { tempDir } from './helpers/temp-dir.ts';

const TEMPLATES = fileURLToPath(new URL('../site/', import.meta.url));

describe('building from a published folder outside the templates', () => {
  it('copies that folder’s files and renders the docs from the project templates', async () => {
    const dir = await tempDir('emi-published-');
    const published = join(dir, 'published');
    await runPipeline({
      outDir: published,
      paidDir: join(dir, 'paid'),
      stateDir: join(dir, 'var'),
      source: 'sim',
      seed: 9,
      asOf: Date.parse('2026-03-01T08:00:00Z'),
    });
    const dist = join(dir, 'dist');
    await buildSite({
      siteDir: TEMPLATES,
      publishedDir: published,
      outDir: dist,
      baseUrl: 'http://127.0.0.1:1',
    });

    for (const file of [
      'api/market-regime.php',
      'api/reasoning/ETH.json',
      'arena/get_shared_intelligence.php',
    ]) {
      expect(await readFile(join(dist, file)), file).toEqual(await readFile(join(published, file)));
    }
    expect(await readFile(join(dist, 'index.html'), 'utf8')).toMatch(/2026-03-01/);
    expect((await readdir(dist)).sort()).toEqual(
      expect.arrayContaining(['docs', 'llms.txt', 'openapi.json']),
    );
  });
});
