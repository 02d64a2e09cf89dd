// The publisher programme on the Cloudflare Worker in its own runtime: `wrangler dev` runs deploy/cloudflare/
// wrangler.toml in workerd on loopback (publishers from EMI_PUBLISHERS, credits in the PublisherCreditsObject
// Durable Objects), in front of the development facilitator behind a proxy whose settle can be refused. Real
// signatures, the official @x402/fetch client, and the operator's `emi publisher ... --worker` commands.
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import type { WranglerDev } from '../deploy/cloudflare/run.ts';
import { buyWithDevWallet } from '../paywall-worker/buy.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { StatementAnswer } from '../paywall-worker/publishers/admin-api.ts';
import { fetchChallenge, newBuyer, paymentHeader, writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry, settleHold, startSettleProxy } from './publishers-harness.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';
import { startTestWorker } from './helpers/test-worker.ts';

const TOKEN = 'operator-admin-token-of-32-chars';
const REPORT = '/p/acme/api/x402-atlas-human-report.php';
const SOLO_REPORT = '/p/solo/api/x402-atlas-human-report.php';

describe('publishers on the Cloudflare Worker in workerd (wrangler dev)', { timeout: 120_000 }, () => {
  let root: string;
  let facilitator: DevFacilitator;
  let proxy: Awaited<ReturnType<typeof startSettleProxy>>;
  let worker: WranglerDev;
  const operatorPayTo = account();
  const payTo = { acme: account(), solo: account(), empty: account() };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-publishers-cf-'));
    const write = async (file: string, text: string) => {
      await mkdir(dirname(join(root, 'dist', file)), { recursive: true });
      await writeFile(join(root, 'dist', file), text);
    };
    await write('index.html', '<!doctype html><title>home</title>');
    await write('404.html', '<!doctype html><title>not found page</title>');
    await write(
      'x402-buyer/index.html',
      '<!doctype html><html><head><title>Buy the report</title></head><body><p>0.10 USDC</p></body></html>',
    );
    await mkdir(join(root, 'paid'));
    await writePaidFixtures(join(root, 'paid'));
    const persistTo = join(root, 'state');
    await uploadPaidFiles(join(root, 'paid'), { persistTo });

    facilitator = await startDevFacilitator();
    proxy = await startSettleProxy(facilitator.url);
    for (const address of [operatorPayTo, ...Object.values(payTo)]) facilitator.ledger.optIn(address);
    worker = await startTestWorker({
      persistTo,
      assetsDir: join(root, 'dist'),
      payTo: operatorPayTo,
      facilitatorUrl: proxy.url,
      vars: {
        EMI_PUBLISHERS: JSON.stringify(
          Object.entries(payTo).map(([id, address]) => publisherEntry(id, address)),
        ),
        EMI_ADMIN_TOKEN: TOKEN,
      },
    });
  }, 180_000);

  afterEach(() => {
    proxy.state.settle = 'pass';
    proxy.state.hold?.open();
    proxy.state.hold = null;
  });
  afterAll(async () => {
    await worker?.stop();
    await proxy?.close();
    await facilitator?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const url = (path: string) => `${worker.url}${path}`;
  const money = (...addresses: string[]) => addresses.map((a) => facilitator.ledger.assetBalance(a));
  const statement = async (id: string): Promise<StatementAnswer> => {
    const response = await fetch(url(`/p/${id}/admin/statement`), {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as StatementAnswer;
  };

  /** Runs `emi publisher ...` in this process with EMI_ADMIN_TOKEN set; returns what it printed. */
  async function emi(...args: string[]): Promise<string> {
    vi.stubEnv('EMI_ADMIN_TOKEN', TOKEN);
    try {
      return await emiInProcess(['publisher', ...args, '--worker', worker.url]);
    } finally {
      vi.unstubAllEnvs();
    }
  }

  it("keeps the operator token off every process's command line (wrangler and workerd), in a private file", async () => {
    const commandLines = await Promise.all(
      (await readdir('/proc'))
        .filter((name) => /^\d+$/.test(name))
        .map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
    );
    expect(commandLines.some((line) => line.includes('wrangler') && line.includes('dev'))).toBe(true);
    expect(commandLines.filter((line) => line.includes(TOKEN))).toEqual([]);
    const secrets = join(root, 'state', 'secrets.env');
    expect((await stat(secrets)).mode & 0o777).toBe(0o600);
  });

  it('credits through the admin route only with the operator token, and from emi publisher credit --worker', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`]) {
      const refused = await fetch(url('/p/acme/admin/credits'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ credits: 100 }),
      });
      expect(refused.status).toBe(401);
    }
    expect((await statement('acme')).balance).toMatchObject({ balance: 0, available: 0 });

    expect(await emi('credit', 'acme', '5')).toContain('publisher acme: 5 credit(s) (0 held');
    expect(await emi('credit', 'solo', '1', '--note', 'one to race for')).toContain(
      'publisher solo: 1 credit(s)',
    );
    expect((await statement('acme')).balance).toMatchObject({ balance: 5, reserved: 0, available: 5 });
    // Withdrawing more than is there is refused by the publisher's Durable Object.
    await expect(emi('credit', 'solo', '-2')).rejects.toThrow(/409.*cannot withdraw 2/);
  });

  it('a purchase with @x402/fetch pays the publisher exactly its price, consumes one credit and is on the statement', async () => {
    const [publisherBefore, operatorBefore] = money(payTo.acme, operatorPayTo);
    const result = await buyWithDevWallet({ url: url(REPORT), facilitatorUrl: facilitator.url });
    expect(result.status).toBe(200);
    expect(result.transaction).toMatch(/^[A-Z2-7]{52}$/);
    expect((result.body as { publisher?: { id: string; pay_to: string } }).publisher).toMatchObject({
      id: 'acme',
      pay_to: payTo.acme,
    });
    const [publisherAfter, operatorAfter] = money(payTo.acme, operatorPayTo);
    expect(publisherAfter! - publisherBefore!).toBe(150000n);
    expect(operatorAfter).toBe(operatorBefore);

    const books = await statement('acme');
    expect(books.balance).toMatchObject({ balance: 4, reserved: 0, sales: 1 });
    expect(books.sales).toEqual([
      expect.objectContaining({
        product: 'atlas-human-report',
        path: REPORT,
        amountAtomic: '150000',
        payTo: payTo.acme,
        payer: result.payer,
        transaction: result.transaction,
        credits: 1,
      }),
    ]);
    const csv = await emi('statement', 'acme', '--csv', '--since', '2020-01-01');
    expect(csv.split('\r\n')[1]).toContain(`,${result.payer},${result.transaction},1`);
    expect(await emi('statement', 'acme')).toContain(`tx ${result.transaction}`);
  });

  it('refuses a payment to the base payee at a publisher path, and a refused settlement consumes no credit', async () => {
    const buyer = await newBuyer(facilitator);
    const before = { money: money(buyer.address, payTo.acme, operatorPayTo), books: await statement('acme') };
    const { paymentRequired } = await fetchChallenge(url(REPORT));
    const toOperator = await buyer.pay(paymentRequired, (r) => ({ ...r, payTo: operatorPayTo }));
    const misdirected = await fetch(url(REPORT), { headers: paymentHeader(toOperator) });
    expect(misdirected.status).toBe(402);
    expect(((await misdirected.json()) as { error: string }).error).toBe('payment_does_not_match');

    proxy.state.settle = 'refuse';
    const settleCalls = proxy.state.settleCalls;
    const refused = await fetch(url(REPORT), { headers: paymentHeader(await buyer.pay(paymentRequired)) });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: string }).error).toBe('insufficient_funds');
    expect(proxy.state.settleCalls).toBe(settleCalls + 1); // settle was asked (and refused)

    expect(money(buyer.address, payTo.acme, operatorPayTo)).toEqual(before.money);
    expect((await statement('acme')).balance).toEqual(before.books.balance); // nothing consumed or held
  });

  it('zero credits: 503 before any payment is requested', async () => {
    const response = await fetch(url('/p/empty/api/x402-atlas-human-report.php'));
    expect(response.status).toBe(503);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
    const body = PaywallErrorBody.parse(await response.json());
    expect(body.error).toBe('not_available_from_seller');
    expect(body.message).toContain('No payment was requested');
  });

  it('two concurrent buyers with one credit: one served, the other refused before paying', async () => {
    const buyers = await Promise.all([newBuyer(facilitator), newBuyer(facilitator)]);
    const { paymentRequired } = await fetchChallenge(url(SOLO_REPORT));
    const payloads = await Promise.all(buyers.map((b) => b.pay(paymentRequired)));
    const before = money(...buyers.map((b) => b.address), payTo.solo);
    // The first sale to reach settle is held there, holding the credit, while the other buyer is answered.
    const hold = settleHold();
    proxy.state.hold = hold;
    const pending = payloads.map((payload) => fetch(url(SOLO_REPORT), { headers: paymentHeader(payload) }));
    await hold.arrived;
    const first = await Promise.race(pending);
    expect(first.status).toBe(503);
    expect(first.headers.get('PAYMENT-RESPONSE')).toBeNull();
    expect(PaywallErrorBody.parse(await first.json()).error).toBe('not_available_from_seller');
    hold.open();
    const responses = await Promise.all(pending);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 503]);

    const after = money(...buyers.map((b) => b.address), payTo.solo);
    const charged = [0, 1].filter((i) => after[i] !== before[i]);
    expect(charged).toHaveLength(1);
    expect(responses[charged[0]!]!.status).toBe(200);
    expect(after[2]! - before[2]!).toBe(150000n);
    expect((await statement('solo')).balance).toMatchObject({ balance: 0, reserved: 0, sales: 1 });
    expect((await fetch(url(SOLO_REPORT))).status).toBe(503);
  });

  it.each([
    '/p/nobody/api/x402-atlas.php',
    '/p/acme/api/x402-main-brain.php',
    '/p/acme/api/x402-nothing.php',
  ])('%s is a JSON 404', async (path) => {
    const response = await fetch(url(path));
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(PaywallErrorBody.parse(await response.json()).error).toBe('not_found');
  });

  it('serves the branded storefront from the static assets, paying the publisher at its price', async () => {
    const page = await fetch(url('/p/acme/x402-buyer/'));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<title>acme Research: Buy the report</title>');
    expect(html).toContain('Sold by acme Research');
    expect(html).toContain('0.15 USDC');
    const config = (await (await fetch(url('/p/acme/x402-buyer/config.json'))).json()) as Record<
      string,
      unknown
    >;
    expect(config).toMatchObject({ merchantAddress: payTo.acme, reportUrl: REPORT, reportAmount: '150000' });
  });
});
