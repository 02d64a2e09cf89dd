// The real `emi` with a stdout that cannot take its output: a full disk (/dev/full, ENOSPC) or a reader gone (a pipe
// closed early, EPIPE). Each command ends with one line on stderr, never a stack trace or a silent exit 0; EPIPE is
// quiet. `emi buy` has paid by then: it keeps the payment in a file (exit 6) and collecting with it later delivers
// the same body without a second charge. Against `emi paywall` and its development facilitator on loopback.
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUY_EXIT_CODES } from '../paywall-worker/buy-command.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';
import { EMI, expectOk, runEmi, startEmi } from './ops-cli.ts';
import type { Running } from './ops-cli.ts';

const PAYWALL_PORT = 20700;
const FACILITATOR_PORT = 20701;
const SITE = `http://127.0.0.1:${PAYWALL_PORT}`;
const FACILITATOR = `http://127.0.0.1:${FACILITATOR_PORT}`;
const resource = resourceById('paidMarketRegime');

interface Ended {
  code: number | null;
  stderr: string;
}

/** Runs the real `emi` in `cwd` without this machine's EMI_* variables, its stdout as `stdout` says. */
function runWithStdout(cwd: string, args: string[], stdout: 'full' | 'closed-pipe'): Promise<Ended> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')));
  const full = stdout === 'full' ? openSync('/dev/full', 'w') : null;
  const child = spawn(process.execPath, [EMI, ...args], {
    cwd,
    env,
    stdio: ['ignore', full ?? 'pipe', 'pipe'],
  });
  if (full !== null) closeSync(full);
  // The reader gone before anything is written: every write of the child meets EPIPE.
  else child.stdout!.destroy();
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

/** No stack trace, no unhandled 'error' event. */
function expectNoTrace(run: Ended): void {
  expect(run.stderr).not.toMatch(/node:events|Unhandled 'error'|^\s+at /m);
}

const lines = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

/** A full stdout: one line on stderr saying so, exit 1. */
function expectCannotWrite(run: Ended): void {
  expectNoTrace(run);
  expect(run.code, run.stderr).toBe(1);
  expect(lines(run.stderr)).toEqual(['emi: cannot write the output: ENOSPC: no space left on device, write']);
}

/** A reader gone: quiet, exit 0. */
function expectQuietEnd(run: Ended): void {
  expectNoTrace(run);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
}

const hasDevFull = existsSync('/dev/full');
let work: string;
let paywall: Running | undefined;

beforeAll(async () => {
  if (!hasDevFull) return;
  work = await mkdtemp(join(tmpdir(), 'emi-stdout-faults-'));
  await mkdir(join(work, 'paid'));
  await writePaidFixtures(join(work, 'paid'));
  expectOk(await runEmi(work, ['generate', '--seed', '7', '--out', 'site', '--paid', 'site-paid']));
  const payTo = algosdk.generateAccount().addr.toString();
  expectOk(
    await runEmi(work, [
      'publisher',
      'add',
      ...['--config', 'publishers.json', '--state', 'var', '--id', 'acme', '--name', 'Acme Research'],
      ...[
        '--pay-to',
        payTo,
        '--contact',
        'mailto:desk@acme.example',
        '--terms',
        'https://acme.example/terms',
      ],
      ...['--product', 'atlas=0.05'],
    ]),
  );
  paywall = startEmi(
    work,
    [
      'paywall',
      ...['--port', String(PAYWALL_PORT), '--dev-facilitator-port', String(FACILITATOR_PORT)],
      ...['--paid', join(work, 'paid'), '--state', join(work, 'paywall-state')],
    ],
    { EMI_ALLOW_SIMULATED: '1' },
  );
  await paywall.waitFor(`x402 paywall listening on ${SITE}`);
}, 60_000);

afterAll(async () => {
  paywall?.stop();
  await paywall?.done;
  if (work) await rm(work, { recursive: true, force: true });
});

const buyArgs = ['buy', resource.path, '--base-url', SITE, '--facilitator-url', FACILITATOR];

/** The paywall's log lines (JSON) of `event` for `txid`. */
const logged = (event: string, txid: string): number =>
  paywall!
    .output()
    .split('\n')
    .filter((line) => line.includes(`"event":"${event}"`) && line.includes(`"txid":"${txid}"`)).length;

