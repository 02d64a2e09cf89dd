// The build links the published API files into its output instead of copying them: the same bytes, the same
// file on disk, and a later generator run (which renames new files over old ones) never changes a built file.
import { link, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkTree } from '../generator/site/link-tree.ts';
import { generateAndBuild } from './site-fixture.ts';
import type { BuiltSite } from './site-fixture.ts';

describe('published files in the build', () => {
  let site: BuiltSite;
  beforeAll(async () => {
    site = await generateAndBuild({ runs: 1 });
  }, 180_000);
  afterAll(async () => {
    await site?.cleanup();
  });

  it('are the published files themselves, linked, not copies', async () => {
    for (const path of ['api/market-regime.php', 'api/reasoning/BTC.json']) {
      const [published, built] = await Promise.all([
        stat(join(site.siteDir, path)),
        stat(join(site.distDir, path)),
      ]);
      expect(built.ino, path).toBe(published.ino);
      expect(built.nlink, path).toBeGreaterThanOrEqual(2);
    }
  });
});

describe('linkTree', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-link-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the old bytes in the target when the source file is replaced by a rename', async () => {
    await writeFile(join(dir, 'a.json'), '{"run":1}');
    await linkTree(dir, join(dir, 'out'));
    await writeFile(join(dir, 'a.json.tmp'), '{"run":2}');
    await rename(join(dir, 'a.json.tmp'), join(dir, 'a.json'));
    expect(await readFile(join(dir, 'out', 'a.json'), 'utf8')).toBe('{"run":1}');
  });

  it('never carries a staging file (.<name>.<hex>.tmp) of a killed run', async () => {
    const source = join(dir, 'with-leftover');
    await mkdir(join(source, 'api'), { recursive: true });
    await writeFile(join(source, 'api/a.php'), 'a');
    await writeFile(join(source, 'api/.a.php.0123456789ab.tmp'), 'half');
    expect(await linkTree(source, join(dir, 'out3'))).toBe(1);
    expect(await readdir(join(dir, 'out3/api'))).toEqual(['a.php']);
  });

  it('links nothing from a missing folder and refuses to overwrite an existing file', async () => {
    expect(await linkTree(join(dir, 'missing'), join(dir, 'out2'))).toBe(0);
    await writeFile(join(dir, 'b.json'), 'b');
    await link(join(dir, 'b.json'), join(dir, 'b-link.json'));
    await expect(linkTree(dir, dir)).rejects.toThrow(/EEXIST/);
  });
});
