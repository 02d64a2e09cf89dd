// The exit codes the README promises for bad input: a bad option value, a bad setting in the environment, options
// that do not go together and a file where a folder belongs are usage mistakes, one line on stderr and exit code 2,
// before anything is written or started. A payee that cannot receive USDC stays exit 1 (the chain's state, see
// paywall-payee-optin.test.ts); `emi buy` keeps its own codes, 2 being a path or URL it cannot use.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { STAMP_FILE, stampSources } from '../bin/build-stamp.js';
import { errorLines, expectUsageMistake, runEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';

const ROOT = join(import.meta.dirname, '..');

const roots: string[] = [];
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-exit-codes-'));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The real `emi` in `cwd`, without the EMI_* variables of this machine, with `env`. */
const emi = (cwd: string, args: string[], env: Record<string, string> = {}): Promise<Finished> =>
  runEmi(cwd, args, env, { timeoutMs: 60_000 });

// Ports of the paywall cases: with the checks, nothing listens; without them, a start could.
const PAYWALL_PORTS = ['--port', '18420', '--dev-facilitator-port', '18421'];
/** A port nothing listens on (in the range these tests may use): `emi buy` would find the site unreachable. */
const CLOSED_SITE = 'http://127.0.0.1:18422';

describe('a bad option value or setting is exit 2, before anything is written or started', () => {
  it.each<[string, string[], Record<string, string>, RegExp]>([
    [
      'emi build --base-url ftp://x',
      ['build', '--base-url', 'ftp://x'],
      {},
      /^emi: base URL "ftp:\/\/x" is not/,
    ],
    ['emi build without a base URL', ['build'], {}, /^emi: refusing to build without a base URL/],
    [
      'emi up --backfill-days 91',
      ['up', ...PAYWALL_PORTS, '--backfill-days', '91'],
      {},
      /argument '91' is invalid. at most 90 days can be replayed: 91$/,
    ],
    [
      'emi schedule --cadence 8',
      ['schedule', '--base-url', 'https://x.example', '--cadence', '8'],
      {},
      /^emi: --cadence 8: scheduled runs describe a whole minute/,
    ],
    // A build writes the buyer page's config.json from EMI_PAYTO and EMI_NETWORK: refused before anything runs.
    [
      'emi build with EMI_PAYTO=BAD',
      ['build', '--base-url', 'https://x.example'],
      { EMI_PAYTO: 'BAD' },
      /^emi: EMI_PAYTO is not a valid Algorand address: "BAD"$/,
    ],
    [
      'emi schedule with EMI_NETWORK=foo',
      ['schedule', '--base-url', 'https://x.example'],
      { EMI_NETWORK: 'foo' },
      /^emi: EMI_NETWORK is not a supported network: "foo"$/,
    ],
    [
      'emi generate --dist with EMI_PAYTO=BAD',
      ['generate', '--dist', 'dist', '--base-url', 'https://x.example'],
      { EMI_PAYTO: 'BAD' },
      /^emi: EMI_PAYTO is not a valid Algorand address: "BAD"$/,
    ],
    [
      'emi schedule --base-url ftp://x',
      ['schedule', '--base-url', 'ftp://x'],
      {},
      /^emi: base URL "ftp:\/\/x" is not/,
    ],
    [
      'emi generate --dist without a base URL',
      ['generate', '--dist', 'dist'],
      {},
      /^emi: refusing to build without a base URL/,
    ],
    [
      'emi up with EMI_BASE_URL=ftp://x',
      ['up', ...PAYWALL_PORTS],
      { EMI_BASE_URL: 'ftp://x' },
      /^emi: EMI_BASE_URL must be http\(s\): ftp:\/\/x$/,
    ],
    ['emi paywall --port abc', ['paywall', '--port', 'abc'], {}, /"abc" is not a port/],
    [
      'emi paywall --pay-to BAD',
      ['paywall', ...PAYWALL_PORTS, '--pay-to', 'BAD'],
      {},
      /^emi: --pay-to is not a valid Algorand address: "BAD"$/,
    ],
    [
      'emi paywall --facilitator-url notaurl',
      ['paywall', ...PAYWALL_PORTS, '--facilitator-url', 'notaurl'],
      {},
      /^emi: --facilitator-url is not a URL: "notaurl"$/,
    ],
    [
      'emi paywall --facilitator-url without a payee',
      ['paywall', ...PAYWALL_PORTS, '--facilitator-url', CLOSED_SITE],
      {},
      /^emi: a payee address \(--pay-to or EMI_PAYTO\) is required when a facilitator URL is configured$/,
    ],
    [
      'emi paywall with EMI_NETWORK=bogus:net',
      ['paywall', ...PAYWALL_PORTS],
      { EMI_NETWORK: 'bogus:net' },
      /^emi: EMI_NETWORK is not a supported network: "bogus:net"$/,
    ],
    [
      'emi paywall with EMI_MAX_DATA_AGE_SECONDS=abc',
      ['paywall', ...PAYWALL_PORTS],
      { EMI_MAX_DATA_AGE_SECONDS: 'abc' },
      /^emi: EMI_MAX_DATA_AGE_SECONDS must be a positive integer: "abc"$/,
    ],
    [
      'emi serve with EMI_NETWORK=bogus:net',
      ['serve', ...PAYWALL_PORTS],
      { EMI_NETWORK: 'bogus:net' },
      /^emi: EMI_NETWORK is not a supported network/,
    ],
  ])('%s', async (_name, args, env, line) => {
    const dir = await scratch();
    expectUsageMistake(await emi(dir, args, env), line);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('a file where a folder belongs is exit 2, before anything is written', () => {
  it.each<[string, string[], Record<string, string>, RegExp]>([
    [
      'emi backfill --state FILE',
      ['backfill', '--days', '1', '--state', 'FILE'],
      {},
      /^emi: state folder FILE is not writable: .*FILE is not a folder$/,
    ],
    [
      'emi backfill --out FILE (the arena store is not filled first)',
      ['backfill', '--days', '1', '--state', 'var', '--out', 'FILE'],
      {},
      /^emi: output folder FILE is not writable: .*FILE is not a folder$/,
    ],
    ['emi arena status', ['arena', 'status'], { EMI_STATE_DIR: 'FILE' }, /^emi: state folder FILE is not/],
    [
      'emi arena vote',
      ['arena', 'vote', '--asset', 'BTC', '--prediction', 'BULLISH', '--voter', 'alice'],
      { EMI_STATE_DIR: 'FILE' },
      /^emi: state folder FILE is not/,
    ],
    ['emi arena repair', ['arena', 'repair'], { EMI_STATE_DIR: 'FILE' }, /^emi: state folder FILE is not/],
    [
      'emi arena status (below the file)',
      ['arena', 'status'],
      { EMI_STATE_DIR: 'FILE/var' },
      /^emi: state folder FILE\/var is not writable: .*FILE is not a folder$/,
    ],
    [
      'emi publisher list --state FILE',
      ['publisher', 'list', '--state', 'FILE'],
      {},
      /^emi: state folder FILE is not/,
    ],
  ])('%s', async (_name, args, env, line) => {
    const dir = await scratch();
    await writeFile(join(dir, 'FILE'), 'not a folder');
    expectUsageMistake(await emi(dir, args, env), line);
    expect(await readdir(dir)).toEqual(['FILE']);
  });

  it('emi publisher credit --worker does not need the local state folder', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'FILE'), 'not a folder');
    const run = await emi(
      dir,
      ['publisher', 'credit', 'acme', '5', '--worker', CLOSED_SITE, '--state', 'FILE'],
      { EMI_ADMIN_TOKEN: 't'.repeat(32) },
    );
    expect(run.stderr).not.toMatch(/state folder/);
  });
});

describe('emi buy: a path or URL it cannot use is exit 2, naming it', () => {
  it.each<[string, string[], RegExp]>([
    [
      'a path that is neither a path nor a URL',
      ['buy', 'not a path', '--base-url', CLOSED_SITE],
      /^emi buy: "not a path" is not a path \(\/api\/x402-atlas\.php\) or an http\(s\) URL/,
    ],
    [
      'a URL that is not http(s)',
      ['buy', 'ftp://x/y', '--base-url', CLOSED_SITE],
      /^emi buy: "ftp:\/\/x\/y" is not a path/,
    ],
    [
      'a bad --base-url (not blamed on the path)',
      ['buy', '/api/x402-atlas.php', '--base-url', 'notaurl'],
      /^emi buy: base URL "notaurl" is not an http\(s\) URL/,
    ],
    [
      'a bad --facilitator-url (nothing asked, funded or paid)',
      ['buy', '/api/x402-atlas.php', '--base-url', CLOSED_SITE, '--facilitator-url', 'bad'],
      /^emi buy: facilitator URL "bad" is not an http\(s\) URL/,
    ],
  ])('%s', async (_name, args, line) => {
    const dir = await scratch();
    const run = await emi(dir, args);
    expect(run.code, run.stderr).toBe(2);
    expect(errorLines(run)).toEqual([expect.stringMatching(line)]);
    expect(run.stdout).toBe('');
  });
});

describe('the source settings of the environment are checked without a configuration file too', () => {
  const run = ['generate', '--out', 'site', '--paid', 'paid', '--state', 'var'];
  it.each<[string, string[], Record<string, string>, RegExp]>([
    [
      'EMI_HTTP_RETRIES=abc emi generate',
      run,
      { EMI_HTTP_RETRIES: 'abc' },
      /^emi: invalid source configuration in environment: EMI_HTTP_RETRIES: not a number: "abc"$/,
    ],
    [
      'EMI_HTTP_RETRIES=1.5 emi generate',
      run,
      { EMI_HTTP_RETRIES: '1.5' },
      /^emi: invalid source configuration in environment: EMI_HTTP_RETRIES: not a whole number: "1\.5"$/,
    ],
    [
      'EMI_HTTP_CONCURRENCY=-1 emi generate',
      run,
      { EMI_HTTP_CONCURRENCY: '-1' },
      /^emi: invalid source configuration in environment: EMI_HTTP_CONCURRENCY: Too small: .*: "-1"$/,
    ],
    [
      'EMI_SOURCE_ORDER_TICKER=nosuch emi generate',
      run,
      { EMI_SOURCE_ORDER_TICKER: 'nosuch' },
      /^emi: invalid source configuration in environment: EMI_SOURCE_ORDER_TICKER: Invalid option/,
    ],
    [
      'EMI_HTTP_RETRIES=abc emi schedule',
      ['schedule', '--base-url', 'https://emi.test', '--out', 'site', '--dist', 'dist'],
      { EMI_HTTP_RETRIES: 'abc' },
      /^emi: invalid source configuration in environment/,
    ],
    [
      'EMI_HTTP_RETRIES=abc emi sources check',
      ['sources', 'check', '--source', 'sim'],
      { EMI_HTTP_RETRIES: 'abc' },
      /^emi: invalid source configuration in environment/,
    ],
  ])(
    '%s',
    async (_name, args, env, line) => {
      const dir = await scratch();
      expectUsageMistake(await emi(dir, args, env), line);
      expect(await readdir(dir)).toEqual([]);
    },
    60_000,
  );
});

describe('emi -v', () => {
  it('prints the version without the "build/ is out of date" notice, as --version does', async () => {
    // bin/ as shipped, beside a stand-in build/cli.js, compiled from a source that has changed since.
    const root = await scratch();
    await mkdir(join(root, 'bin'));
    await mkdir(join(root, 'build'));
    await mkdir(join(root, 'generator'));
    for (const file of ['emi.js', 'build-stamp.js', 'node-version.js'])
      await copyFile(join(ROOT, 'bin', file), join(root, 'bin', file));
    await writeFile(join(root, 'build/cli.js'), "export async function main() { console.log('1.0.0'); }\n");
    const source = join(root, 'generator/a.ts');
    await writeFile(source, 'export const a = 1;\n');
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(source, minuteAgo, minuteAgo);
    const stamp = stampSources(`${root}/`, ['generator/a.ts']);
    await writeFile(join(root, 'build', STAMP_FILE), JSON.stringify(stamp));
    await writeFile(source, 'export const a = 2;\n');

    const run = (arg: string) => promisify(execFile)(process.execPath, [join(root, 'bin/emi.js'), arg]);
    // Three independent runs of the stand-in, side by side.
    const [generate, version, v] = await Promise.all([run('generate'), run('--version'), run('-v')]);
    expect(generate.stderr).toContain('build/ is out of date');
    expect(version).toEqual({ stdout: '1.0.0\n', stderr: '' });
    expect(v).toEqual({ stdout: '1.0.0\n', stderr: '' });
  });
});

describe('help marks the options that must be given', () => {
  it.each<[string, string[], string[]]>([
    [
      'emi publisher add',
      ['publisher', 'add', '--help'],
      ['--id', '--name', '--pay-to', '--contact', '--terms'],
    ],
    ['emi arena vote', ['arena', 'vote', '--help'], ['--asset', '--prediction', '--voter']],
  ])('%s --help', async (_name, args, required) => {
    const dir = await scratch();
    const help = (await emi(dir, args)).stdout;
    // An option's entry runs from its line to the next option's (a long description wraps).
    const entries = help.split(/\n(?=\s+-)/);
    for (const option of required) {
      expect(entries.find((entry) => entry.trimStart().startsWith(option))).toMatch(/\(required\)/);
    }
    expect(help.match(/\(required\)/g)).toHaveLength(required.length);
  });
});