/** What `emi buy` said when stdout failed: the transaction, the cause and the command that collects the file. */
function expectKeptPayment(run: Ended, cause: RegExp): { transaction: string; file: string } {
  expectNoTrace(run);
  expect(run.code, run.stderr).toBe(BUY_EXIT_CODES.paymentKept);
  const last = lines(run.stderr).at(-1)!;
  const transaction = /settled as transaction ([A-Z2-7]{52})/.exec(last)?.[1];
  expect(transaction, last).toBeDefined();
  expect(last).toMatch(cause);
  const collect = /collect the file.*with: (emi buy \S+ --base-url \S+ --payment-signature @(\S+))$/.exec(
    last,
  );
  expect(collect, last).not.toBeNull();
  return { transaction: transaction!, file: collect![2]! };
}

describe.skipIf(!hasDevFull)('a stdout that cannot take the output', () => {
  it('emi buy to a full disk keeps the settled payment (exit 6), and collecting it delivers once', async () => {
    await writePaidFixtures(join(work, 'paid')); // fresh: the paywall sells at most 120 s old files
    const run = await runWithStdout(work, buyArgs, 'full');
    const { transaction, file } = expectKeptPayment(run, /\(ENOSPC: no space left on device, write\)/);
    const header = (await readFile(file, 'utf8')).trim();
    expect(header.length).toBeGreaterThan(0);
    expect(logged('sold', transaction)).toBe(1);

    const later = await runEmi(work, [
      'buy',
      resource.path,
      '--base-url',
      SITE,
      '--payment-signature',
      `@${file}`,
    ]);
    expect(later.code, later.stderr).toBe(BUY_EXIT_CODES.paid);
    expect(resource.schema.safeParse(JSON.parse(later.stdout)).success, later.stdout).toBe(true);
    expect(later.stderr).toContain(`settled, transaction ${transaction}`);
    expect(later.stderr).not.toMatch(/payer [A-Z2-7]{58}/); // nothing new signed or funded
    // The paywall delivered the same payment again: one sale, one redelivery, no second charge.
    expect(logged('sold', transaction)).toBe(1);
    expect(logged('redelivered', transaction)).toBe(1);
    // Delivered: the kept payment is removed now, and only now.
    expect(existsSync(dirname(file))).toBe(false);
  }, 60_000);

  it('emi buy to a reader gone (EPIPE) keeps the settled payment the same way (exit 6)', async () => {
    await writePaidFixtures(join(work, 'paid'));
    const run = await runWithStdout(work, buyArgs, 'closed-pipe');
    const { transaction, file } = expectKeptPayment(run, /\(write EPIPE\)/);
    expect(existsSync(file)).toBe(true);
    expect(logged('sold', transaction)).toBe(1);
    await rm(dirname(file), { recursive: true, force: true });
  }, 60_000);

  it('emi publisher statement --csv: one line and exit 1 to a full disk, quiet exit 0 to a reader gone', async () => {
    const args = ['publisher', 'statement', 'acme', '--config', 'publishers.json', '--state', 'var', '--csv'];
    expectCannotWrite(await runWithStdout(work, args, 'full'));
    expectQuietEnd(await runWithStdout(work, args, 'closed-pipe'));
  }, 30_000);

  it('emi arena status: one line and exit 1 to a full disk, quiet exit 0 to a reader gone', async () => {
    const args = ['arena', 'status', '--state', 'var'];
    expectCannotWrite(await runWithStdout(work, args, 'full'));
    expectQuietEnd(await runWithStdout(work, args, 'closed-pipe'));
  }, 30_000);

  it('emi validate: one line and exit 1 to a full disk, quiet exit 0 to a reader gone', async () => {
    const args = ['validate', 'site'];
    expectCannotWrite(await runWithStdout(work, args, 'full'));
    expectQuietEnd(await runWithStdout(work, args, 'closed-pipe'));
  }, 30_000);

  it('emi --version, written just before commander exits: one line and exit 1 to a full disk', async () => {
    expectCannotWrite(await runWithStdout(work, ['--version'], 'full'));
  }, 30_000);

  it('emi mcp whose client is gone (its stdout closed) ends quietly, exit 0', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')));
    const child = spawn(process.execPath, [EMI, 'mcp', '--dir', 'site', '--paywall-url', SITE], {
      cwd: work,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve) => {
      child.stderr.on('data', () => {
        if (stderr.includes('emi mcp: serving')) resolve();
      });
    });
    child.stdout.destroy(); // the client's end of the server's stdout is gone; its stdin stays open
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'gone', version: '1' } },
    };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    const code = await ended;
    expectNoTrace({ code, stderr });
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|closed on its own/);
  }, 30_000);
});
