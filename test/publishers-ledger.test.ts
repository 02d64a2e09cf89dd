// The credit ledger's contract (reservations, consumption once per transaction, grants, statements) for both homes
// of the books: SQLite on Node, and the Durable Objects of the Cloudflare Worker (one per publisher, reached over
// RPC; their storage here is an in-memory stand-in for the Durable Object storage API, the Worker test runs the real
// one in workerd). Then the statement's CSV, and the `emi publisher` commands run as the operator runs them.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreditError, RESERVATION_TTL_MS } from '../paywall-worker/publishers/credit-ledger.ts';
import type { CreditLedger } from '../paywall-worker/publishers/credit-ledger.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { StorageCreditLedger } from '../paywall-worker/publishers/credit-ledger-storage.ts';
import type { LedgerStorage } from '../paywall-worker/publishers/credit-ledger-storage.ts';
import {
  creditLedgerObject,
  durableCreditLedger,
} from '../paywall-worker/publishers/credit-ledger-durable.ts';
import { statementCsv, statementText } from '../paywall-worker/publishers/statement.ts';
import { account, sale } from './publishers-harness.ts';
import { emiInProcess } from './helpers/emi-in-process.ts';

let dir: string;
let clock: number;
let ledger: CreditLedger & { close(): void };

/** Durable Object storage as the ledger uses it: values are copies, several keys in one put, lists in key order. */
function memoryStorage(): LedgerStorage {
  const data = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => structuredClone(data.get(key)) as T | undefined,
    put: async (entries) => {
      for (const [key, value] of Object.entries(entries)) data.set(key, structuredClone(value));
    },
    delete: async (keys) => keys.filter((key) => data.delete(key)).length,
    list: async <T>({ prefix, start }: { prefix: string; start?: string }) =>
      new Map(
        [...data.entries()]
          .filter(([key]) => key.startsWith(prefix) && (start === undefined || key >= start))
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([key, value]) => [key, structuredClone(value) as T]),
      ),
  };
}

/** Each kind opens a ledger on books that outlive it (reopening finds the same books). */
const LEDGERS: Record<string, () => (now: () => number) => CreditLedger & { close(): void }> = {
  SqliteCreditLedger: () => (now) => new SqliteCreditLedger(join(dir, 'publishers.sqlite'), now),
  'Durable Object ledger': () => {
    const objects = new Map<unknown, LedgerStorage>();
    const storageOf = (id: unknown) => objects.get(id) ?? objects.set(id, memoryStorage()).get(id)!;
    return (now) => ({
      ...durableCreditLedger(
        {
          idFromName: (name) => `id-of-${name}`,
          // A fresh object over the same storage at every call, as after an eviction or a restart.
          get: (id) => creditLedgerObject(new StorageCreditLedger(storageOf(id), now)),
        },
        ['acme'],
      ),
      close: () => undefined,
    });
  },
};

