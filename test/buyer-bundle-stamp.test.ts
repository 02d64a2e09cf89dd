// A browser bundle is made again only when something it was made from changed (generator/buyer/bundle-stamp.ts).
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCurrent, writeStamp } from '../generator/buyer/bundle-stamp.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-stamp-'));
  await writeFile(join(dir, 'main.ts'), "import { two } from './two.ts';\nconsole.log(two);\n");
  await writeFile(join(dir, 'two.ts'), 'export const two = 2;\n');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function bundleAndStamp(key: string): Promise<string> {
  const stamp = join(dir, '.bundles', 'main.json');
  const result = await build({
    entryPoints: [join(dir, 'main.ts')],
    outfile: join(dir, 'out.js'),
    bundle: true,
    metafile: true,
    absWorkingDir: dir,
    logLevel: 'silent',
  });
  await writeStamp(stamp, key, result.metafile, dir);
  return stamp;
}

describe('bundle stamps', () => {
  it('says a bundle is current while its inputs, outputs and options are unchanged', async () => {
    const stamp = await bundleAndStamp('k1');
    expect(await isCurrent(stamp, 'k1')).toBe(true);
    expect(await isCurrent(stamp, 'k2')).toBe(false); // other options, esbuild version or output place
    expect(await isCurrent(join(dir, 'no-stamp.json'), 'k1')).toBe(false);
  });

  it('says it is not when an imported file changed, even with the same size', async () => {
    const stamp = await bundleAndStamp('k1');
    await writeFile(join(dir, 'two.ts'), 'export const two = 3;\n');
    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, 'two.ts'), later, later);
    expect(await isCurrent(stamp, 'k1')).toBe(false);
  });

  it('says it is not when an output or an input is gone', async () => {
    const stamp = await bundleAndStamp('k1');
    await rm(join(dir, 'out.js'));
    expect(await isCurrent(stamp, 'k1')).toBe(false);
    const again = await bundleAndStamp('k1');
    await rm(join(dir, 'two.ts'));
    expect(await isCurrent(again, 'k1')).toBe(false);
  });
});
