// Bad configuration is an error: one clear line on stderr, exit code 2, and nothing written.
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEmi } from './ops-cli.ts';
import { publisherEntry } from './publishers-harness.ts';
import { tempDir } from './helpers/temp-dir.ts';

/**
 * `emi paywall` on this suite's ports (20320-20339): a check that let it start would leave it listening, so every
 * case is killed after a while (its exit code is then null, not 2).
 */
const PAYWALL = ['paywall', '--port', '20320', '--dev-facilitator-port', '20321'];

const CASES: Array<{
  name: string;
  files?: Record<string, string>;
  env?: Record<string, string>;
  args: string[];
  line: RegExp;
}> = [
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
    name: 'emi paywall: an unknown key in EMI_CONFIG (a misspelt `publishers` sold nothing at /p/)',
    files: { 'emi.json': '{"publisher": []}' },
    env: { EMI_CONFIG: 'emi.json' },
    args: PAYWALL,
    line: /^emi: configuration file emi\.json: unknown key "publisher" \(known: sources, publishers\)$/,
  },
  {
    name: 'emi paywall: an EMI_CONFIG file that is not JSON',
    files: { 'emi.json': '{bad' },
    env: { EMI_CONFIG: 'emi.json' },
    args: PAYWALL,
    line: /^emi: configuration file emi\.json is not valid JSON: /,
  },
  {
    name: 'emi paywall: a bad publisher entry in EMI_CONFIG',
    files: { 'emi.json': JSON.stringify({ publishers: [publisherEntry('acme', 'NOT-AN-ADDRESS')] }) },
    env: { EMI_CONFIG: 'emi.json' },
    args: PAYWALL,
    line: /^emi: publisher "acme": payTo: must be a valid Algorand address$/,
  },
  {
    name: 'emi paywall --config: an unknown key',
    files: { 'emi.json': '{"nope": 1}' },
    args: [...PAYWALL, '--config', 'emi.json'],
    line: /^emi: configuration file emi\.json: unknown key "nope" \(known: sources, publishers\)$/,
  },
  {
    name: 'emi serve: an unknown key in EMI_CONFIG, as emi paywall says it',
    files: { 'emi.json': '{"nope": 1}' },
    env: { EMI_CONFIG: 'emi.json' },
    args: ['serve', '--port', '20322', '--dev-facilitator-port', '20323'],
    line: /^emi: configuration file emi\.json: unknown key "nope" \(known: sources, publishers\)$/,
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
    async ({ files = {}, env = {}, args, line }) => {
      const dir = await tempDir('emi-config-');
      for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
      // `emi serve` has no --state (it writes nothing of its own there).
      const state = args[0] === 'serve' ? [] : ['--state', 'var'];
      const result = await runEmi(dir, [...args, ...state], env, { timeoutMs: 60_000 });
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr.split('\n').filter((l) => l && !l.startsWith('(run with --help'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      expect((await readdir(dir)).sort()).toEqual(Object.keys(files).sort());
    },
    120_000,
  );
});
