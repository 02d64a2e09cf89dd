// The publisher programme as a running `emi serve` / `emi up` worker meets the operator's commands and a monitor:
// `emi publisher close` stops new sales at once (the worker reads the config file again when it changes, not only
// at its start), while a payment made before the close is still delivered; and `/x402/health` says which publisher
// paths do not sell (closed, out of credit) without turning the operator's own health red.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Health } from '../paywall-worker/core/health.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { HEALTH_PATH } from '../schemas/delivery.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';
import { fetchChallenge, newBuyer, paymentHeader, writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry } from './publishers-harness.ts';

const ACME = '/p/acme/api/x402-atlas-human-report.php';
const OTHER = '/p/other/api/x402-atlas-human-report.php';
const EMPTY = '/p/empty/api/x402-atlas.php';

let dir: string;
let config: string;
let ledgerFile: string;
let paywall: LocalPaywall;
let server: Awaited<ReturnType<typeof listen>>;
let facilitator: DevFacilitator;
const acmeAddress = account();
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
const balance = (address: string) => facilitator.ledger.assetBalance(address);
const health = async () => {
  const response = await fetch(url(HEALTH_PATH));
  const body = (await response.json()) as Health;
  return { status: response.status, body, state: new Map(body.files.map((f) => [f.path, f])) };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-publishers-live-'));
  await writePaidFixtures(dir);
  config = join(dir, 'emi.config.json');
  await writeFile(
    config,
    JSON.stringify({
      publishers: [
        publisherEntry('acme', acmeAddress),
        publisherEntry('other', account()),
        publisherEntry('empty', account(), { products: { atlas: { priceUsd: '0.05' } } }),
      ],
    }),
  );
  ledgerFile = join(dir, 'publishers.sqlite');
  const ledger = new SqliteCreditLedger(ledgerFile);
  await ledger.credit('acme', 5);
  await ledger.credit('other', 5);
  ledger.close();
  paywall = await createLocalPaywall({
    paidDir: dir,
    baseUrl: 'http://127.0.0.1:8080',
    devFacilitatorPort: 0,
    configFile: config,
    ledgerFile,
  });
  facilitator = paywall.devFacilitator as DevFacilitator;
  server = await listen(paywall.app, 0, '127.0.0.1');
}, 60_000);
afterAll(async () => {
  await server?.close();
  await paywall?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('/x402/health with publishers', () => {
  it("says which publisher paths do not sell, and a publisher out of credit leaves the operator's health green", async () => {
    const { status, body, state } = await health();
    expect(state.get(EMPTY)).toMatchObject({ state: 'not_available_from_seller', seller: 'empty' });
    expect(state.get(ACME)).toMatchObject({ state: 'for_sale', seller: 'acme' });
    expect(state.get('/api/x402-atlas.php')?.state).toBe('for_sale');
    expect(state.get('/api/x402-atlas.php')?.seller).toBeUndefined();
    expect(body.ok).toBe(true);
    expect(status).toBe(200);
    // What the buyer meets there agrees.
    const refused = await fetch(url(EMPTY));
    expect(refused.status).toBe(503);
    expect(PaywallErrorBody.parse(await refused.json()).error).toBe('not_available_from_seller');
  });
});

describe('emi publisher close on a running worker', () => {
  it('stops new sales at the next request, no restart, and still delivers a payment made before', async () => {
    const buyer = await newBuyer(facilitator);
    const late = await newBuyer(facilitator);
    const bought = await buyer.pay((await fetchChallenge(url(ACME))).paymentRequired);
    const served = await fetch(url(ACME), { headers: paymentHeader(bought) });
    expect(served.status).toBe(200);
    // Another buyer signs a payment while the storefront is open and sends it only after the close.
    const unsent = await late.pay((await fetchChallenge(url(ACME))).paymentRequired);

    const printed = await emiInProcess(['publisher', 'close', 'acme', '--config', config, '--state', dir]);

    const unpaid = await fetch(url(ACME));
    expect(unpaid.status).toBe(410);
    expect(printed).toContain('from now on its paths sell nothing new (410)');
    expect(unpaid.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(PaywallErrorBody.parse(await unpaid.json()).error).toBe('seller_closed');

    // A payment signed before the close but sent after it is not settled: no money moves, no credit is used.
    const before = [balance(late.address), balance(acmeAddress)];
    const refused = await fetch(url(ACME), { headers: paymentHeader(unsent) });
    expect(refused.status).toBe(410);
    expect([balance(late.address), balance(acmeAddress)]).toEqual(before);

    // The payment made before the close is still delivered when sent again, without a second charge or credit.
    const again = await fetch(url(ACME), { headers: paymentHeader(bought) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { publisher?: { id: string } }).publisher?.id).toBe('acme');
    expect(balance(buyer.address)).toBe(1_000_000n - 150_000n);
    const ledger = new SqliteCreditLedger(ledgerFile);
    expect(await ledger.balance('acme')).toMatchObject({ balance: 4, sales: 1 });
    ledger.close();

    // The monitor sees it too, and the operator's health stays green; other publishers keep selling.
    const { body, state } = await health();
    expect(state.get(ACME)).toMatchObject({ state: 'seller_closed', seller: 'acme' });
    expect(body.ok).toBe(true);
    expect((await fetch(url(OTHER))).status).toBe(402);
  }, 60_000);

  it('an entry deleted from the file while the worker runs sells nothing new either', async () => {
    const written = JSON.parse(await readFile(config, 'utf8')) as { publishers: Array<{ id: string }> };
    await writeFile(
      config,
      JSON.stringify({ publishers: written.publishers.filter((entry) => entry.id !== 'other') }),
    );
    const response = await fetch(url(OTHER));
    expect(response.status).toBe(410);
    expect(PaywallErrorBody.parse(await response.json()).error).toBe('seller_closed');
  });

  it('a file the worker would refuse changes nothing, and is logged', async () => {
    const before = await readFile(config, 'utf8');
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    await writeFile(config, '{"publishers": [');
    try {
      expect((await fetch(url(ACME))).status).toBe(410); // still closed
      expect((await fetch(url('/p/other/api/x402-atlas.php'))).status).toBe(410);
      expect(errors.mock.calls.map((call) => String(call[0])).join('\n')).toMatch(
        /publishers_config_refused.*is not valid JSON/,
      );
    } finally {
      errors.mockRestore();
      await writeFile(config, before);
    }
  });
});
