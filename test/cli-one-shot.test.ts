// `emi generate` and `emi build` run once and end, so they check with zod's parsers uncompiled (generator/one-shot.ts).
// zod reads that setting when a schema is made: set after the configuration's schemas were made (as it once was),
// it left 28 object parsers generated in every `emi generate`. Counted in whole processes by a preload.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp-dir.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const EMI = join(ROOT, 'bin', 'emi.js');
const COUNTER = join(import.meta.dirname, 'helpers', 'count-object-jit.mjs');

/** Runs `node ...args` in the project folder under the counter; returns how many object parsers zod generated. */
async function objectParsersGenerated(args: string[]): Promise<number> {
  const file = join(await tempDir('emi-object-jit-'), 'count.txt');
  await run(process.execPath, ['--import', COUNTER, ...args], {
    cwd: ROOT,
    env: { ...process.env, EMI_TEST_OBJECT_JIT_FILE: file },
  });
  return Number(await readFile(file, 'utf8'));
}

describe('one-off commands check with zod parsers uncompiled', () => {
  it('the counter sees the parsers zod generates by default (the installed zod still works so)', async () => {
    const script = "import * as z from 'zod'; z.object({ a: z.string() }).parse({ a: 'x' });";
    expect(await objectParsersGenerated(['--input-type=module', '-e', script])).toBe(1);
  });

  it('emi generate, then emi build, generate none', async () => {
    const dir = await tempDir('emi-one-shot-');
    const folders = ['--out', join(dir, 'site'), '--paid', join(dir, 'paid'), '--state', join(dir, 'var')];
    expect(await objectParsersGenerated([EMI, 'generate', ...folders])).toBe(0);
    const build = ['build', '--published', join(dir, 'site'), '--out', join(dir, 'dist')];
    expect(await objectParsersGenerated([EMI, ...build, '--base-url', 'https://emi.example'])).toBe(0);
  }, 60_000);

  it("the benchmark's generate process sets it as emi generate does", async () => {
    expect(await objectParsersGenerated([join(ROOT, 'build', 'bench-generate-once.js'), '7'])).toBe(0);
  }, 60_000);
});