let open: (now: () => number) => CreditLedger & { close(): void };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-ledger-'));
  clock = Date.parse('2026-11-01T10:00:00Z');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each(Object.keys(LEDGERS))('%s', (kind) => {
  beforeEach(() => {
    open = LEDGERS[kind]!();
    ledger = open(() => clock);
  });
  afterEach(() => ledger.close());

  it('holds a credit per sale in progress and refuses when none is available', async () => {
    await ledger.credit('acme', 2);
    expect(await ledger.reserve('acme', 'T1')).toBe(true);
    expect(await ledger.reserve('acme', 'T1')).toBe(true); // the same sale holds one credit, not two
    expect(await ledger.reserve('acme', 'T2')).toBe(true);
    expect(await ledger.reserve('acme', 'T3')).toBe(false);
    expect(await ledger.balance('acme')).toMatchObject({ balance: 2, reserved: 2, available: 0 });
    await ledger.release('acme', 'T2');
    expect(await ledger.balance('acme')).toMatchObject({ balance: 2, reserved: 1, available: 1 });
  });

  it('consumes a credit once per transaction and records the sale', async () => {
    await ledger.credit('acme', 3);
    await ledger.reserve('acme', 'T1');
    await ledger.consume(sale('T1'));
    await ledger.consume(sale('T1')); // a second report of the same delivery changes nothing
    expect(await ledger.balance('acme')).toMatchObject({ balance: 2, reserved: 0, available: 2, sales: 1 });
    expect(await ledger.statement('acme')).toEqual([sale('T1')]);
  });

  it('forgets a reservation never resolved (the process died mid-sale) after its time', async () => {
    await ledger.credit('acme', 1);
    expect(await ledger.reserve('acme', 'T1')).toBe(true);
    expect(await ledger.reserve('acme', 'T2')).toBe(false);
    clock += RESERVATION_TTL_MS + 1;
    expect(await ledger.reserve('acme', 'T2')).toBe(true);
  });

  it('withdraws only unused credits and keeps the grants', async () => {
    await ledger.credit('acme', 2, 'first batch');
    await ledger.reserve('acme', 'T1');
    await expect(ledger.credit('acme', -2)).rejects.toThrow(CreditError);
    expect((await ledger.credit('acme', -1)).balance).toBe(1);
    await expect(ledger.credit('acme', 0)).rejects.toThrow(/non-zero whole number/);
    await expect(ledger.credit('acme', 1.5)).rejects.toThrow(CreditError);
  });

  it('keeps the books across a reopen, and gives statements since a time', async () => {
    await ledger.credit('acme', 5);
    await ledger.consume(sale('T1', '2026-11-01T09:00:00.000Z'));
    await ledger.consume(sale('T2', '2026-11-02T09:00:00.000Z'));
    ledger.close();
    ledger = open(() => clock);
    expect(await ledger.balance('acme')).toMatchObject({ balance: 3, sales: 2 });
    expect((await ledger.statement('acme', '2026-11-02T00:00:00.000Z')).map((s) => s.transaction)).toEqual([
      'T2',
    ]);
    expect(await ledger.list()).toEqual([expect.objectContaining({ publisherId: 'acme', balance: 3 })]);
  });

  // Pinned rules (a mutation audit found no test that held them). The README: a reservation never resolved stops
  // counting after 10 minutes, on Node and at the edge alike; the balance never goes below zero.
  describe('pinned reservation rules', () => {
    const TEN_MINUTES_MS = 10 * 60 * 1000;

    it('a sale asking again for its own live hold keeps it, even for the last credit', async () => {
      await ledger.credit('acme', 1);
      expect(await ledger.reserve('acme', 'A')).toBe(true);
      expect(await ledger.reserve('acme', 'A')).toBe(true);
    });

    it('an expired hold asked for again is renewed, so no other sale can take that last credit', async () => {
      await ledger.credit('acme', 1);
      expect(await ledger.reserve('acme', 'A')).toBe(true);
      clock += RESERVATION_TTL_MS + 1;
      expect(await ledger.reserve('acme', 'A')).toBe(true);
      expect(await ledger.reserve('acme', 'B')).toBe(false);
      expect(await ledger.balance('acme')).toMatchObject({ reserved: 1, available: 0 });
    });

    it('a hold stops counting at exactly its time to live', async () => {
      await ledger.credit('acme', 1);
      await ledger.reserve('acme', 'A');
      clock += RESERVATION_TTL_MS - 1;
      expect(await ledger.balance('acme')).toMatchObject({ reserved: 1, available: 0 });
      clock += 1;
      expect(await ledger.balance('acme')).toMatchObject({ reserved: 0, available: 1 });
    });

    it('the time to live is 10 minutes, as the README says', async () => {
      await ledger.credit('acme', 1);
      await ledger.reserve('acme', 'A');
      clock += TEN_MINUTES_MS - 1;
      expect(await ledger.reserve('acme', 'B')).toBe(false);
      clock += 2; // 10 minutes and 1 ms after the hold
      expect(await ledger.reserve('acme', 'B')).toBe(true);
    });

    it('a sale delivered after its hold expired and the credit was withdrawn leaves the balance at 0', async () => {
      await ledger.credit('acme', 1);
      await ledger.reserve('acme', 'A');
      clock += RESERVATION_TTL_MS + 1;
      expect((await ledger.credit('acme', -1)).balance).toBe(0);
      await ledger.consume(sale('A'));
      expect(await ledger.balance('acme')).toMatchObject({ balance: 0, sales: 1 });
      // Not -1: the next credit added is there to sell.
      expect(await ledger.credit('acme', 1)).toMatchObject({ balance: 1, available: 1 });
    });

    it('a grant answers the credits available net of the holds', async () => {
      await ledger.credit('acme', 2);
      await ledger.reserve('acme', 'A');
      expect(await ledger.credit('acme', 1)).toMatchObject({ balance: 3, reserved: 1, available: 2 });
    });
  });
});

