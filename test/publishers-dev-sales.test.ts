// Sales settled by the development facilitator (test money on an in-memory ledger) go into the same credit ledger
// as real ones, so they are recorded as test money: network `development`, marked on the statement and left out of
// what was paid to the publisher. A sale through a configured facilitator keeps its chain's network and counts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall, LocalPaywallOptions } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import type { SaleRecord } from '../paywall-worker/publishers/credit-ledger.ts';
import { statementText } from '../paywall-worker/publishers/statement.ts';
import { ALGORAND_MAINNET } from '../schemas/paid/terms.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';
import { fetchChallenge, newBuyer, paymentHeader, writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry, sale } from './publishers-harness.ts';

const REPORT = '/p/acme/api/x402-atlas-human-report.php';
const TEST_MARK = '(test money, development ledger)';

let dir: string;
let config: string;
let ledgerFile: string;
const acmePayTo = account();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-dev-sales-'));
  await writePaidFixtures(dir);
  config = join(dir, 'emi.config.json');
  await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', acmePayTo)] }));
  ledgerFile = join(dir, 'publishers.sqlite');
  const ledger = new SqliteCreditLedger(ledgerFile);
  await ledger.credit('acme', 2);
  ledger.close();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts the local paywall with acme's storefront, buys acme's report once through it, and stops it. */
async function buyOnce(
  facilitator: (paywall: LocalPaywall) => DevFacilitator,
  options: Partial<LocalPaywallOptions> = {},
): Promise<void> {
  const paywall = await createLocalPaywall({
    paidDir: dir,
    baseUrl: 'http://127.0.0.1:8080',
    devFacilitatorPort: 0,
    configFile: config,
    ledgerFile,
    ...options,
  });
  const server = await listen(paywall.app, 0, '127.0.0.1');
  try {
    const url = `http://127.0.0.1:${server.port}${REPORT}`;
    const buyer = await newBuyer(facilitator(paywall));
    const payment = await buyer.pay((await fetchChallenge(url)).paymentRequired);
    const served = await fetch(url, { headers: paymentHeader(payment) });
    expect(served.status).toBe(200);
  } finally {
    await server.close();
    await paywall.close();
  }
}

async function books(): Promise<{ sales: SaleRecord[]; balance: number }> {
  const ledger = new SqliteCreditLedger(ledgerFile);
  try {
    return { sales: await ledger.statement('acme'), balance: (await ledger.balance('acme')).balance };
  } finally {
    ledger.close();
  }
}

const statement = (...flags: string[]) =>
  emiInProcess(['publisher', 'statement', 'acme', '--config', config, '--state', dir, ...flags]);

describe('a sale through `emi serve` with the development facilitator', () => {
  it('is recorded as test money: network `development`, marked, left out of the paid total', async () => {
    await buyOnce((paywall) => paywall.devFacilitator as DevFacilitator);

    const { sales, balance } = await books();
    expect(sales).toHaveLength(1);
    expect(sales[0]?.network).toBe('development');
    expect(balance).toBe(1); // the credit is consumed, as in production

    const lines = (await statement()).trimEnd().split('\n');
    const saleLine = lines.find((line) => line.includes(sales[0]!.transaction));
    expect(saleLine).toContain(TEST_MARK);
    expect(lines).toContain('0 sale(s), 0.000000 USDC paid directly to the publisher, 0 credit(s) consumed');
    expect(lines).toContain(
      '1 test sale(s), 0.150000 USDC of test money on the development ledger (not paid to the publisher), ' +
        '1 credit(s) consumed',
    );

    // The CSV keeps its columns; the network column says `development`.
    const csv = (await statement('--csv')).split('\r\n');
    expect(csv[1]?.split(',')[7]).toBe('development');

    // `emi publisher list` counts it as a sale of test money.
    const listed = await emiInProcess(['publisher', 'list', '--config', config, '--state', dir]);
    expect(listed).toMatch(/^acme .* sales 1 \(1 of test money\)/m);
  }, 60_000);
});

describe('a sale through a configured facilitator', () => {
  let facilitator: DevFacilitator;
  const operatorPayTo = account();
  beforeEach(async () => {
    facilitator = await startDevFacilitator({ port: 0, optIn: [operatorPayTo, acmePayTo] });
  });
  afterEach(async () => {
    await facilitator.close();
  });

  it('keeps the settlement network (Algorand mainnet) and counts as paid to the publisher', async () => {
    await buyOnce(() => facilitator, {
      facilitatorUrl: facilitator.url,
      indexerUrl: facilitator.url,
      payTo: operatorPayTo,
      paymentBookFile: join(dir, 'payments.sqlite'),
      allowSimulated: true,
    });

    const { sales } = await books();
    expect(sales).toHaveLength(1);
    expect(sales[0]?.network).toBe(ALGORAND_MAINNET);

    const text = await statement();
    expect(text).not.toContain(TEST_MARK);
    expect(text).not.toContain('test sale(s)');
    expect(text).toContain('1 sale(s), 0.150000 USDC paid directly to the publisher, 1 credit(s) consumed');
  }, 60_000);
});

describe('statement text with real and test sales', () => {
  it('marks each test line and totals real and test sales apart', () => {
    const lines = statementText('acme', [
      sale('T1'),
      { ...sale('DEV1'), network: 'development' },
      sale('T2'),
      { ...sale('DEV2'), network: 'development', amountAtomic: '150000' },
    ]);
    const marked = lines.filter((line) => line.includes(TEST_MARK));
    expect(marked).toHaveLength(2);
    expect(marked.every((line) => /tx DEV\d/.test(line))).toBe(true);
    expect(lines.filter((line) => /tx T\d/.test(line)).some((line) => line.includes(TEST_MARK))).toBe(false);
    expect(lines.slice(-2)).toEqual([
      '2 sale(s), 0.100000 USDC paid directly to the publisher, 2 credit(s) consumed',
      '2 test sale(s), 0.200000 USDC of test money on the development ledger (not paid to the publisher), ' +
        '2 credit(s) consumed',
    ]);
  });
});
