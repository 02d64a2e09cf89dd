// Defects found by auditing the publisher programme as a publisher and a buyer meet it, each pinned here: the
// storefront's redirect for ids that are not publishers, `--since` dates that do not exist, and `emi publisher add`
// accepting the operator's own payee (which `emi serve` then refuses at start), and a storefront path of a product
// the publisher does not resell answered with the paywall's generic 404.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../paywall-worker/node-listen.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import { sinceTime } from '../paywall-worker/publishers/credit-ledger.ts';
import { createStorefront } from '../paywall-worker/publishers/storefront.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';
import { account, publisherEntry, startPublisherStack } from './publishers-harness.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-publishers-audit-'));
});
afterEach(async () => {
  delete process.env.EMI_PAYTO;
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('the storefront redirect', () => {
  it('redirects only a publisher that has a storefront; any other id is the JSON 404', async () => {
    const publishers = parsePublishers([
      publisherEntry('acme', account()),
      publisherEntry('bare', account(), { products: { atlas: { priceUsd: '0.05' } } }),
    ]);
    const app = createStorefront({ publishers, buyerConfig: {}, readBuyerFile: () => Promise.resolve(null) });
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const get = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`, { redirect: 'manual' });
      const known = await get('/p/acme/x402-buyer');
      expect(known.status).toBe(301);
      expect(known.headers.get('location')).toBe('/p/acme/x402-buyer/');
      for (const path of [
        '/p/nobody/x402-buyer',
        '/p/bare/x402-buyer',
        '/p/a%0d%0aSet-Cookie:x=1/x402-buyer',
      ]) {
        const response = await get(path);
        expect(response.status, path).toBe(404);
        expect(response.headers.get('location'), path).toBeNull();
        expect(((await response.json()) as { error: string }).error, path).toBe('not_found');
      }
    } finally {
      await server.close();
    }
  });
});

describe('a storefront path that is not for sale', () => {
  it('names what the publisher does resell, or that no publisher has the id, and asks for no payment', async () => {
    const stack = await startPublisherStack(
      () => [publisherEntry('bare', account(), { products: { atlas: { priceUsd: '0.05' } } })],
      { bare: 5 },
    );
    try {
      const answer = async (path: string) => {
        const response = await fetch(stack.url(path));
        expect(response.headers.get('payment-required'), path).toBeNull();
        return { status: response.status, body: (await response.json()) as Record<string, string> };
      };
      const unsold = await answer('/p/bare/api/x402-main-brain.php');
      expect(unsold.status).toBe(404);
      expect(unsold.body.error).toBe('not_found');
      expect(unsold.body.message).toBe(
        'This publisher does not resell this product; it sells /p/bare/api/x402-atlas.php.',
      );
      const nobody = await answer('/p/nobody/api/x402-atlas.php');
      expect(nobody.status).toBe(404);
      expect(nobody.body.message).toMatch(/no publisher with this id/);
      // The product it does resell is for sale at its path.
      expect((await fetch(stack.url('/p/bare/api/x402-atlas.php'))).status).toBe(402);
    } finally {
      await stack.close();
    }
  });
});

describe('--since', () => {
  it('refuses a date that does not exist instead of moving it to the next month', () => {
    for (const value of ['2026-02-30', '2026-02-29', '2026-04-31T00:00:00Z', '2026-13-01']) {
      expect(sinceTime(value), value).toBeNull();
    }
    expect(sinceTime('2028-02-29')).toBe('2028-02-29T00:00:00.000Z');
    expect(sinceTime('2026-11-01T10:00:00+05:00')).toBe('2026-11-01T05:00:00.000Z');
    expect(sinceTime('2026-12-31')).toBe('2026-12-31T00:00:00.000Z');
  });

  it('emi publisher statement --since 2026-02-30 is a usage error, not the sales since 1 March', () => {
    const run = spawnSync(
      process.execPath,
      ['bin/emi.js', 'publisher', 'statement', 'acme', '--since', '2026-02-30', '--state', dir],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--since wants an ISO date or time (e.g. 2026-11-01): 2026-02-30');
    expect(run.stdout).toBe('');
  });
});

describe('emi publisher add', () => {
  it("refuses the operator's own payee (EMI_PAYTO), as emi serve would at start, and writes nothing", async () => {
    const operator = account();
    process.env.EMI_PAYTO = operator;
    const config = join(dir, 'emi.config.json');
    const add = emiInProcess([
      'publisher',
      'add',
      '--config',
      config,
      '--state',
      dir,
      '--id',
      'acme',
      '--name',
      'Acme',
      '--pay-to',
      operator,
      '--contact',
      'mailto:desk@acme.example',
      '--terms',
      'https://acme.example/terms',
      '--product',
      'atlas=0.05',
    ]);
    await expect(add).rejects.toThrow(/^publisher "acme": payTo: is the operator's own payee address$/);
    expect(process.exitCode).toBe(2);
    await expect(readFile(config, 'utf8')).rejects.toThrow(/ENOENT/);
  });
});

describe('a publisher whose address is not opted in to USDC (no algod configured to check it)', () => {
  it('the official client pays nothing, gets nothing, and no credit is consumed', async () => {
    const { startDevFacilitator } = await import('../paywall-worker/dev-facilitator/server.ts');
    const { startPaywallServer } = await import('../paywall-worker/server.ts');
    const { createFsStorage } = await import('../paywall-worker/storage-fs.ts');
    const { SqliteCreditLedger } = await import('../paywall-worker/publishers/credit-ledger-sqlite.ts');
    const { creditHooks, publisherSalePoints } = await import('../paywall-worker/publishers/sale-points.ts');
    const { writePaidFixtures } = await import('./paywall-harness.ts');
    const { buyWithDevWallet } = await import('../paywall-worker/buy.ts');
    await writePaidFixtures(dir);
    const operator = account();
    const publishers = parsePublishers([publisherEntry('acme', account())], operator);
    const facilitator = await startDevFacilitator({ optIn: [operator] }); // the publisher is left out
    const ledger = new SqliteCreditLedger(join(dir, 'publishers.sqlite'));
    await ledger.credit('acme', 1);
    const worker = await startPaywallServer(
      {
        port: 0,
        payTo: operator,
        facilitatorUrl: facilitator.url,
        baseUrl: 'http://127.0.0.1:8080',
        storage: createFsStorage(dir),
        allowSimulated: true,
      },
      { salePoints: publisherSalePoints(publishers), hooks: creditHooks(publishers, ledger, () => {}) },
    );
    try {
      const result = await buyWithDevWallet({
        url: `${worker.url}/p/acme/api/x402-atlas.php`,
        facilitatorUrl: facilitator.url,
      });
      expect(result.status).not.toBe(200);
      expect(result.payer ? facilitator.ledger.assetBalance(result.payer) : 1_000_000n).toBe(1_000_000n);
      expect(await ledger.balance('acme')).toMatchObject({ balance: 1, reserved: 0, sales: 0 });
    } finally {
      await worker.close();
      await facilitator.close();
      ledger.close();
    }
  }, 30_000);
});
