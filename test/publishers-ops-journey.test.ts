// The publisher programme as an operator runs it (bin/emi.js, the compiled CLI): the start-up lines name where the
// payment book and the credit ledger are (`emi up --state` keeps both there, as `emi paywall --state` does) and what
// each storefront can sell; a publisher paid to the operator's own payee is a usage mistake said before anything is
// written; `emi publisher add` and `close` change a symlinked config file where the link points, keeping its mode;
// a statement reads the ledger even when another entry of the file is refused.
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { errorLines, expectOk, expectUsageMistake, runEmi, startEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';
import { account, publisherEntry } from './publishers-harness.ts';

/** A configured facilitator that is never asked at start (its port, in this file's range, has nothing on it). */
const FACILITATOR_URL = 'http://127.0.0.1:20459';

/** Runs a long-running command until its last start-up line, then stops it; what it printed. */
async function startUpLines(cwd: string, args: string[], env: Record<string, string>): Promise<Finished> {
  const running = startEmi(cwd, args, env, { timeoutMs: 180_000 });
  try {
    await running.waitFor('MCP (streamable HTTP)'); // the last start-up line
  } finally {
    running.stop();
  }
  return running.done;
}

const lineStarting = (run: Finished, start: string): string | undefined =>
  run.stdout.split('\n').find((line) => line.startsWith(start));

const writeConfig = (file: string, publishers: unknown[]): Promise<void> =>
  writeFile(file, JSON.stringify({ publishers }));

const serveArgs = ['serve', '--port', '0', '--dev-facilitator-port', '0', '--config', 'emi.config.json'];

describe('the start-up lines: the payment book and the credit ledger, where they are', () => {
  it('emi up --state D with a configured facilitator keeps its payment book and credit ledger in D', async () => {
    const dir = await tempDir('emi-pubops-up-');
    await writeConfig(join(dir, 'emi.config.json'), [publisherEntry('acme', account())]);
    const run = await startUpLines(
      dir,
      [
        'up',
        '--state',
        'D',
        '--config',
        'emi.config.json',
        '--port',
        '0',
        '--backfill-days',
        '0',
        '--cron',
        '0 0 1 1 *',
      ],
      { EMI_FACILITATOR_URL: FACILITATOR_URL, EMI_PAYTO: account() },
    );
    expect(lineStarting(run, 'x402 payment book:')).toContain(
      `x402 payment book: ${join(dir, 'D', 'payments.sqlite')} `,
    );
    expect(lineStarting(run, 'publisher credits:')).toBe(
      `publisher credits: ${join(dir, 'D', 'publishers.sqlite')}`,
    );
    expect(existsSync(join(dir, 'D', 'payments.sqlite'))).toBe(true);
    // Nothing of the paywall's in the working folder's var/.
    expect(existsSync(join(dir, 'var'))).toBe(false);
  }, 240_000);

  it('emi serve keeps them in EMI_STATE_DIR and says so; each storefront says its credits, 0 with a warning', async () => {
    const dir = await tempDir('emi-pubops-serve-');
    await mkdir(join(dir, 'dist'));
    const state = join(dir, 'state');
    const [acme, zeroco] = [account(), account()];
    await writeConfig(join(dir, 'emi.config.json'), [
      publisherEntry('acme', acme),
      publisherEntry('zeroco', zeroco),
    ]);
    await mkdir(state);
    const ledger = new SqliteCreditLedger(join(state, 'publishers.sqlite'));
    await ledger.credit('acme', 5);
    ledger.close();
    const run = await startUpLines(dir, serveArgs, {
      EMI_STATE_DIR: state,
      EMI_FACILITATOR_URL: FACILITATOR_URL,
      EMI_PAYTO: account(),
    });
    expect(lineStarting(run, 'x402 payment book:')).toContain(
      `x402 payment book: ${join(state, 'payments.sqlite')} `,
    );
    expect(lineStarting(run, 'arena votes:')).toContain(join(state, 'arena-votes.sqlite'));
    expect(lineStarting(run, 'publisher credits:')).toBe(
      `publisher credits: ${join(state, 'publishers.sqlite')}`,
    );
    const products = '(atlas-human-report, atlas)';
    expect(lineStarting(run, 'publisher acme:')).toBe(
      `publisher acme: /p/acme/ pays ${acme} ${products}; 5 credit(s) available`,
    );
    expect(lineStarting(run, 'publisher zeroco:')).toBe(
      `publisher zeroco: /p/zeroco/ pays ${zeroco} ${products}; 0 credits: answers 503 until ` +
        '`emi publisher credit zeroco N`',
    );
    expect(existsSync(join(dir, 'var'))).toBe(false);
  }, 60_000);
});

describe("a publisher paid to the operator's own payee: one line, exit 2, nothing written", () => {
  const refusal = /^emi: publisher "acme": payTo: is the operator's own payee address$/;

  it('emi up (EMI_PAYTO) refuses before it generates or builds', async () => {
    const dir = await tempDir('emi-pubops-payee-up-');
    const operator = account();
    await writeConfig(join(dir, 'emi.config.json'), [publisherEntry('acme', operator)]);
    const run = await runEmi(
      dir,
      ['up', '--state', 'D', '--config', 'emi.config.json', '--port', '0', '--backfill-days', '0'],
      { EMI_FACILITATOR_URL: FACILITATOR_URL, EMI_PAYTO: operator },
      { timeoutMs: 120_000 },
    );
    expectUsageMistake(run, refusal);
    expect((await readdir(dir)).sort()).toEqual(['emi.config.json']);
  }, 150_000);

  it('emi paywall (--pay-to) and emi serve (EMI_PAYTO) refuse it the same way', async () => {
    const dir = await tempDir('emi-pubops-payee-serve-');
    await mkdir(join(dir, 'dist'));
    const operator = account();
    await writeConfig(join(dir, 'emi.config.json'), [publisherEntry('acme', operator)]);
    const paywall = await runEmi(
      dir,
      ['paywall', '--port', '0', '--pay-to', operator, '--config', 'emi.config.json', '--state', 'S'],
      { EMI_FACILITATOR_URL: FACILITATOR_URL },
      { timeoutMs: 30_000 },
    );
    expectUsageMistake(paywall, refusal);
    const serve = await runEmi(
      dir,
      serveArgs,
      { EMI_PAYTO: operator, EMI_STATE_DIR: 'S' },
      { timeoutMs: 30_000 },
    );
    expectUsageMistake(serve, refusal);
    expect((await readdir(dir)).sort()).toEqual(['dist', 'emi.config.json']);
  }, 60_000);
});

const addArgs = (id: string, state: string, config: string, ...more: string[]): string[] => [
  'publisher',
  'add',
  '--config',
  config,
  '--state',
  state,
  '--id',
  id,
  '--name',
  `${id} Research`,
  '--pay-to',
  account(),
  '--contact',
  `mailto:desk@${id}.example`,
  '--terms',
  `https://${id}.example/terms`,
  '--product',
  'atlas=0.05',
  ...more,
];

const publisherIds = async (file: string): Promise<string[]> =>
  (JSON.parse(await readFile(file, 'utf8')) as { publishers: Array<{ id: string }> }).publishers.map(
    (p) => p.id,
  );

describe('emi publisher add and close: a symlinked or private config file', () => {
  it('change the file the link points to, keep the link a link and the file 600', async () => {
    const dir = await tempDir('emi-pubops-link-');
    await mkdir(join(dir, 'etc'));
    const target = join(dir, 'etc', 'emi.config.json');
    await writeConfig(target, [publisherEntry('acme', account())]);
    await chmod(target, 0o600);
    const link = join(dir, 'emi.config.json');
    await symlink(join('etc', 'emi.config.json'), link);
    expectOk(await runEmi(dir, addArgs('beta', 'S', 'emi.config.json', '--credits', '3')));
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await publisherIds(target)).toEqual(['acme', 'beta']);
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expectOk(
      await runEmi(dir, ['publisher', 'close', 'acme', '--config', 'emi.config.json', '--state', 'S']),
    );
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    const closed = JSON.parse(await readFile(target, 'utf8')) as { publishers: Array<{ closedAt?: string }> };
    expect(closed.publishers[0]?.closedAt).toEqual(expect.any(String));
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    // No temporary file left beside the link or its target.
    expect((await readdir(dir)).sort()).toEqual(['S', 'emi.config.json', 'etc']);
    expect(await readdir(join(dir, 'etc'))).toEqual(['emi.config.json']);
  }, 60_000);

  it('keep a regular file’s mode (640 stays 640)', async () => {
    const dir = await tempDir('emi-pubops-mode-');
    const file = join(dir, 'emi.config.json');
    await writeConfig(file, []);
    await chmod(file, 0o640);
    expectOk(await runEmi(dir, addArgs('acme', 'S', 'emi.config.json', '--credits', '1')));
    expect((await stat(file)).mode & 0o777).toBe(0o640);
  }, 30_000);
});

