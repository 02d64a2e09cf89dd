// The publisher programme as a running `emi serve` / `emi up` worker meets the operator's commands and a monitor:
// `emi publisher close` stops new sales at once (the worker reads the config file again when it changes, not only
// at its start), while a payment made before the close is still delivered; and `/x402/health` says which publisher
// paths do not sell (closed, out of credit) without turning the operator's own health red. A closure once reached
// holds until a restart, even if the entry comes back (it would reopen with its start-up payee and price), and a
// change the running worker does not apply is logged.
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PaywallLogEntry } from '../paywall-worker/core/decide.ts';
import type { Health } from '../paywall-worker/core/health.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import type { Publisher, PublisherInput } from '../paywall-worker/publishers/config.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { liveClosures } from '../paywall-worker/publishers/node.ts';
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

describe('a config file the running worker refuses, on /x402/health', () => {
  it('says the file is not applied, without its path or its words, and applied again once mended', async () => {
    const before = await readFile(config, 'utf8');
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect((await health()).body.publishers_config).toEqual({ applied: true, problem: null });
      await writeFile(config, '{"publishers": [');
      const refused = await health();
      expect(refused.body.publishers_config?.applied).toBe(false);
      expect(refused.body.publishers_config?.problem).toMatch(
        /^since \S+Z the config file would be refused at start: closures written since are not applied/,
      );
      expect(JSON.stringify(refused.body)).not.toContain(dir);
      expect(JSON.stringify(refused.body)).not.toContain('JSON');
      expect(refused.status).toBe(200); // the operator's own sales go on
      await rm(config);
      expect((await health()).body.publishers_config?.problem).toContain('the config file cannot be read');
    } finally {
      errors.mockRestore();
      await writeFile(config, before);
    }
    expect((await health()).body.publishers_config).toEqual({ applied: true, problem: null });
  });
});

describe('a closed storefront whose entry comes back on a running worker', () => {
  it('stays closed until a restart, and the change the worker does not apply is logged', async () => {
    // Here `acme` is closed (`emi publisher close`) and `other` removed: the operator adds `other` again with a new
    // payee and deletes acme's `closedAt` by hand.
    const before = await readFile(config, 'utf8');
    const written = JSON.parse(before) as { publishers: Array<Record<string, unknown>> };
    const reopened = written.publishers.map(({ closedAt: _closedAt, ...entry }) => entry);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    await writeFile(
      config,
      JSON.stringify({ publishers: [...reopened, publisherEntry('other', account())] }),
    );
    try {
      for (const path of [OTHER, ACME]) {
        const response = await fetch(url(path));
        expect(response.status).toBe(410);
        expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
        expect(PaywallErrorBody.parse(await response.json()).error).toBe('seller_closed');
      }
      const changed = errors.mock.calls
        .map((call) => String(call[0]))
        .filter((line) => line.includes('"publishers_config_changed"'))
        .map((line) => JSON.parse(line) as PaywallLogEntry);
      expect(changed).toHaveLength(1);
      expect(changed[0]?.level).toBe('warn');
      expect(changed[0]?.detail).toContain('publishers other differ');
      expect(changed[0]?.detail).toContain(
        'restart to apply (until then the storefronts keep the settings they started with)',
      );
    } finally {
      errors.mockRestore();
      await writeFile(config, before);
    }
  });
});

