import { lstat, mkdir, readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generationsTidied } from '../generator/publish/generations.ts';
import { buildInto } from '../generator/site/move-into.ts';
import { tempDir } from './helpers/temp-dir.ts';

async function tree(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(join(root, file, '..'), { recursive: true });
    await writeFile(join(root, file), text);
  }
}

async function listing(root: string): Promise<string[]> {
  const real = await realpath(root);
  const entries = await readdir(real, { recursive: true, withFileTypes: true });
  return entries
    .map((e) => join(e.parentPath, e.name).slice(real.length + 1) + (e.isDirectory() ? '/' : ''))
    .sort();
}

describe('buildInto (the atomic switch of dist/)', () => {
  it('serves exactly the new build, and keeps a real folder found in its place as a legacy generation', async () => {
    const dir = await tempDir('emi-move-');
    await tree(join(dir, 'dist'), { 'index.html': 'old', 'api/a.php': 'old', 'gone/x.txt': 'stale' });
    await buildInto(join(dir, 'dist'), (out) =>
      tree(out, { 'index.html': 'new', 'api/a.php': 'new', 'docs/b.html': 'added' }),
    );
    expect((await lstat(join(dir, 'dist'))).isSymbolicLink()).toBe(true);
    expect(await listing(join(dir, 'dist'))).toEqual([
      'api/',
      'api/a.php',
      'docs/',
      'docs/b.html',
      'index.html',
    ]);
    expect(await readFile(join(dir, 'dist/api/a.php'), 'utf8')).toBe('new');
    const kept = (await readdir(join(dir, '.dist.generations'))).filter((n) => n.startsWith('legacy-'));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(dir, '.dist.generations', kept[0]!, 'gone/x.txt'), 'utf8')).toBe('stale');
  });

  it('leaves the old build served, whole, when a build fails', async () => {
    const dir = await tempDir('emi-move-');
    const dist = join(dir, 'dist');
    await buildInto(dist, (out) => tree(out, { 'index.html': 'one', 'api/a.php': 'one' }));
    const failing = buildInto(dist, async (out) => {
      await tree(out, { 'index.html': 'two' });
      throw new Error('Eleventy failed');
    });
    await expect(failing).rejects.toThrow('Eleventy failed');
    expect(await listing(dist)).toEqual(['api/', 'api/a.php', 'index.html']);
    expect(await readFile(join(dist, 'index.html'), 'utf8')).toBe('one');
    expect((await readdir(join(dir, '.dist.generations'))).filter((n) => n.startsWith('tmp-'))).toEqual([]);
  });

  it('never lets a reader miss a file or mix two builds while builds keep landing, and keeps only a few', async () => {
    const dir = await tempDir('emi-move-');
    const dist = join(dir, 'dist');
    await buildInto(dist, (out) => tree(out, { 'api/market-regime.php': '{"run":0}', 'index.html': '0' }));
    let building = true;
    let misses = 0;
    let mixes = 0;
    let reads = 0;
    const reader = (async () => {
      while (building) {
        try {
          const { run } = JSON.parse(await readFile(join(dist, 'api/market-regime.php'), 'utf8')) as {
            run: number;
          };
          const index = Number(await readFile(join(dist, 'index.html'), 'utf8'));
          // The index is read second: it may be newer than the JSON, never older.
          if (index < run) mixes += 1;
          reads += 1;
        } catch {
          misses += 1;
        }
      }
    })();
    for (let run = 1; run <= 40; run++) {
      await buildInto(dist, (out) =>
        tree(out, { 'api/market-regime.php': `{"run":${run}}`, 'index.html': String(run) }),
      );
    }
    building = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect(misses).toBe(0);
    expect(mixes).toBe(0);
    expect(await readFile(join(dist, 'api/market-regime.php'), 'utf8')).toBe('{"run":40}');
    await generationsTidied(); // superseded builds are removed in the background
    const generations = (await readdir(join(dir, '.dist.generations'))).filter((n) => n.startsWith('g-'));
    expect(generations.length).toBeLessThanOrEqual(2);
  });
});
