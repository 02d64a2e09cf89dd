import { execFile } from 'node:child_process';
import module from 'node:module';
import { copyFile, mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../generator/cli.ts';
import { COMMAND_GROUPS, commandGroupFor } from '../generator/cli-groups.ts';
import { chunksOf } from './helpers/bundled-chunks.ts';
import { tempDir } from './helpers/temp-dir.ts';

const run = promisify(execFile);
const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');
const RECORDER = join(import.meta.dirname, 'helpers', 'record-imports.mjs');

/** Runs `emi args` as a whole process and returns its output and every module URL it loaded. */
async function emiLoading(args: string[]): Promise<{ stdout: string; modules: string[] }> {
  const record = join(await tempDir('emi-imports-'), 'imports.txt');
  const { stdout } = await run(process.execPath, ['--import', RECORDER, EMI, ...args], {
    env: { ...process.env, EMI_RECORD_IMPORTS: record },
  });
  return { stdout, modules: (await readFile(record, 'utf8')).trim().split('\n') };
}

/** Packages only some commands need; bin/build.js bundles them, so a command that loads one loads its chunks. */
const HEAVY = ['@11ty/eleventy', '@x402/core', 'algosdk', 'hono', 'zod', 'node-cron'];

/** Packages bin/build.js leaves in node_modules that a command may load (the rest comes from build/). */
const LEFT_IN_NODE_MODULES = /\/node_modules\/better-sqlite3\//;

describe('emi loads only what a command needs', () => {
  for (const args of [['--help'], ['--version'], ['generate', '--help'], ['help', 'schedule']]) {
    it(`emi ${args.join(' ')} loads no engine, Eleventy, zod, SQLite, x402 or TypeScript`, async () => {
      const { stdout, modules } = await emiLoading(args);
      const heavy = await chunksOf(...HEAVY);
      expect(stdout).not.toBe('');
      expect(modules.some((url) => url.endsWith('/build/cli.js'))).toBe(true);
      expect(
        modules.filter((url) => heavy.has(url) || url.includes('/node_modules/') || url.endsWith('.ts')),
      ).toEqual([]);
    });
  }

  it('emi --version prints the version in package.json', async () => {
    const manifest = JSON.parse(await readFile(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    const { stdout } = await emiLoading(['--version']);
    expect(stdout.trim()).toBe(manifest.version);
  });

  it('emi paywall --help loads the paywall module, its packages from build/ (the recorder sees what a command pulls in)', async () => {
    const { stdout, modules } = await emiLoading(['paywall', '--help']);
    expect(stdout).toMatch(/Usage: emi paywall/);
    for (const name of ['@x402/core', 'algosdk', 'hono', 'zod']) {
      const chunks = await chunksOf(name);
      expect(
        modules.some((url) => chunks.has(url)),
        name,
      ).toBe(true);
    }
    const fromNodeModules = modules.filter((url) => url.includes('/node_modules/'));
    expect(fromNodeModules.filter((url) => !LEFT_IN_NODE_MODULES.test(url))).toEqual([]);
  });
});

describe('commands defined in other modules', () => {
  it('are described in --help by the same summary their module registers', async () => {
    const loaded = new Map(await Promise.all(COMMAND_GROUPS.map(async (g) => [g, await g.load()] as const)));
    const real = createProgram(loaded);
    for (const group of COMMAND_GROUPS) {
      for (const [name, summary] of Object.entries(group.summaries)) {
        expect(real.commands.find((c) => c.name() === name)?.description(), name).toBe(summary);
      }
    }
  });

  it('are found from the command line, after options and behind help', () => {
    expect(commandGroupFor(['arena', 'status'])?.summaries).toHaveProperty('arena');
    expect(commandGroupFor(['help', 'buy'])?.summaries).toHaveProperty('buy');
    expect(commandGroupFor(['generate', '--seed', '1'])).toBeUndefined();
    expect(commandGroupFor(['--help'])).toBeUndefined();
  });
});

describe('bin/emi.js without a build', () => {
  it('stops with one line saying how to build', async () => {
    const root = await tempDir('emi-unbuilt-');
    await mkdir(join(root, 'bin'));
    await copyFile(EMI, join(root, 'bin', 'emi.js'));
    await copyFile(join(EMI, '..', 'node-version.js'), join(root, 'bin', 'node-version.js'));
    const failure = await run(process.execPath, [join(root, 'bin', 'emi.js'), '--help']).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim().split('\n')).toEqual([
      'emi: the compiled CLI (build/cli.js) is missing: run `npm run build` (or `npm ci`) first',
    ]);
  });
});

describe("bin/emi.js and V8's compile cache", () => {
  // Node 22.1+ keeps compiled code (module.enableCompileCache); Node 20 has no such API and must run as before.
  const hasCompileCache = 'enableCompileCache' in module;
  it(`${hasCompileCache ? 'keeps the compiled code of a run in' : 'runs without'} the compile cache folder`, async () => {
    const cache = await tempDir('emi-compile-cache-');
    const { stdout } = await run(process.execPath, [EMI, '--version'], {
      env: { ...process.env, NODE_COMPILE_CACHE: cache },
    });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const kept = await readdir(cache, { recursive: true });
    if (hasCompileCache) expect(kept).not.toEqual([]);
    else expect(kept).toEqual([]);
  });
});
