// `emi buy` with URLs that can never work or a facilitator that is not a development one: one line, exit 2, nothing
// paid, and no secret of the URL repeated. An operator who sourced /etc/emi/paywall.env has EMI_FACILITATOR_URL
// naming the production facilitator, which emi buy reads as its development one; and an HTML 404 page is named, not
// printed whole. The real CLI in a child process, against the local paywall stack and servers on loopback.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import algosdk from 'algosdk';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALGORAND_MAINNET, USDC_ASA_ID } from '../schemas/paid/terms.ts';
import { BUY_EXIT_CODES } from '../paywall-worker/buy-command.ts';
import { resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

const emi = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const options = { timeout: 60_000, env: { ...process.env, ...env } };
    execFile(process.execPath, ['bin/emi.js', ...args], options, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });

const listening = async (handler: Parameters<typeof createServer>[1]) => {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

let stack: Stack;
let production: Awaited<ReturnType<typeof listening>>;
let htmlSite: Awaited<ReturnType<typeof listening>>;
beforeAll(async () => {
  stack = await startStack();
  // A production facilitator has no /dev/fund.
  production = await listening((_req, res) => {
    res.writeHead(405, { 'Content-Type': 'application/json' });
    res.end('{"error":"method not allowed"}');
  });
  htmlSite = await listening((_req, res) => {
    res.writeHead(404, { 'Content-Type': 'text/html' });
    res.end('<!DOCTYPE html>\n<html><body><h1>Not Found</h1>\n<p>a whole page</p></body></html>\n');
  });
}, 60_000);
afterAll(async () => {
  await stack?.close();
  for (const { server } of [production, htmlSite]) server?.close();
});

const path = resourceById('paidMarketRegime').path;

describe('emi buy refuses what can never work, in one line', () => {
  it.each([
    ['--base-url', 'http://user:SECRET@127.0.0.1:9', /base URL .* must not carry a user name or password/],
    ['--base-url', 'http://127.0.0.1:9/?key=SECRET', /base URL .* must not carry a query string/],
    ['--base-url', 'http://127.0.0.1:9/#SECRET', /base URL .* must not carry a fragment/],
    ['--facilitator-url', 'http://user:SECRET@127.0.0.1:9', /facilitator URL .* user name or password/],
    ['--facilitator-url', 'http://127.0.0.1:9/x402?key=SECRET', /facilitator URL .* query string/],
    // The payment client would read the ledger's parameters from http://127.0.0.1:9/ and fail after funding.
    ['--facilitator-url', 'http://127.0.0.1:9/x402-dev-facilitator', /facilitator URL .* without a path/],
  ])('%s %s', async (option, value, said) => {
    const run = await emi(['buy', path, '--base-url', stack.worker.url, option, value]);
    expect(run.code, run.stderr).toBe(BUY_EXIT_CODES.usage);
    expect(run.stderr).toMatch(said);
    expect(run.stderr).not.toContain('SECRET');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a production facilitator (no /dev/fund): exit 2, saying so, nothing signed or paid', async () => {
    const payee = stack.facilitator.ledger.assetBalance(stack.payTo);
    const run = await emi(['buy', path, '--base-url', stack.worker.url], {
      EMI_FACILITATOR_URL: production.url,
    });
    expect(run.code, run.stderr).toBe(BUY_EXIT_CODES.usage);
    expect(run.stderr).toMatch(/did not fund a development wallet \(HTTP 405\).*production facilitator/);
    expect(run.stderr).toContain('Nothing was signed or paid.');
    expect(stack.facilitator.ledger.assetBalance(stack.payTo)).toBe(payee);
  });

  it('names an HTML error page instead of printing it', async () => {
    const run = await emi(['buy', path, '--base-url', htmlSite.url]);
    expect(run.code).toBe(BUY_EXIT_CODES.refused);
    expect(run.stderr.trim()).toMatch(/answered 404 before any payment: \(an HTML page\)$/);
    expect(run.stderr).not.toContain('<');
  });
});

// Why a facilitator URL with a path is refused: the official AVM client, given it as its algod, reads the ledger's
// parameters at the URL's origin. Should a release keep the path, this fails and the refusal can go.
describe('the official AVM client and an algod URL with a path', () => {
  it('asks /v2/transactions/params at the origin, not under the path', async () => {
    const asked: string[] = [];
    const algod = await listening((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end('{"message":"not here"}');
    });
    try {
      const account = algosdk.generateAccount();
      const signer = toClientAvmSigner(Buffer.from(account.sk).toString('base64'));
      const scheme = new ExactAvmScheme(signer, { algodUrl: `${algod.url}/x402-dev-facilitator` });
      await expect(
        scheme.createPaymentPayload(2, {
          scheme: 'exact',
          network: ALGORAND_MAINNET,
          amount: '10000',
          asset: String(USDC_ASA_ID),
          payTo: account.addr.toString(),
          maxTimeoutSeconds: 60,
          extra: {},
        }),
      ).rejects.toThrow();
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.every((url) => url.startsWith('/v2/transactions/params'))).toBe(true);
    } finally {
      algod.server.close();
    }
  });
});
