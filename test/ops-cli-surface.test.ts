// The command line's surface as an operator meets it (bin/emi.js, the compiled CLI): `--port 0` publishes the port
// it listens on, a typo gets commander's "Did you mean", a missing or unknown command exits 2, a file where a folder
// belongs is one line and exit 2, a blank EMI_STATE_DIR is unset, and --paywall-timeout has a ceiling.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  UP_ON_FREE_PORTS,
  errorLines,
  expectOk,
  expectUsageMistake,
  runEmi,
  startEmi,
  startPaywallCli,
} from './ops-cli.ts';
import type { Running } from './ops-cli.ts';
import { account } from './publishers-harness.ts';
import { tempDir } from './helpers/temp-dir.ts';

/** Ports of this file's own (the paywall's --paywall-url is never reached: it is refused first). */
const PORTS = { serve: 20640, paywall: 20641, unreached: 20642 };

/** Starts `emi ...args` and resolves with the base URL of its "site: http://..." line. */
async function siteOf(running: Running): Promise<string> {
  await running.waitFor(/site: http:\/\/127\.0\.0\.1:\d+\//);
  return /site: (http:\/\/127\.0\.0\.1:\d+)\//.exec(running.output())?.[1] ?? '';
}

async function stopped(running: Running): Promise<void> {
  running.stop();
  await running.done;
}

/** The resource a 402 answer names, for the paid atlas. */
async function paidResourceUrl(base: string): Promise<string> {
  const response = await fetch(`${base}/api/x402-atlas.php`);
  expect(response.status).toBe(402);
  const body = (await response.json()) as { resource?: { url?: string } };
  return body.resource?.url ?? '';
}

/** A URL naming port 0 of the loopback address (never a real one). */
const PORT_ZERO = /127\.0\.0\.1:0(?!\d)/;

describe('--port 0 (any free port)', () => {
  it('emi up, emi serve and emi paywall publish the port they listen on, never :0', async () => {
    const dir = await tempDir('emi-port0-');
    const up = startEmi(dir, [...UP_ON_FREE_PORTS]);
    try {
      const site = await siteOf(up);
      expect(site).not.toMatch(PORT_ZERO);
      const llms = await readFile(join(dir, 'dist', 'llms.txt'), 'utf8');
      expect(llms).not.toMatch(PORT_ZERO);
      expect(llms).toContain(`${site}/`);
      const openapi = JSON.parse(await readFile(join(dir, 'dist', 'openapi.json'), 'utf8')) as {
        servers: Array<{ url: string }>;
      };
      expect(openapi.servers.map((s) => s.url)).toEqual([site]);
      expect(await paidResourceUrl(site)).toBe(`${site}/api/x402-atlas.php`);
    } finally {
      await stopped(up);
    }
    const serve = startEmi(dir, ['serve', '--port', '0', '--dev-facilitator-port', '0']);
    try {
      const site = await siteOf(serve);
      expect(site).not.toMatch(PORT_ZERO);
      expect(await paidResourceUrl(site)).toBe(`${site}/api/x402-atlas.php`);
    } finally {
      await stopped(serve);
    }
    const paywall = await startPaywallCli(dir, []);
    try {
      expect(paywall.base).not.toMatch(PORT_ZERO);
      expect(await paidResourceUrl(paywall.base)).toBe(`${paywall.base}/api/x402-atlas.php`);
    } finally {
      await paywall.close();
    }
  }, 240_000);
});

describe('a typo', () => {
  it('keeps commander\'s "Did you mean" on its one line, for a command and an option', async () => {
    const dir = await tempDir('emi-typo-');
    expectUsageMistake(
      await runEmi(dir, ['gnerate']),
      /^error: unknown command 'gnerate' \(Did you mean generate\?\)$/,
    );
    expectUsageMistake(
      await runEmi(dir, ['generate', '--sed', '1']),
      /^error: unknown option '--sed' \(Did you mean --seed\?\)$/,
    );
  }, 60_000);
});

describe('a missing or unknown command', () => {
  it('exits 2: the help of a group on stderr, an unknown name as emi nosuch says it', async () => {
    const dir = await tempDir('emi-missing-command-');
    for (const args of [[], ['arena'], ['sources'], ['publisher']]) {
      const run = await runEmi(dir, args);
      expect(run.code, `emi ${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`Usage: ${['emi', ...args].join(' ')} [options] [command]`);
    }
    for (const args of [
      ['help', 'nosuch'],
      ['nosuch', '--help'],
      ['nosuch', '-h'],
      ['publisher', 'nosuch', '--help'],
      ['arena', 'nosuch', '-h'],
      ['publisher', 'help', 'nosuch'],
    ]) {
      const run = await runEmi(dir, args);
      expectUsageMistake(run, /^error: unknown command 'nosuch'$/);
      expect(run.stdout).toBe('');
    }
    // A typo under a group keeps its "Did you mean", --help or not.
    expectUsageMistake(
      await runEmi(dir, ['publisher', 'statment', '--help']),
      /^error: unknown command 'statment' \(Did you mean statement\?\)$/,
    );
    // Help asked of a real command is still help (exit 0, on stdout).
    for (const [args, usage] of [
      [['help', 'generate'], 'Usage: emi generate'],
      [['publisher', 'help', 'statement'], 'Usage: emi publisher statement'],
      [['arena', 'status', '--help'], 'Usage: emi arena status'],
    ] as const) {
      const help = await runEmi(dir, [...args]);
      expectOk(help);
      expect(help.stdout).toContain(usage);
    }
  }, 60_000);
});

describe('a file where a folder belongs', () => {
  it('is one line and exit 2 for emi serve and emi paywall (state folder) and emi publisher add (--config)', async () => {
    const dir = await tempDir('emi-file-in-way-');
    await writeFile(join(dir, 'f'), '');
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist', 'index.html'), '<!doctype html><title>built</title>');
    const notAFolder = /^emi: state folder f is not writable: \/.+\/f is not a folder$/;
    expectUsageMistake(
      await runEmi(
        dir,
        ['serve', '--port', String(PORTS.serve), '--dev-facilitator-port', '0'],
        { EMI_STATE_DIR: 'f' },
        { timeoutMs: 60_000 },
      ),
      notAFolder,
    );
    expectUsageMistake(
      await runEmi(
        dir,
        ['paywall', '--state', 'f', '--port', String(PORTS.paywall), '--dev-facilitator-port', '0'],
        {},
        { timeoutMs: 60_000 },
      ),
      notAFolder,
    );
    const before = (await readdir(dir)).sort();
    const add = await runEmi(dir, [
      'publisher',
      'add',
      '--config',
      'nodir/pubs.json',
      '--state',
      'var',
      '--id',
      'acme',
      '--name',
      'Acme Research',
      '--pay-to',
      account(),
      '--contact',
      'mailto:desk@acme.example',
      '--terms',
      'https://acme.example/terms',
      '--product',
      'atlas=0.05',
    ]);
    expectUsageMistake(
      add,
      /^emi: no folder \/.+\/nodir for the configuration file \(--config nodir\/pubs\.json\): create it first.*nothing was written$/,
    );
    expect((await readdir(dir)).sort()).toEqual(before);
  }, 120_000);
});

describe('EMI_STATE_DIR of spaces only', () => {
  it('counts as unset: the run keeps its state in var, and no folder is named by spaces', async () => {
    const dir = await tempDir('emi-blank-state-');
    const run = await runEmi(dir, ['generate', '--out', 'site', '--paid', 'paid'], { EMI_STATE_DIR: '   ' });
    expectOk(run);
    const entries = await readdir(dir);
    expect(entries).toContain('var');
    expect(entries.filter((name) => name.trim() === '')).toEqual([]);
    expect(await readdir(join(dir, 'var'))).toContain('last-run.json');
  }, 120_000);
});

describe('emi mcp --paywall-timeout', () => {
  it('is at most an hour: a larger value is a usage mistake naming the range', async () => {
    const dir = await tempDir('emi-paywall-timeout-');
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist', 'index.html'), '<!doctype html><title>built</title>');
    const paywallUrl = `http://127.0.0.1:${PORTS.unreached}`;
    for (const seconds of ['3601', '3000000', '99999999']) {
      const run = await runEmi(
        dir,
        ['mcp', '--paywall-url', paywallUrl, '--paywall-timeout', seconds],
        {},
        // On stdio the server waits for its client: a value let through would keep it running.
        { timeoutMs: 15_000 },
      );
      expectUsageMistake(run, /is more than an hour: --paywall-timeout is from 1 to 3600 seconds\.$/);
    }
    expect(errorLines(await runEmi(dir, ['mcp', '--paywall-timeout', '3600']))).toEqual([
      expect.stringMatching(/give --paywall-url too/),
    ]);
  }, 120_000);
});
