// `emi buy` as a reader runs it: the real CLI in a child process against the local paywall stack (development
// facilitator, real signatures), a free server and a closed port. Only the body on stdout; status on stderr.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUY_EXIT_CODES, buyUrl, networkReason } from '../paywall-worker/buy-command.ts';
import { resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const emi = (args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(process.execPath, ['bin/emi.js', ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });

let stack: Stack;
let freeUrl = '';
let closedPort = 0;
const freeServer = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end('{"success":true,"free":true}');
});

beforeAll(async () => {
  stack = await startStack();
  await new Promise<void>((r) => freeServer.listen(0, '127.0.0.1', r));
  freeUrl = `http://127.0.0.1:${(freeServer.address() as AddressInfo).port}/api/market-regime.php`;
  // A port that was just free and is closed again: nothing listens there.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await new Promise((r) => freeServer.close(r));
});

describe('emi buy', () => {
  it('pays with test money: the body alone on stdout, status on stderr, exit 0', async () => {
    const resource = resourceById('paidMarketRegime');
    const run = await emi([
      'buy',
      resource.path,
      '--base-url',
      stack.worker.url,
      '--facilitator-url',
      stack.facilitator.url,
    ]);
    expect(run.stderr).toContain('test money on the local ledger');
    expect(run.stderr).toMatch(/settled, transaction [A-Z2-7]{52}/);
    expect(run.code).toBe(BUY_EXIT_CODES.paid);
    // stdout parses as the paid body as it is: `emi buy ... | jq` works.
    expect(resource.schema.safeParse(JSON.parse(run.stdout)).success).toBe(true);
  }, 90_000);

  it('explains a free path in one line and pays nothing', async () => {
    const run = await emi(['buy', freeUrl, '--facilitator-url', stack.facilitator.url]);
    expect(run.code).toBe(BUY_EXIT_CODES.free);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/is free .* nothing was paid$/)]);
    expect(JSON.parse(run.stdout)).toEqual({ success: true, free: true });
  }, 60_000);

  it('explains an unreachable site in one line', async () => {
    const run = await emi(['buy', '/api/x402-atlas.php', '--base-url', `http://127.0.0.1:${closedPort}`]);
    expect(run.code).toBe(BUY_EXIT_CODES.unreachable);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      `emi buy: cannot reach http://127.0.0.1:${closedPort} (connection refused); is \`emi up\` running, or is --base-url wrong?`,
    ]);
  }, 60_000);

  it('explains an unreachable facilitator without funding or paying', async () => {
    const resource = resourceById('atlas');
    const run = await emi([
      'buy',
      resource.path,
      '--base-url',
      stack.worker.url,
      '--facilitator-url',
      `http://127.0.0.1:${closedPort}`,
    ]);
    expect(run.code).toBe(BUY_EXIT_CODES.unreachable);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `cannot reach the development facilitator at http://127.0.0.1:${closedPort} (connection refused)`,
    );
  }, 60_000);

  it('says what a 404 before payment means', async () => {
    const run = await emi(['buy', '/api/x402-nothing.php', '--base-url', stack.worker.url]);
    expect(run.code).toBe(BUY_EXIT_CODES.refused);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/answered 404 before any payment/);
  }, 60_000);

  it('lists its exit codes in --help', async () => {
    const run = await emi(['buy', '--help']);
    expect(run.stdout).toContain('Exit codes:');
    for (const code of Object.values(BUY_EXIT_CODES))
      expect(run.stdout).toMatch(new RegExp(`^  ${code}  `, 'm'));
  });
});

describe('buy helpers', () => {
  it('joins paths and refuses what is neither a path nor a URL', () => {
    expect(buyUrl('/api/x402-atlas.php', 'http://127.0.0.1:8080/')).toBe(
      'http://127.0.0.1:8080/api/x402-atlas.php',
    );
    expect(buyUrl('api/x402-atlas.php', 'http://h')).toBe('http://h/api/x402-atlas.php');
    expect(buyUrl('https://x.test/a', 'http://h')).toBe('https://x.test/a');
    expect(buyUrl('/a', 'not a url')).toBeNull();
  });
  it('reads the reason out of a fetch failure', () => {
    const failure = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } });
    expect(networkReason(failure)).toBe('host not found');
    expect(networkReason(new Error('other'))).toBeNull();
  });
});
