import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dir.ts';

const run = promisify(execFile);
const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');

async function emi(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [EMI, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function expectOneLineError(result: { code: number; stderr: string }, pattern: RegExp) {
  expect(result.code).not.toBe(0);
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('(run with --help'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe('emi command line', () => {
  it('prints help for every command', async () => {
    for (const command of ['generate', 'build', 'serve', 'schedule', 'validate', 'up']) {
      const result = await emi([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toMatch(new RegExp(`Usage: emi ${command}`));
    }
  });

  it('rejects an unparsable --as-of with one line, a non-zero exit and nothing written', async () => {
    const dir = await tempDir('emi-cli-');
    const result = await emi([
      'generate',
      '--as-of',
      'yesterday',
      '--out',
      join(dir, 'site'),
      '--state',
      join(dir, 'var'),
    ]);
    expectOneLineError(result, /as-of.*ISO 8601/i);
    expect(existsSync(join(dir, 'site'))).toBe(false);
  });

  it('rejects an unknown --source', async () => {
    const dir = await tempDir('emi-cli-');
    const result = await emi([
      'generate',
      '--source',
      'moon',
      '--out',
      join(dir, 'site'),
      '--state',
      join(dir, 'var'),
    ]);
    expectOneLineError(result, /source.*moon|moon.*source/i);
    expect(existsSync(join(dir, 'site'))).toBe(false);
  });

  it('reports an unwritable output folder in one line and writes nothing there', async () => {
    const dir = await tempDir('emi-cli-');
    await writeFile(join(dir, 'blocker'), 'a file, not a folder');
    const result = await emi([
      'generate',
      '--as-of',
      '2026-11-21T12:00:00Z',
      '--out',
      join(dir, 'blocker', 'site'),
      '--paid',
      join(dir, 'paid'),
      '--state',
      join(dir, 'var'),
    ]);
    expectOneLineError(result, /generate failed|not writable|ENOTDIR|not a directory/i);
    expect(existsSync(join(dir, 'paid'))).toBe(false);
  });

  it('refuses to build a site from a folder without valid published files, and writes no output', async () => {
    const dir = await tempDir('emi-cli-');
    // A folder that exists (one that does not is a bad --published value, exit 2: cli-config-checks.test.ts).
    await mkdir(join(dir, 'empty'));
    const result = await emi([
      'build',
      '--published',
      join(dir, 'empty'),
      '--out',
      join(dir, 'dist'),
      '--base-url',
      'https://emi.test',
    ]);
    expectOneLineError(result, /refusing to build: 16 published file\(s\) missing or invalid/);
    expect(existsSync(join(dir, 'dist'))).toBe(false);
  });

  it('validate exits non-zero on a folder without output', async () => {
    const dir = await tempDir('emi-cli-');
    const result = await emi(['validate', dir]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toMatch(/0 passed, 16 failed/);
  });
});
