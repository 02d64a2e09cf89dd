// An upgrade under a running process: `npm ci` compiles build/ afresh and swaps it in while `emi up` or
// `emi paywall` still runs from the old one, and such a process loads some chunks only when it first needs them
// (`await import()`). bin/build.js keeps the previous build's own chunks beside the new ones until the next build.
// Here a real Node process started from an "old build" loads its lazy chunk after the folder was swapped, as
// buildAll swaps it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keepPreviousChunks } from '../bin/build.js';

const scratch: string[] = [];
afterEach(async () => {
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A build folder: `files` name → content, and sources.json listing the ones this build made. */
async function buildFolder(dir: string, files: Record<string, string>, made: string[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  await writeFile(join(dir, 'sources.json'), JSON.stringify(Object.fromEntries(made.map((n) => [n, []]))));
}

/** Swaps `fresh` in for `out` as buildAll does, keeping the previous chunks when `keep` is set. */
async function swap(out: string, fresh: string, keep: boolean): Promise<void> {
  if (keep) await keepPreviousChunks(out, fresh);
  await rename(out, `${out}.old`);
  await rename(fresh, out);
  await rm(`${out}.old`, { recursive: true, force: true });
}

/** Starts `node out/cli.js`, which loads its lazy chunk when told to (a line on stdin), and reports what it got. */
function startOld(out: string) {
  const child = spawn(process.execPath, [join(out, 'cli.js')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = new Promise<void>((resolve) => {
    const check = () => (output.includes('started') ? resolve() : setTimeout(check, 20));
    check();
  });
  const done = new Promise<string>((resolve) => child.on('close', () => resolve(output)));
  return { ready, done, loadNow: () => child.stdin.end('go\n') };
}

const CLI = `
process.stdout.write('started\\n');
process.stdin.once('data', async () => {
  try {
    const { answer } = await import('./warm-build-AAAAAAAA.js');
    process.stdout.write('loaded ' + answer + '\\n');
  } catch (error) {
    process.stdout.write('failed ' + error.code + '\\n');
  }
});
`;

describe('an upgrade under a running process', () => {
  async function upgradeWhileRunning(keep: boolean): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'emi-keep-chunks-'));
    scratch.push(root);
    const out = join(root, 'build');
    await writeFile(join(root, 'package.json'), '{"type":"module"}');
    await buildFolder(out, { 'cli.js': CLI, 'warm-build-AAAAAAAA.js': 'export const answer = "old";\n' }, [
      'cli.js',
      'warm-build-AAAAAAAA.js',
    ]);
    const old = startOld(out);
    await old.ready;
    // The new build: the same entry name, the lazy chunk's code changed (so its hash and name changed).
    const fresh = join(root, 'build.fresh');
    await buildFolder(
      fresh,
      {
        'cli.js': CLI.replace('AAAAAAAA', 'BBBBBBBB'),
        'warm-build-BBBBBBBB.js': 'export const answer = "new";\n',
      },
      ['cli.js', 'warm-build-BBBBBBBB.js'],
    );
    await swap(out, fresh, keep);
    old.loadNow();
    return old.done;
  }

  it('the running process still loads its own lazy chunk after the swap', async () => {
    expect(await upgradeWhileRunning(true)).toContain('loaded old');
  });

  it('without keeping the previous chunks, it cannot (what happened before)', async () => {
    expect(await upgradeWhileRunning(false)).toContain('failed ERR_MODULE_NOT_FOUND');
  });

  it('keeps only the previous build’s own chunks, and never replaces a new file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'emi-keep-chunks-'));
    scratch.push(root);
    const previous = join(root, 'previous');
    const fresh = join(root, 'fresh');
    await buildFolder(
      previous,
      {
        'cli.js': 'old entry',
        'chunk-AAAAAAAA.js': 'old chunk',
        'chunk-AAAAAAAA.js.map': 'old map',
        'same-CCCCCCCC.js': 'same chunk',
        'kept-DDDDDDDD.js': 'kept from the build before: not this build’s own',
      },
      ['cli.js', 'chunk-AAAAAAAA.js', 'same-CCCCCCCC.js'],
    );
    await buildFolder(fresh, { 'cli.js': 'new entry', 'same-CCCCCCCC.js': 'same chunk' }, [
      'cli.js',
      'same-CCCCCCCC.js',
    ]);
    await keepPreviousChunks(previous, fresh);
    expect(await readFile(join(fresh, 'chunk-AAAAAAAA.js'), 'utf8')).toBe('old chunk');
    expect(await readFile(join(fresh, 'chunk-AAAAAAAA.js.map'), 'utf8')).toBe('old map');
    expect(await readFile(join(fresh, 'cli.js'), 'utf8')).toBe('new entry'); // entries are never carried
    expect(existsSync(join(fresh, 'kept-DDDDDDDD.js'))).toBe(false); // one build back only
    // The new sources.json does not list the kept chunk: the build after next drops it.
    const made = Object.keys(JSON.parse(await readFile(join(fresh, 'sources.json'), 'utf8')) as object);
    expect(made).not.toContain('chunk-AAAAAAAA.js');
  });
});
