// Closing a publisher's storefront without stranding a buyer. Deleting the entry from the configuration turns its
// paths into 404s at the next restart, so a buyer whose settle answer was lost a moment before could never collect
// the file that was paid for. `closedAt` (written by `emi publisher close`) stops new sales instead, with a 410
// before any payment is asked for, while a payment already made is still reconciled and delivered.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';
import { startEmi } from './ops-cli.ts';
import { fetchChallenge, newBuyer, paymentHeader, writePaidFixtures } from './paywall-harness.ts';
import { account, publisherEntry, startPublisherStack } from './publishers-harness.ts';
import type { PublisherStack } from './publishers-harness.ts';

const REPORT = '/p/acme/api/x402-atlas-human-report.php';

describe('a closed storefront', () => {
  let stack: PublisherStack;
  const acmeAddress = account();
  const otherAddress = account();
  const entries = (closedAt?: string) => () => [
    publisherEntry('acme', acmeAddress, closedAt ? { closedAt } : {}),
    publisherEntry('other', otherAddress),
  ];
  const balance = (address: string) => stack.facilitator.ledger.assetBalance(address);

  beforeAll(async () => {
    stack = await startPublisherStack(entries(), { acme: 5, other: 5 });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('still delivers a payment whose settle answer was lost before the close, and sells nothing new', async () => {
    const buyer = await newBuyer(stack.facilitator);
    const late = await newBuyer(stack.facilitator);
    const payment = await buyer.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);
    // Another buyer signs a payment while the storefront is open and sends it only after the close.
    const unsent = await late.pay((await fetchChallenge(stack.url(REPORT))).paymentRequired);

    stack.proxy.state.settle = 'lose-after-submit';
    stack.proxy.state.indexerDown = true; // the outcome cannot be found out now
    const lost = await fetch(stack.url(REPORT), { headers: paymentHeader(payment) });
    expect(lost.status).toBeGreaterThanOrEqual(500);
    expect(PaywallErrorBody.parse(await lost.json()).transaction).not.toBeNull();
    const charged = balance(buyer.address);
    expect(charged).toBe(1_000_000n - 150_000n); // the payment landed

    // The operator closes the storefront and restarts the worker.
    await stack.restart(entries(new Date(Date.now() - 1_000).toISOString()));
    stack.proxy.state.settle = 'pass';
    stack.proxy.state.indexerDown = false;

    const unpaid = await fetch(stack.url(REPORT));
    expect(unpaid.status).toBe(410);
    expect(unpaid.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(unpaid.headers.get('Retry-After')).toBeNull(); // closed for good, not for a moment
    const refusal = PaywallErrorBody.parse(await unpaid.json());
    expect(refusal.error).toBe('seller_closed');
    expect(refusal.message).toContain('/api/x402-atlas-human-report.php'); // where to buy it instead

    const collected = await fetch(stack.url(REPORT), { headers: paymentHeader(payment) });
    expect(collected.status).toBe(200);
    expect(((await collected.json()) as { publisher?: { id: string } }).publisher?.id).toBe('acme');
    expect(balance(buyer.address)).toBe(charged); // delivered, never charged twice
    expect(await stack.ledger.balance('acme')).toMatchObject({ balance: 4, reserved: 0, sales: 1 });
    expect((await stack.ledger.statement('acme'))[0]?.payer).toBe(buyer.address);

    // A payment signed before the close is not settled after it: no money moves, no credit is used.
    const before = [balance(late.address), balance(acmeAddress)];
    const refused = await fetch(stack.url(REPORT), { headers: paymentHeader(unsent) });
    expect(refused.status).toBe(410);
    // It says what happened to the payment it carried (not "no payment was requested").
    expect(PaywallErrorBody.parse(await refused.json()).message).toContain(
      'nothing was charged (a payment sent with this request was not settled)',
    );
    expect([balance(late.address), balance(acmeAddress)]).toEqual(before);
    expect(await stack.ledger.balance('acme')).toMatchObject({ balance: 4, reserved: 0, sales: 1 });

    // Other publishers keep selling.
    expect((await fetch(stack.url('/p/other/api/x402-atlas-human-report.php'))).status).toBe(402);
  });

  it('says it is closed (410) while the file is stale too: the close is for good, staleness for a moment', async () => {
    await stack.restart(entries(new Date(Date.now() - 1_000).toISOString()));
    await writePaidFixtures(stack.paidDir, 3600);
    try {
      const closed = await fetch(stack.url(REPORT));
      expect(closed.status).toBe(410);
      expect(closed.headers.get('Retry-After')).toBeNull();
      expect(PaywallErrorBody.parse(await closed.json()).error).toBe('seller_closed');
      // An open storefront's stale file is still the moment's 503.
      const other = await fetch(stack.url('/p/other/api/x402-atlas-human-report.php'));
      expect(other.status).toBe(503);
      expect(PaywallErrorBody.parse(await other.json()).error).toBe('data_stale');
    } finally {
      await writePaidFixtures(stack.paidDir);
    }
  });
});

describe('emi publisher close', () => {
  let dir: string;
  let config: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-publisher-close-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('marks the entry closed (kept, checked as the worker checks it), says when it may be deleted, once', async () => {
    config = join(dir, 'emi.config.json');
    const other = { sources: { concurrency: 4 } }; // the rest of the file is kept as it is
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', account())], ...other }));
    const closedFrom = Date.now();
    const printed = await emiInProcess(['publisher', 'close', 'acme', '--config', config, '--state', dir]);
    const written = JSON.parse(await readFile(config, 'utf8')) as {
      publishers: Array<{ closedAt?: string }>;
    };
    const closedAt = Date.parse(written.publishers[0]?.closedAt ?? '');
    expect(closedAt).toBeGreaterThanOrEqual(closedFrom - 1_000);
    expect(closedAt).toBeLessThanOrEqual(Date.now());
    expect(parsePublishers(written.publishers)[0]?.closedAt).toBe(closedAt);
    expect(written).toMatchObject(other);
    // A sale begun just before the close ends within the payment book's in-flight lease (2 minutes), and the book
    // keeps its record an hour from then.
    const deletable = new Date(closedAt + (2 + 60) * 60 * 1000).toISOString();
    expect(printed).toContain(`its entry may be deleted after ${deletable}`);

    const again = await emiInProcess(['publisher', 'close', 'acme', '--config', config, '--state', dir]);
    expect(again).toContain('already has a closedAt, unchanged: closed since');
    expect(JSON.parse(await readFile(config, 'utf8'))).toEqual(written); // the first close time stands

    const listed = await emiInProcess(['publisher', 'list', '--config', config, '--state', dir]);
    expect(listed).toContain(`closed since ${new Date(closedAt).toISOString()}`);
  });

  it('refuses an id the configuration does not name, and changes nothing', async () => {
    const before = await readFile(config, 'utf8');
    await expect(
      emiInProcess(['publisher', 'close', 'acme2', '--config', config, '--state', dir]),
    ).rejects.toThrow(/publisher "acme2" is not in .*; nothing was changed/);
    expect(await readFile(config, 'utf8')).toBe(before);
  });

  it('lists a closedAt that lies ahead as a closing time, not as closed', async () => {
    const ahead = new Date(Date.now() + 86_400_000).toISOString();
    const file = join(dir, 'ahead.json');
    await writeFile(
      file,
      JSON.stringify({ publishers: [publisherEntry('soon', account(), { closedAt: ahead })] }),
    );
    const listed = await emiInProcess(['publisher', 'list', '--config', file, '--state', dir]);
    expect(listed).toContain(`closes at ${ahead}`);
    expect(listed).not.toContain('closed since');
  });

  it('a closedAt that is not an ISO time is refused as the worker refuses it', () => {
    expect(() => parsePublishers([publisherEntry('acme', account(), { closedAt: 'tomorrow' })])).toThrow(
      /publisher "acme": closedAt: /,
    );
  });
});

describe('emi serve after a restart', () => {
  it('says which storefronts are closed or closing in its start-up lines, as emi publisher list does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-publisher-close-serve-'));
    try {
      await mkdir(join(dir, 'dist'));
      const [acme, soon, open] = [account(), account(), account()];
      const closedAt = new Date(Date.now() - 60_000).toISOString();
      const ahead = new Date(Date.now() + 86_400_000).toISOString();
      const config = join(dir, 'emi.config.json');
      await writeFile(
        config,
        JSON.stringify({
          publishers: [
            publisherEntry('acme', acme, { closedAt }),
            publisherEntry('soon', soon, { closedAt: ahead }),
            publisherEntry('open', open),
          ],
        }),
      );
      const args = ['serve', '--port', '0', '--dev-facilitator-port', '0', '--config', config];
      const serve = startEmi(dir, args, { EMI_STATE_DIR: join(dir, 'var') }, { timeoutMs: 30_000 });
      try {
        await serve.waitFor('MCP (streamable HTTP)'); // the last start-up line
      } finally {
        serve.stop();
      }
      const lines = (await serve.done).stdout.split('\n').filter((line) => line.startsWith('publisher '));
      const products = '(atlas-human-report, atlas)';
      // The storefronts still selling say their credits too (none here: the ledger is new).
      const noCredits = (id: string) => `0 credits: answers 503 until \`emi publisher credit ${id} N\``;
      expect(lines).toEqual([
        `publisher credits: ${join(dir, 'var', 'publishers.sqlite')}`,
        `publisher acme: /p/acme/ closed since ${closedAt}: sells nothing new (410), still delivers payments ` +
          `already made to ${acme} ${products}`,
        `publisher soon: /p/soon/ pays ${soon} ${products}; closes at ${ahead}; ${noCredits('soon')}`,
        `publisher open: /p/open/ pays ${open} ${products}; ${noCredits('open')}`,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