describe('liveClosures', () => {
  const START = Date.parse('2026-01-01T00:00:00Z');
  const HOUR = 3_600_000;
  const payeeA = account();
  const payeeB = account();
  let liveDir: string;
  let file: string;
  let stamp = 1_700_000_000;
  let clock = START;
  let logged: PaywallLogEntry[];

  /** Writes the file so that its version surely changes (a new modification time each time). */
  const writeEntries = async (entries: PublisherInput[]) => {
    await writeFile(file, JSON.stringify({ publishers: entries }));
    stamp += 1;
    await utimes(file, stamp, stamp);
  };
  const start = async (entries: PublisherInput[]) => {
    await writeEntries(entries);
    logged = [];
    clock = START;
    return liveClosures({
      configFile: file,
      publishers: parsePublishers(entries),
      version: null,
      operatorPayTo: account(),
      log: (entry) => logged.push(entry),
      now: () => clock,
    });
  };
  const changes = () => logged.filter((entry) => entry.event === 'publishers_config_changed');
  const publisher = (id: string) => ({ id }) as Publisher;

  beforeAll(async () => {
    liveDir = await mkdtemp(join(tmpdir(), 'emi-live-closures-'));
    file = join(liveDir, 'emi.config.json');
  });
  afterAll(() => rm(liveDir, { recursive: true, force: true }));

  it('keeps a storefront seen removed closed when its entry comes back with another payee', async () => {
    const closedAt = await start([publisherEntry('zeroco', payeeA), publisherEntry('keep', payeeA)]);
    expect(await closedAt(publisher('zeroco'))).toBeNull();
    clock = START + HOUR;
    await writeEntries([publisherEntry('keep', payeeA)]);
    expect(await closedAt(publisher('zeroco'))).toBe(START + HOUR);
    clock = START + 2 * HOUR;
    await writeEntries([publisherEntry('keep', payeeA), publisherEntry('zeroco', payeeB)]);
    expect(await closedAt(publisher('zeroco'))).toBe(START + HOUR);
    expect(await closedAt(publisher('keep'))).toBeNull();
  });

  it('keeps a reached closedAt when it is deleted by hand, or moved later', async () => {
    const closing = new Date(START + HOUR).toISOString();
    const closedAt = await start([publisherEntry('acme', payeeA, { closedAt: closing })]);
    clock = START + 2 * HOUR;
    await writeEntries([publisherEntry('acme', payeeA)]);
    expect(await closedAt(publisher('acme'))).toBe(START + HOUR);
    await writeEntries([
      publisherEntry('acme', payeeA, { closedAt: new Date(START + 9 * HOUR).toISOString() }),
    ]);
    expect(await closedAt(publisher('acme'))).toBe(START + HOUR);
  });

  it('lets a closedAt not reached yet be moved or removed, and closes a removed entry at once', async () => {
    const closedAt = await start([
      publisherEntry('acme', payeeA, { closedAt: new Date(START + HOUR).toISOString() }),
      publisherEntry('beta', payeeA, { closedAt: new Date(START + HOUR).toISOString() }),
    ]);
    expect(await closedAt(publisher('acme'))).toBe(START + HOUR);
    await writeEntries([
      publisherEntry('acme', payeeA, { closedAt: new Date(START + 3 * HOUR).toISOString() }),
      publisherEntry('beta', payeeA, { closedAt: new Date(START + HOUR).toISOString() }),
    ]);
    expect(await closedAt(publisher('acme'))).toBe(START + 3 * HOUR);
    clock = START + 30 * 60_000;
    await writeEntries([publisherEntry('acme', payeeA)]);
    expect(await closedAt(publisher('acme'))).toBeNull();
    // beta, due to close in half an hour, was taken out of the file: closed from when that was seen.
    expect(await closedAt(publisher('beta'))).toBe(START + 30 * 60_000);
    clock = START + 5 * HOUR;
    expect(await closedAt(publisher('acme'))).toBeNull();
  });

  it('logs once per file version what differs from the start-up publishers but closedAt', async () => {
    const closedAt = await start([publisherEntry('acme', payeeA), publisherEntry('beta', payeeA)]);
    await closedAt(publisher('acme'));
    expect(changes()).toEqual([]);
    // Only a closure: nothing to warn about.
    await writeEntries([
      publisherEntry('acme', payeeA, { closedAt: new Date(START + HOUR).toISOString() }),
      publisherEntry('beta', payeeA),
    ]);
    await closedAt(publisher('acme'));
    expect(changes()).toEqual([]);
    // A price, a payee and a new publisher: named, once for this version however many sales ask.
    await writeEntries([
      publisherEntry('acme', payeeA, { products: { atlas: { priceUsd: '0.09' } } }),
      publisherEntry('beta', payeeB),
      publisherEntry('gamma', payeeA),
    ]);
    await closedAt(publisher('acme'));
    await closedAt(publisher('beta'));
    expect(changes()).toEqual([
      {
        level: 'warn',
        event: 'publishers_config_changed',
        detail:
          'publishers acme, beta, gamma (new) differ in the config file from what this worker started with: ' +
          'restart to apply (until then the storefronts keep the settings they started with)',
      },
    ]);
    // A brand change in the next version is logged again.
    await writeEntries([
      publisherEntry('acme', payeeA),
      publisherEntry('beta', payeeA, {
        brand: { ...publisherEntry('beta', payeeA).brand, name: 'Beta Two' },
      }),
    ]);
    await closedAt(publisher('acme'));
    expect(changes().map((entry) => entry.detail)).toHaveLength(2);
    expect(changes()[1]?.detail).toMatch(/^publishers beta differ/);
  });
});
