import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moveInto } from '../generator/site/move-into.ts';

async function tree(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(join(root, file, '..'), { recursive: true });
    await writeFile(join(root, file), text);
  }
}

async function listing(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1) + (e.isDirectory() ? '/' : ''))
    .sort();
}

describe('moveInto', () => {
  it('replaces changed files, adds new ones, and removes files and folders the new build no longer has', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-move-'));
    await tree(join(dir, 'dist'), { 'index.html': 'old', 'api/a.php': 'old', 'gone/x.txt': 'stale' });
    await tree(join(dir, 'build'), { 'index.html': 'new', 'api/a.php': 'new', 'docs/b.html': 'added' });
    await moveInto(join(dir, 'build'), join(dir, 'dist'));
    expect(await listing(join(dir, 'dist'))).toEqual([
      'api/',
      'api/a.php',
      'docs/',
      'docs/b.html',
      'index.html',
    ]);
    expect(await readFile(join(dir, 'dist/api/a.php'), 'utf8')).toBe('new');
  });

  it('never lets a reader miss a file that both builds have, while builds keep landing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-move-'));
    const dist = join(dir, 'dist');
    await tree(dist, { 'api/market-regime.php': '{"run":0}' });
    let building = true;
    let misses = 0;
    let reads = 0;
    const reader = (async () => {
      while (building) {
        try {
          JSON.parse(await readFile(join(dist, 'api/market-regime.php'), 'utf8'));
          reads += 1;
        } catch {
          misses += 1;
        }
      }
    })();
    for (let run = 1; run <= 40; run++) {
      const build = join(dir, `build-${run}`);
      await tree(build, { 'api/market-regime.php': `{"run":${run}}`, [`extra-${run}.txt`]: 'x' });
      await moveInto(build, dist);
    }
    building = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect(misses).toBe(0);
    expect(await readFile(join(dist, 'api/market-regime.php'), 'utf8')).toBe('{"run":40}');
  });
});