describe('statements', () => {
  it('writes RFC 4180 CSV with the columns needed to reconcile on chain, formulas defused', () => {
    const csv = statementCsv([sale('T1'), { ...sale('T2'), payer: '=HYPERLINK("x")', product: 'a,b' }]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(
      'time,publisher,product,path,price_usd,amount_atomic,asset,network,pay_to,payer,transaction,credits',
    );
    expect(lines[1]).toBe(
      '2026-11-01T10:00:00.000Z,acme,atlas,/p/acme/api/x402-atlas.php,0.05,50000,31566704,' +
        'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k,PAYTO,PAYER,T1,1',
    );
    expect(lines[2]).toContain(`"a,b"`);
    expect(lines[2]).toContain(`"'=HYPERLINK(""x"")"`);
    expect(lines[3]).toBe('');
  });

  it('sums the sales in the text form', () => {
    const lines = statementText('acme', [sale('T1'), sale('T2')]);
    expect(lines.at(-1)).toBe(
      '2 sale(s), 0.100000 USDC paid directly to the publisher, 2 credit(s) consumed',
    );
  });
});

describe('emi publisher', () => {
  /** Runs `emi publisher ...` in this process (as bin/emi.js would) and returns what it printed. */
  const emi = (...args: string[]): Promise<string> => emiInProcess(['publisher', ...args, '--state', dir]);

  it('adds a publisher, credits it, lists it and prints an empty statement', async () => {
    const config = join(dir, 'emi.config.json');
    const payTo = account();
    const added = await emi(
      'add',
      '--config',
      config,
      '--id',
      'acme',
      '--name',
      'Acme Research',
      '--pay-to',
      payTo,
      '--contact',
      'mailto:desk@acme.example',
      '--terms',
      'https://acme.example/terms',
      '--product',
      'atlas-human-report=0.15',
      '--credits',
      '3',
    );
    expect(added).toContain('publisher acme: 3 credit(s)');
    const written = JSON.parse(await readFile(config, 'utf8')) as { publishers: { payTo: string }[] };
    expect(written.publishers[0]?.payTo).toBe(payTo);

    expect(await emi('credit', 'acme', '2')).toContain('publisher acme: 5 credit(s)');
    // A mistyped id would park the credits where no sale can use them.
    await expect(emi('credit', 'acme-typo', '4', '--config', config)).rejects.toThrow(
      /^publisher "acme-typo" is not in .*emi\.config\.json \(configured: acme\); no credits were changed$/,
    );
    const listed = await emi('list', '--config', config);
    expect(listed).toContain(`acme  "Acme Research" pays ${payTo}  credits 5 (0 held, 5 available)`);
    const csv = await emi('statement', 'acme', '--csv', '--since', '2026-01-01');
    expect(csv).toBe(
      'time,publisher,product,path,price_usd,amount_atomic,asset,network,pay_to,payer,transaction,credits\r\n',
    );

    // A bad entry is refused with one line, and the file is left as it was.
    const before = await readFile(config, 'utf8');
    const refused = emi(
      'add',
      '--config',
      config,
      '--id',
      'cheap',
      '--name',
      'Cheap',
      '--pay-to',
      payTo,
      '--contact',
      'https://cheap.example',
      '--terms',
      'https://cheap.example/t',
      '--product',
      'atlas=0.001',
    );
    await expect(refused).rejects.toThrow(
      /^publisher "cheap": products\.atlas\.priceUsd: 0\.001 is below the base price 0\.02$/,
    );
    expect(await readFile(config, 'utf8')).toBe(before);
  }, 60_000);
});
