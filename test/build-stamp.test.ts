// build/ runs compiled code, so after an edit or a `git pull` without `npm ci` it would run older code in silence:
// bin/emi.js compares the sources with the stamp the build left (bin/build-stamp.js) and says so on stderr.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { STAMP_FILE, changedSources, stampSources } from '../bin/build-stamp.js';
import type { SourceStamp } from '../bin/build-stamp.js';
import { tempDir } from './helpers/temp-dir.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..') + '/';

/** A project folder with two source files last written a minute ago, and the stamp of a build made from them. */
async function stampedProject(): Promise<{ root: string; stamp: SourceStamp }> {
  const root = (await tempDir('emi-stamp-')) + '/';
  await mkdir(join(root, 'generator'));
  const minuteAgo = new Date(Date.now() - 60_000);
  for (const [file, text] of [
    ['generator/a.ts', 'export const a = 1;\n'],
    ['generator/b.ts', 'export const b = 2;\n'],
  ] as const) {
    await writeFile(join(root, file), text);
    await utimes(join(root, file), minuteAgo, minuteAgo);
  }
  return { root, stamp: stampSources(root, ['generator/a.ts', 'generator/b.ts']) };
}

describe('the sources a build was compiled from', () => {
  it('are current until one changes or goes', async () => {
    const { root, stamp } = await stampedProject();
    expect(changedSources(root, stamp)).toEqual([]);
    await writeFile(join(root, 'generator/b.ts'), 'export const b = 3;\n'); // same size, new contents
    expect(changedSources(root, stamp)).toEqual(['generator/b.ts']);
    await rm(join(root, 'generator/a.ts'));
    expect(changedSources(root, stamp)).toEqual(['generator/a.ts', 'generator/b.ts']);
  });

  it('stay current when only their times moved (a copy, a checkout of the same contents)', async () => {
    const { root, stamp } = await stampedProject();
    const later = new Date(Date.now() + 60_000);
    await utimes(join(root, 'generator/a.ts'), later, later);
    expect(changedSources(root, stamp)).toEqual([]);
  });

  it('written just before the build are compared by contents, even if an edit keeps their time and size', async () => {
    const { root } = await stampedProject();
    const file = join(root, 'generator/a.ts');
    const second = Math.floor(Date.now() / 1000) - 1; // within the two seconds before the build
    await utimes(file, second, second);
    const stamp = stampSources(root, ['generator/a.ts']);
    expect(stamp.files['generator/a.ts']?.mtimeMs).toBeNull();
    await writeFile(file, 'export const a = 7;\n');
    await utimes(file, second, second); // the same tick of a coarse clock
    expect(changedSources(root, stamp)).toEqual(['generator/a.ts']);
  });

  it("of this checkout's build/ are the TypeScript as it is now (the suite builds first)", async () => {
    const stamp = JSON.parse(await readFile(join(ROOT, 'build', STAMP_FILE), 'utf8')) as SourceStamp;
    expect(Object.keys(stamp.files)).toContain('generator/cli.ts');
    expect(Object.keys(stamp.files)).toContain('package-lock.json'); // bundled packages change with it
    expect(Object.keys(stamp.files).some((file) => file.startsWith('node_modules/'))).toBe(false);
    expect(changedSources(ROOT, stamp)).toEqual([]);
  });
});

describe('bin/emi.js with a build older than its sources', () => {
  /** bin/ as shipped, beside a stand-in build/cli.js that reports the arguments it ran with. */
  async function project(): Promise<{
    root: string;
    emi: (...args: string[]) => Promise<{ stdout: string; stderr: string }>;
  }> {
    const { root, stamp } = await stampedProject();
    await mkdir(join(root, 'bin'));
    await mkdir(join(root, 'build'));
    for (const file of ['emi.js', 'build-stamp.js', 'node-version.js'])
      await copyFile(join(ROOT, 'bin', file), join(root, 'bin', file));
    await writeFile(
      join(root, 'build/cli.js'),
      "export async function main(argv) { console.log('ran ' + argv.slice(2).join(' ')); }\n",
    );
    await writeFile(join(root, 'build', STAMP_FILE), JSON.stringify(stamp));
    const emi = (...args: string[]) => run(process.execPath, [join(root, 'bin/emi.js'), ...args]);
    return { root, emi };
  }

  it('runs as it is and says on stderr which source changed and what to run', async () => {
    const { root, emi } = await project();
    expect(await emi('generate')).toEqual({ stdout: 'ran generate\n', stderr: '' });
    await writeFile(join(root, 'generator/a.ts'), 'export const a = 10;\n');
    const stale = await emi('generate');
    expect(stale.stdout).toBe('ran generate\n');
    expect(stale.stderr.trim().split('\n')).toEqual([
      'emi: build/ is out of date (generator/a.ts changed since it was compiled): ' +
        'run `npm run build` (after a `git pull`: `npm ci`); running the compiled code as it is',
    ]);
  });

  it('counts every changed file, and leaves help and version text alone', async () => {
    const { root, emi } = await project();
    await writeFile(join(root, 'generator/a.ts'), 'export const a = 10;\n');
    await rm(join(root, 'generator/b.ts'));
    expect((await emi('build')).stderr).toContain(
      '(generator/a.ts and 1 more changed since it was compiled)',
    );
    expect(await emi('--help')).toEqual({ stdout: 'ran --help\n', stderr: '' });
    expect(await emi('generate', '--version')).toEqual({ stdout: 'ran generate --version\n', stderr: '' });
  });

  it('runs without a word when the stamp cannot be read', async () => {
    const { root, emi } = await project();
    await writeFile(join(root, 'generator/a.ts'), 'export const a = 10;\n');
    for (const broken of ['{"files":', '{"files":null}']) {
      await writeFile(join(root, 'build', STAMP_FILE), broken);
      expect(await emi('generate')).toEqual({ stdout: 'ran generate\n', stderr: '' });
    }
  });

  it('says so when the build has no stamp: an emi from before stamps made it (a `git pull` from such a release)', async () => {
    const { root, emi } = await project();
    await rm(join(root, 'build', STAMP_FILE));
    expect(await emi('generate')).toEqual({
      stdout: 'ran generate\n',
      stderr:
        'emi: build/ is out of date (made by an older emi): ' +
        'run `npm run build` (after a `git pull`: `npm ci`); running the compiled code as it is\n',
    });
    expect(await emi('--help')).toEqual({ stdout: 'ran --help\n', stderr: '' });
  });
});