describe('emi publisher add without --credits', () => {
  it('says the storefront has 0 credits and answers 503 until it is credited', async () => {
    const dir = await tempDir('emi-pubops-add-');
    const run = await runEmi(dir, addArgs('acme', 'S', 'emi.config.json'));
    expectOk(run);
    expect(run.stdout).toContain(
      'publisher acme: 0 credits: answers 503 until `emi publisher credit acme N`',
    );
  }, 30_000);
});

describe('emi publisher statement with a config file refused for another entry', () => {
  it('reads the ledger for an id it knows, with one warning saying why the file is refused', async () => {
    const dir = await tempDir('emi-pubops-statement-');
    const acme = account();
    const bad = publisherEntry('beta', account());
    bad.brand = { ...bad.brand, accentColor: 'pink' };
    await writeConfig(join(dir, 'emi.config.json'), [publisherEntry('acme', acme), bad]);
    await mkdir(join(dir, 'S'));
    const ledger = new SqliteCreditLedger(join(dir, 'S', 'publishers.sqlite'));
    await ledger.credit('acme', 2);
    await ledger.reserve('acme', 'TXONE');
    await ledger.consume({
      at: '2026-11-20T10:00:00.000Z',
      publisherId: 'acme',
      product: 'atlas',
      path: '/p/acme/api/x402-atlas.php',
      priceUsd: '0.05',
      amountAtomic: '50000',
      payTo: acme,
      payer: account(),
      transaction: 'TXONE',
      network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
      credits: 1,
    });
    ledger.close();
    const args = ['--config', 'emi.config.json', '--state', 'S'];
    const run = await runEmi(dir, ['publisher', 'statement', 'acme', ...args]);
    expectOk(run);
    expect(run.stdout).toContain('TXONE');
    expect(errorLines(run)).toEqual([
      expect.stringMatching(
        /^emi publisher: warning: configuration file emi\.config\.json is refused \(publisher "beta": brand\.accentColor: .+\): "acme" is read from its books in .+publishers\.sqlite alone$/,
      ),
    ]);
    // An id the ledger does not know still stops at the file's fault (exit 2).
    const unknown = await runEmi(dir, ['publisher', 'statement', 'nobody', ...args]);
    expectUsageMistake(unknown, /accentColor/);
  }, 30_000);
});
