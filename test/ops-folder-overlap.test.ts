// Folder options that meet: a run replaces its public output's api/ and arena/, its paid folder and its build
// output by links, moving a real folder found there aside. Given the working folder (`emi build --out .`), that
// move took the whole folder (its state, a checkout's .git) away; given a folder another option names, it moved
// that option's files. Each is now a usage mistake said before anything is written, and the move itself refuses a
// folder that is or holds the working folder, the generations or the state folder.
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { createProgram } from '../generator/cli.ts';
import { checkCommandConfiguration } from '../generator/config-file.ts';
import { commandFolders, folderOverlapProblem, isSameOrInside } from '../generator/folder-overlap.ts';
import { publishGeneration, realFs } from '../generator/publish/generations.ts';
import type { PublishFs } from '../generator/publish/generations.ts';
import { errorLines, expectOk, runEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const BASE_URL = 'http://127.0.0.1:20600';
const AS_OF = '2026-03-02T10:00:00.000Z';

/** A working folder `sb` (inside a temp folder, so that what lands beside it goes too) holding a precious file. */
async function workingFolder(): Promise<string> {
  const cwd = join(await tempDir('emi-overlap-'), 'sb');
  await mkdir(cwd);
  await writeFile(join(cwd, 'precious.txt'), 'mine');
  return cwd;
}

/** Everything under `dir` (names, sorted), to compare before and after a refused command. */
async function listing(dir: string): Promise<string[]> {
  return ((await readdir(dir, { recursive: true })) as string[]).sort();
}

/** Exit 2 and one line naming `line`: a usage mistake. */
function expectRefused(run: Finished, line: RegExp): void {
  expect(run.code, `${run.stdout}${run.stderr}`).toBe(2);
  expect(errorLines(run)).toEqual([expect.stringMatching(line)]);
}

/** The working folder is still a real folder with its file, and nothing beside it or in it changed. */
async function expectUntouched(cwd: string, before: { inside: string[]; beside: string[] }): Promise<void> {
  expect((await lstat(cwd)).isDirectory()).toBe(true);
  expect(await readFile(join(cwd, 'precious.txt'), 'utf8')).toBe('mine');
  expect(await listing(cwd)).toEqual(before.inside);
  expect(await readdir(dirname(cwd))).toEqual(before.beside);
}

const snapshot = async (cwd: string) => ({
  inside: await listing(cwd),
  beside: await readdir(dirname(cwd)),
});

describe('folder options that meet are refused before anything is written (the real CLI)', () => {
  it('emi build --out . (and --out ""): the working folder is not moved aside', async () => {
    const cwd = await workingFolder();
    expectOk(await runEmi(cwd, ['generate', '--state', 's', '--out', 'o', '--paid', 'p', '--as-of', AS_OF]));
    const before = await snapshot(cwd);
    for (const out of ['.', '']) {
      const run = await runEmi(cwd, ['build', '--base-url', BASE_URL, '--published', 'o', '--out', out]);
      expectRefused(run, /--out .*(working folder|empty)/);
      await expectUntouched(cwd, before);
    }
    // An ancestor of the working folder: the same.
    const up = await runEmi(cwd, ['build', '--base-url', BASE_URL, '--published', 'o', '--out', '..']);
    expectRefused(up, /--out \.\. is an ancestor of the working folder/);
    await expectUntouched(cwd, before);
  });

  it('emi build --out site (the default --published): site/api stays a link, no legacy folder is made', async () => {
    const cwd = await workingFolder();
    expectOk(await runEmi(cwd, ['generate', '--as-of', AS_OF]));
    const before = await snapshot(cwd);
    const run = await runEmi(cwd, ['build', '--base-url', BASE_URL, '--out', 'site']);
    expectRefused(run, /--out site is the same folder as --published site/);
    await expectUntouched(cwd, before);
    expect((await lstat(join(cwd, 'site/api'))).isSymbolicLink()).toBe(true);
    expect((await readdir(join(cwd, 'var/published'))).filter((n) => n.startsWith('legacy-'))).toEqual([]);
  });

  it.each([
    [['--out', 'oz', '--dist', 'oz'], /--dist oz is the same folder as --out oz/],
    [['--out', 'same', '--paid', 'same'], /--paid same is the same folder as --out same/],
    [['--out', 'pubx', '--paid', 'pubx/api/paid'], /--paid pubx\/api\/paid is inside --out pubx/],
    [['--out', 'o', '--state', 'o/s'], /--state o\/s is inside --out o/],
    [['--out', '.'], /--out \. is the working folder/],
    [['--paid', ''], /--paid is empty/],
  ])('emi generate %j: exit 2, nothing written', async (args, line) => {
    const cwd = await workingFolder();
    // A folder of the operator's where the links would go: it must stay as it is.
    await mkdir(join(cwd, 'same'));
    await writeFile(join(cwd, 'same/own.json'), '{}');
    const before = await snapshot(cwd);
    expectRefused(await runEmi(cwd, ['generate', '--as-of', AS_OF, ...args]), line);
    await expectUntouched(cwd, before);
    expect((await lstat(join(cwd, 'same'))).isDirectory()).toBe(true);
  });

  it('one data folder holding the output, paid and build folders (EMI_STATE_DIR=data) runs, as it did before', async () => {
    const cwd = await workingFolder();
    const data = join(cwd, 'data');
    const args = [
      '--out',
      `${data}/site`,
      '--paid',
      `${data}/paid`,
      '--dist',
      `${data}/dist`,
      '--base-url',
      BASE_URL,
    ];
    for (const asOf of [AS_OF, new Date(Date.parse(AS_OF) + 3_600_000).toISOString()]) {
      expectOk(await runEmi(cwd, ['generate', '--as-of', asOf, ...args], { EMI_STATE_DIR: data }));
    }
    expect((await readdir(data)).filter((name) => name.includes('legacy'))).toEqual([]);
    expect((await readdir(join(data, 'published'))).filter((name) => name.startsWith('legacy'))).toEqual([]);
    expect((await lstat(join(data, 'arena.sqlite'))).isFile()).toBe(true);
  });

  it('emi build --out naming a state folder given with --state: refused, the store is not moved', async () => {
    const cwd = await workingFolder();
    expectOk(await runEmi(cwd, ['generate', '--state', 'st', '--out', 'o', '--paid', 'p', '--as-of', AS_OF]));
    const run = await runEmi(cwd, ['build', '--base-url', BASE_URL, '--published', 'o', '--out', 'st']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/holds a state folder's .*arena\.sqlite/);
    expect((await lstat(join(cwd, 'st'))).isDirectory()).toBe(true);
    expect((await lstat(join(cwd, 'st', 'arena.sqlite'))).isFile()).toBe(true);
    // Its generation store may have been made before the refusal; nothing was moved into it.
    const store = join(cwd, '.st.generations');
    const kept = existsSync(store) ? await readdir(store) : [];
    expect(kept.filter((name) => name.startsWith('legacy'))).toEqual([]);
  });

  it('EMI_STATE_DIR inside --out is named as the variable', async () => {
    const cwd = await workingFolder();
    const before = await snapshot(cwd);
    const run = await runEmi(cwd, ['generate', '--as-of', AS_OF], { EMI_STATE_DIR: 'site/var' });
    expectRefused(run, /EMI_STATE_DIR site\/var is inside --out site/);
    await expectUntouched(cwd, before);
  });

  it('emi backfill --out ., emi schedule --dist site, emi up --out ., emi generate --record site/x: exit 2, nothing written', async () => {
    const cwd = await workingFolder();
    const before = await snapshot(cwd);
    const runs: Array<[string[], RegExp]> = [
      [['backfill', '--days', '1', '--out', '.'], /--out \. is the working folder/],
      [
        ['schedule', '--base-url', BASE_URL, '--dist', 'site'],
        /--dist site is the same folder as --out site/,
      ],
      [
        ['up', '--port', '20601', '--dev-facilitator-port', '20602', '--backfill-days', '0', '--out', '.'],
        /--out \. is the working folder/,
      ],
      [
        ['generate', '--source', 'live', '--record', 'site/recording'],
        /--record site\/recording is inside --out site/,
      ],
    ];
    for (const [args, line] of runs) {
      // Killed if it started after all (before the fix: a scheduler, a server), so the test ends either way.
      expectRefused(await runEmi(cwd, args, {}, { timeoutMs: 20_000 }), line);
      await expectUntouched(cwd, before);
    }
  }, 90_000);

  it('the defaults still work together: emi generate, then emi build', async () => {
    const cwd = await workingFolder();
    expectOk(await runEmi(cwd, ['generate', '--as-of', AS_OF]));
    expectOk(await runEmi(cwd, ['build', '--base-url', BASE_URL]));
    expect((await lstat(join(cwd, 'dist'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(cwd, 'precious.txt'), 'utf8')).toBe('mine');
  });
});

describe('folderOverlapProblem (the rule)', () => {
  const cwd = '/srv/emi';
  const run = (opts: Record<string, unknown>, command = 'generate', stateFromEnv = false) =>
    folderOverlapProblem(commandFolders(command, opts, stateFromEnv), cwd);
  const RUN_DEFAULTS = { out: 'site', paid: 'paid', state: 'var', dist: 'dist' };

  it('passes the default layout of every command', () => {
    for (const command of ['generate', 'schedule', 'up']) expect(run(RUN_DEFAULTS, command)).toBeNull();
    expect(run({ out: 'site', paid: 'paid', state: 'var' })).toBeNull(); // generate without --dist
    expect(run({ published: 'site', out: 'dist', site: '/srv/emi/site', state: 'var' }, 'build')).toBeNull();
    expect(run({ state: 'var', out: 'site' }, 'backfill')).toBeNull();
    expect(run({ state: 'var', out: false }, 'backfill')).toBeNull(); // --no-out
  });

  it('passes absolute folders elsewhere and names that only share a prefix', () => {
    expect(
      run({ out: '/var/www/site', paid: '/var/lib/emi/paid', state: '/var/lib/emi/var', dist: 'd' }),
    ).toBeNull();
    expect(run({ out: 'site', paid: 'site2', state: 'sitevar' })).toBeNull();
  });

  it('refuses an empty folder, the working folder and its ancestors for a linked folder', () => {
    expect(run({ ...RUN_DEFAULTS, out: '' })).toMatch(/^--out is empty/);
    expect(run({ ...RUN_DEFAULTS, state: ' ' })).toMatch(/^--state is empty/);
    expect(run({ ...RUN_DEFAULTS, dist: '.' })).toMatch(/^--dist \. is the working folder/);
    expect(run({ ...RUN_DEFAULTS, paid: '/srv/emi/' })).toMatch(/^--paid \/srv\/emi\/ is the working folder/);
    expect(run({ ...RUN_DEFAULTS, paid: '/' })).toMatch(/^--paid \/ is an ancestor of the working folder/);
    expect(run({ published: 'site', out: '..' }, 'build')).toMatch(/^--out \.\. is an ancestor/);
  });

  it('refuses two options naming the same folder, or one inside the other, naming both', () => {
    expect(run({ published: 'site', out: 'site' }, 'build')).toMatch(
      /^--out site is the same folder as --published site: .*defaults --published site, --out dist/,
    );
    expect(run({ published: 'site', out: 'site/dist' }, 'build')).toMatch(
      /^--out site\/dist is inside --published site/,
    );
    expect(run({ published: 'dist/site', out: 'dist' }, 'build')).toMatch(
      /^--published dist\/site is inside --out dist/,
    );
    expect(run({ ...RUN_DEFAULTS, paid: 'site/api/paid' })).toMatch(
      /^--paid site\/api\/paid is inside --out site/,
    );
    expect(run({ ...RUN_DEFAULTS, state: 'site/var' })).toMatch(/^--state site\/var is inside --out site/);
    expect(run({ ...RUN_DEFAULTS, dist: '/srv/emi/site' })).toMatch(
      /^--dist \/srv\/emi\/site is the same folder as --out site/,
    );
    expect(run({ state: 'site', out: 'site' }, 'backfill')).toMatch(/the same folder/);
  });

  it('lets the state folder hold the others (one data folder), never be the same as one', () => {
    // It is never linked, moved or published: EMI_STATE_DIR=/data with --out /data/site worked before this rule.
    expect(run({ ...RUN_DEFAULTS, paid: 'var/paid' })).toBeNull();
    expect(
      run({ out: '/data/site', paid: '/data/paid', dist: '/data/dist', state: '/data' }, 'generate', true),
    ).toBeNull();
    expect(run({ ...RUN_DEFAULTS, state: 'paid' })).toMatch(
      /^--state paid is the same folder as --paid paid/,
    );
  });

  it('refuses a recording inside a linked folder or the same as another, and lets the state folder hold it', () => {
    expect(run({ ...RUN_DEFAULTS, record: 'site/recording' })).toBe(
      '--record site/recording is inside --out site: give each its own folder, neither inside the other ' +
        '(default --out site)',
    );
    expect(run({ ...RUN_DEFAULTS, replay: 'paid' })).toMatch(
      /^--replay paid is the same folder as --paid paid/,
    );
    expect(run({ ...RUN_DEFAULTS, replay: 'dist/rec' })).toMatch(/^--replay dist\/rec is inside --dist dist/);
    expect(run({ ...RUN_DEFAULTS, record: 'var/recording' })).toBeNull();
    expect(run({ ...RUN_DEFAULTS, record: 'recording' })).toBeNull();
    expect(run({ ...RUN_DEFAULTS, record: '' })).toBe(
      '--record is empty, which names the working folder: give it a folder of its own',
    );
  });

  it('names a state folder from the environment as EMI_STATE_DIR; ignores emi build --state', () => {
    expect(run({ ...RUN_DEFAULTS, state: 'site' }, 'generate', true)).toMatch(/EMI_STATE_DIR site/);
    expect(run({ published: 'site', out: 'dist', state: 'dist' }, 'build')).toBeNull();
  });

  it('isSameOrInside compares whole names', () => {
    expect(isSameOrInside('/a/b', '/a')).toBe(true);
    expect(isSameOrInside('/a', '/a')).toBe(true);
    expect(isSameOrInside('/ab', '/a')).toBe(false);
    expect(isSameOrInside('/a', '/a/b')).toBe(false);
    expect(isSameOrInside('/a/..b', '/a')).toBe(true);
  });

  it('checkCommandConfiguration says it before the writable checks', async () => {
    const parsed = (args: string[]): Command => {
      const command = createProgram().commands.find((c) => c.name() === args[0])!;
      command.parseOptions(args.slice(1));
      return command;
    };
    await expect(
      checkCommandConfiguration(parsed(['generate', '--out', 'x', '--paid', 'x']), {}),
    ).rejects.toThrow(/^--paid x is the same folder as --out x/);
    await expect(checkCommandConfiguration(parsed(['build', '--out', 'site']), {})).rejects.toThrow(
      /--out site is the same folder as --published site/,
    );
  });
});

describe('moving a real folder aside (generations.ts) refuses the working folder, the store and the state', () => {
  /**
   * Real file operations, except that nothing outside `jail` may be renamed, removed or made: were the guard
   * missing, the test fails on this instead of moving the working folder.
   */
  function jailed(jail: string): PublishFs & { refused: string[] } {
    const refused: string[] = [];
    const guard =
      <A extends unknown[], R>(op: (path: string, ...rest: A) => Promise<R>) =>
      (path: string, ...rest: A): Promise<R> => {
        if (!isSameOrInside(resolve(String(path)), jail)) {
          refused.push(String(path));
          return Promise.reject(new Error(`test: ${String(path)} is outside the test folder`));
        }
        return op(path, ...rest);
      };
    return {
      ...realFs,
      rename: guard(realFs.rename as (p: string, to: string) => Promise<void>),
      rm: guard(realFs.rm as (p: string, o?: object) => Promise<void>),
      refused,
    } as PublishFs & { refused: string[] };
  }

  const fill = async (generation: { write(file: string, data: string): Promise<void> }) =>
    generation.write('index.html', 'new');

  it('the working folder, or one holding it', async () => {
    const dir = await tempDir('emi-overlap-guard-');
    for (const folder of [process.cwd(), dirname(process.cwd())]) {
      const fs = jailed(dir);
      await expect(
        publishGeneration(join(dir, 'store'), [{ path: folder, entry: '' }], fill, fs),
      ).rejects.toThrow(/is a real folder where a link belongs, but it is or holds the working folder/);
      expect(fs.refused).toEqual([]);
    }
    expect(existsSync(join(process.cwd(), 'package.json'))).toBe(true);
  });

  it('a folder holding the generations, or the state folder (EMI_STATE_DIR)', async () => {
    const dir = await tempDir('emi-overlap-guard-');
    const holder = join(dir, 'holder');
    await mkdir(join(holder, 'var'), { recursive: true });
    await writeFile(join(holder, 'var/arena.sqlite'), 'store');
    await expect(
      publishGeneration(join(holder, 'var/published'), [{ path: holder, entry: '' }], fill, jailed(dir)),
    ).rejects.toThrow(/holds the generations/);
    expect(await readFile(join(holder, 'var/arena.sqlite'), 'utf8')).toBe('store');

    vi.stubEnv('EMI_STATE_DIR', join(holder, 'var'));
    try {
      await expect(
        publishGeneration(join(dir, 'elsewhere'), [{ path: holder, entry: '' }], fill, jailed(dir)),
      ).rejects.toThrow(/holds the state folder/);
    } finally {
      vi.unstubAllEnvs();
    }
    expect((await lstat(holder)).isDirectory()).toBe(true);
    expect(await readFile(join(holder, 'var/arena.sqlite'), 'utf8')).toBe('store');
  });

  it('an ordinary real folder is still kept as a legacy generation', async () => {
    const dir = await tempDir('emi-overlap-guard-');
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist/own.html'), 'own');
    await publishGeneration(join(dir, '.dist.generations'), [{ path: join(dir, 'dist'), entry: '' }], fill);
    expect((await lstat(join(dir, 'dist'))).isSymbolicLink()).toBe(true);
    const legacy = (await readdir(join(dir, '.dist.generations'))).filter((n) => n.startsWith('legacy-'));
    expect(await readFile(join(dir, '.dist.generations', legacy[0]!, 'own.html'), 'utf8')).toBe('own');
  });
});
