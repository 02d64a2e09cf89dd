// The suite's two projects (vitest.config.ts): a file that changes its process must never share a worker with the
// files after it. Checked against what the files really do, so a config that stopped finding them fails here.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.ts';

const projects = (config.test?.projects ?? []) as Array<{
  test: { name: string; include?: string[]; exclude?: string[]; isolate: boolean };
}>;
const project = (name: string) => projects.find((p) => p.test.name === name)?.test;
// Every folder under test/, as the config reads it.
const testFiles = readdirSync('test', { recursive: true, encoding: 'utf8' }).filter((name) =>
  name.endsWith('.test.ts'),
);
const filesThatCall = (call: string) =>
  testFiles
    .filter((name) => readFileSync(`test/${name}`, 'utf8').includes(call))
    .map((name) => `test/${name}`);

/** Calls that change a process, spelled in parts so that this file does not make them. */
const PROCESS_CHANGING_CALLS = [
  ['vi', 'stubEnv'],
  ['vi', 'stubGlobal'],
  ['vi', 'useFakeTimers'],
].map((parts) => `${parts.join('.')}(`);

describe('the test projects', () => {
  it('runs each file that stubs the environment, globals or clocks in a fresh process, and only those', () => {
    const own = project('own-process');
    const shared = project('shared');
    expect(own?.isolate).toBe(true);
    expect(shared?.isolate).toBe(false);
    for (const call of PROCESS_CHANGING_CALLS) {
      const files = filesThatCall(call);
      expect(files.length, call).toBeGreaterThan(0);
      for (const file of files) {
        expect(own?.include, `${file} (${call})`).toContain(file);
        expect(shared?.exclude, `${file} (${call})`).toContain(file);
      }
    }
    // Most files share: the split is not "everything in its own process", and this file is among them.
    expect(own?.include?.length).toBeLessThan(testFiles.length / 4);
    expect(own?.include).not.toContain('test/vitest-projects.test.ts');
  });
});
