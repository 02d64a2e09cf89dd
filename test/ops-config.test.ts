// Bad configuration is an error: one clear line on stderr, exit code 2, and nothing written.
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const CASES: Array<{ name: string; files?: Record<string, string>; args: string[]; line: RegExp }> = [
  {
    name: 'a missing --config file',
    args: ['generate', '--config', 'missing.json'],
    line: /^emi: configuration file missing\.json does not exist$/,
  },
  {
    name: 'a --config file that is not JSON',
    files: { 'emi.json': '{"sources": {' },
    args: ['generate', '--config', 'emi.json'],
    line: /^emi: configuration file emi\.json is not valid JSON: /,
  },
  {
    name: 'a --config file that is not JSON, where the quoted text around the fault spans lines',
    files: { 'emi.json': '{\n"sources": {\n"candles": x\n}}' },
    args: ['generate', '--config', 'emi.json'],
    line: /^emi: configuration file emi\.json is not valid JSON: Unexpected token 'x', .*"candles": x }}" is not valid JSON$/,
  },
  {
    name: 'an unknown key',
    files: { 'emi.json': '{"sources": {}, "soruces": {}}' },
    args: ['generate', '--config', 'emi.json'],
    line: /^emi: configuration file emi\.json: unknown key "soruces" \(known: sources, publishers\)$/,
  },
  {
    name: 'an invalid source setting (with the simulated source, which does not use it)',
    files: { 'emi.json': '{"sources": {"http": {"timeoutMs": -1}}}' },
    args: ['generate', '--source', 'sim', '--config', 'emi.json'],
    line: /^emi: invalid source configuration in emi\.json \(sources\): .*expected number to be >0/,
  },
  {
    name: 'a bad cron expression',
    args: ['schedule', '--cron', '61 * * * *'],
    line: /^emi: "61 \* \* \* \*" is not a valid cron expression\.$/,
  },
  {
    name: 'an unwritable output folder',
    files: { blocker: 'a file where a folder is needed' },
    args: ['generate', '--out', 'blocker/site'],
    line: /^emi: output folder blocker\/site is not writable: .*blocker is not a folder$/,
  },
];

describe('bad configuration', () => {
  it.each(CASES)(
    '$name: one line, exit 2, nothing written',
    async ({ files = {}, args, line }) => {
      const dir = await tempDir('emi-config-');
      for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
      const result = await runEmi(dir, [...args, '--state', 'var']);
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr.split('\n').filter((l) => l && !l.startsWith('(run with --help'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      expect((await readdir(dir)).sort()).toEqual(Object.keys(files).sort());
    },
    120_000,
  );
});
