// Credit grants read back: every `emi publisher credit` (its signed credits and its note, such as an invoice number)
// is listed by both homes of the books (SQLite on Node; the Durable Object's storage, here over the in-memory
// storage of test/helpers/map-storage.ts), answered by the Worker's admin route, and printed by
// `emi publisher statement` after the sales, with a line of totals that adds up with the balance. The note is
// operator text: it never breaks the text form nor a spreadsheet. A Worker deployed before grants were listed still
// gives its sales.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../paywall-worker/node-listen.ts';
import type { StatementAnswer } from '../paywall-worker/publishers/admin-api.ts';
import { createAdminRoute } from '../paywall-worker/publishers/admin-route.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import type { CreditLedger, GrantRecord } from '../paywall-worker/publishers/credit-ledger.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { StorageCreditLedger } from '../paywall-worker/publishers/credit-ledger-storage.ts';
import type { LedgerStorage } from '../paywall-worker/publishers/credit-ledger-storage.ts';
import {
  creditLedgerObject,
  durableCreditLedger,
} from '../paywall-worker/publishers/credit-ledger-durable.ts';
import * as statement from '../paywall-worker/publishers/statement.ts';
import { mapStorage } from './helpers/map-storage.ts';
import { runEmi } from './ops-cli.ts';
import { account, publisherEntry, sale } from './publishers-harness.ts';

/** The admin route's token: long enough for it (operator-token.ts). */
const TOKEN = 'secret-operator-token-of-32-char';
const clientIp = () => 'test-client';

/**
 * The ledger's storage API over map-storage.ts's Map: that helper is the payment book's shape (one key per put, no
 * prefix in list), so the several-keys put and the prefix/start list the ledger uses are laid over its Map here.
 */
function ledgerStorage(): LedgerStorage {
  const { map } = mapStorage();
  return {
    get: <T>(key: string) => Promise.resolve(structuredClone(map.get(key)) as T | undefined),
    put: (entries) => {
      for (const [key, value] of Object.entries(entries)) map.set(key, structuredClone(value));
      return Promise.resolve();
    },
    delete: (keys) => Promise.resolve(keys.filter((key) => map.delete(key)).length),
    list: <T>({ prefix, start }: { prefix: string; start?: string }) =>
      Promise.resolve(
        new Map(
          [...map.entries()]
            .filter(([key]) => key.startsWith(prefix) && (start === undefined || key >= start))
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([key, value]) => [key, structuredClone(value) as T]),
        ),
      ),
  };
}

let dir: string;
let clock: number;
const now = () => clock;

const HOMES: Record<string, () => CreditLedger & { close(): void }> = {
  SqliteCreditLedger: () => new SqliteCreditLedger(join(dir, 'publishers.sqlite'), now),
  StorageCreditLedger: () => Object.assign(new StorageCreditLedger(ledgerStorage(), now), { close() {} }),
  'Durable Object ledger': () => {
    const objects = new Map<unknown, LedgerStorage>();
    const storageOf = (id: unknown) => objects.get(id) ?? objects.set(id, ledgerStorage()).get(id)!;
    return {
      ...durableCreditLedger(
        {
          idFromName: (name) => `id-of-${name}`,
          get: (id) => creditLedgerObject(new StorageCreditLedger(storageOf(id), now)),
        },
        ['acme', 'beta'],
      ),
      close: () => undefined,
    };
  },
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-grants-'));
  clock = Date.parse('2026-11-01T10:00:00.000Z');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = (iso: string) => (clock = Date.parse(iso));

describe.each(Object.keys(HOMES))('grants of the %s', (home) => {
  let ledger: CreditLedger & { close(): void };
  beforeEach(() => {
    ledger = HOMES[home]!();
  });
  afterEach(() => ledger.close());

  it('lists every grant and withdrawal, signed, with its note, oldest first, per publisher', async () => {
    at('2026-11-01T10:00:00.000Z');
    await ledger.credit('acme', 10, 'INV-2026-001');
    at('2026-11-02T10:00:00.000Z');
    await ledger.credit('beta', 4, 'another publisher');
    at('2026-11-03T10:00:00.000Z');
    await ledger.credit('acme', -3);
    at('2026-11-03T10:00:00.000Z'); // the same millisecond: kept in the order made
    await ledger.credit('acme', 2, 'INV-2026-002');

    expect(await ledger.grants('acme')).toEqual([
      { at: '2026-11-01T10:00:00.000Z', publisherId: 'acme', credits: 10, note: 'INV-2026-001' },
      { at: '2026-11-03T10:00:00.000Z', publisherId: 'acme', credits: -3, note: null },
      { at: '2026-11-03T10:00:00.000Z', publisherId: 'acme', credits: 2, note: 'INV-2026-002' },
    ] satisfies GrantRecord[]);
    expect(await ledger.grants('beta')).toEqual([
      { at: '2026-11-02T10:00:00.000Z', publisherId: 'beta', credits: 4, note: 'another publisher' },
    ]);
    expect(await ledger.grants('nobody')).toEqual([]);
  });

  it('takes `since` as the statement does: at or after that time', async () => {
    at('2026-11-01T10:00:00.000Z');
    await ledger.credit('acme', 5);
    at('2026-11-02T00:00:00.000Z');
    await ledger.credit('acme', 1, 'on the bound');
    at('2026-11-02T00:00:00.001Z');
    await ledger.credit('acme', 2, 'after');
    const since = await ledger.grants('acme', '2026-11-02T00:00:00.000Z');
    expect(since.map((g) => g.note)).toEqual(['on the bound', 'after']);
    expect(await ledger.grants('acme', '2026-11-03T00:00:00.000Z')).toEqual([]);
  });

  it('keeps a note verbatim, newlines and control characters included; a refused withdrawal is not listed', async () => {
    const note = 'INV-7\n\u001b[2Jcleared, "quoted"';
    await ledger.credit('acme', 1, note);
    await ledger.reserve('acme', 'HELD');
    await expect(ledger.credit('acme', -1, 'refused')).rejects.toThrow(/cannot withdraw 1/);
    expect(await ledger.grants('acme')).toEqual([
      { at: '2026-11-01T10:00:00.000Z', publisherId: 'acme', credits: 1, note },
    ]);
  });

  it('totals that add up with the balance: granted - withdrawn - consumed = balance = held + available', async () => {
    await ledger.credit('acme', 10, 'INV-1');
    await ledger.credit('acme', -2, 'refund');
    for (const txid of ['T1', 'T2', 'T3']) {
      await ledger.reserve('acme', txid);
      await ledger.consume(sale(txid));
    }
    await ledger.reserve('acme', 'HELD'); // a sale in progress
    const balance = await ledger.balance('acme');
    const line = statement.creditTotalsLine(
      statement.creditTotals(await ledger.grants('acme'), await ledger.statement('acme')),
      balance,
    );
    expect(line).toBe(
      'credits: 10 granted - 2 withdrawn - 3 consumed by sales = 5 on the books (1 held by sales in progress, ' +
        '4 available now)',
    );
    const [granted, withdrawn, consumed, books, held, available] = (line.match(/\d+/g) ?? []).map(Number);
    expect(granted! - withdrawn! - consumed!).toBe(books);
    expect(books).toBe(balance.balance);
    expect(held! + available!).toBe(books);
    expect(available).toBe(balance.available);

    // Since a time, the balance before it completes the sum (the hold has expired by then).
    at('2026-11-05T00:00:00.000Z');
    await ledger.credit('acme', 3, 'top-up');
    const since = '2026-11-04T00:00:00.000Z';
    const after = await ledger.balance('acme');
    const window = statement.creditTotalsLine(
      statement.creditTotals(await ledger.grants('acme', since), await ledger.statement('acme', since)),
      after,
      since,
    );
    expect(window).toBe(
      `credits: 5 before ${since} + 3 granted - 0 withdrawn - 0 consumed by sales = 8 on the books ` +
        '(0 held by sales in progress, 8 available now)', // the hold expired days ago
    );
  });
});

describe('the note in the text form and in CSV', () => {
  const grant = (note: string | null, credits = 5): GrantRecord => ({
    at: '2026-11-01T10:00:00.000Z',
    publisherId: 'acme',
    credits,
    note,
  });

  it('one line per grant: time, +N or -N, the note quoted with every control escaped, or "no note"', () => {
    const hostile = 'INV-1\r\nforged line\u001b[31m\u009b2J\u2028\u202eevil\u0000';
    const lines = statement.grantsText('acme', [grant(hostile), grant(null, -2)]);
    expect(lines).toEqual([
      'grants of publisher acme',
      '2026-11-01T10:00:00.000Z  +5 credit(s)  "INV-1\\r\\nforged line\\u001b[31m\\u009b2J\\u2028\\u202eevil\\u0000"',
      '2026-11-01T10:00:00.000Z  -2 credit(s)  no note',
      '2 grant(s) and withdrawal(s): 5 credit(s) granted, 2 withdrawn',
    ]);
    const acted = (c: string) => {
      const code = c.codePointAt(0)!;
      return code < 0x20 || (code >= 0x7f && code <= 0x9f) || [0x2028, 0x2029, 0x202e].includes(code);
    };
    for (const line of lines) expect([...line].filter(acted)).toEqual([]);
    expect(JSON.parse(statement.quotedNote(hostile))).toBe(hostile); // still reads back as the note
  });

  it('the grants table: time,publisher,credits,note; RFC 4180 quoting, formulas defused, credits a number', () => {
    const csv = statement.grantsCsv([
      grant('=HYPERLINK("http://x")'),
      grant('INV-2, line\nbreak', -3),
      grant(null),
    ]);
    expect(csv.split('\r\n')).toEqual([
      'time,publisher,credits,note',
      `2026-11-01T10:00:00.000Z,acme,5,"'=HYPERLINK(""http://x"")"`,
      '2026-11-01T10:00:00.000Z,acme,-3,"INV-2, line\nbreak"',
      '2026-11-01T10:00:00.000Z,acme,5,',
      '',
    ]);
  });
});

describe("the Worker's admin route", () => {
  it('answers the grants with the sales, `since` applied to both', async () => {
    const ledger = new SqliteCreditLedger(join(dir, 'worker.sqlite'), now);
    const app = new Hono().route(
      '/',
      createAdminRoute({
        publishers: parsePublishers([publisherEntry('acme', account())]),
        ledger,
        token: TOKEN,
        clientIp,
      }),
    );
    try {
      at('2026-11-01T09:00:00.000Z');
      await ledger.credit('acme', 4, 'INV-OLD');
      at('2026-11-02T09:00:00.000Z');
      await ledger.credit('acme', 6, 'INV-NEW');
      await ledger.reserve('acme', 'T1');
      await ledger.consume(sale('T1', '2026-11-02T10:00:00.000Z'));
      const ask = async (query = '') => {
        const answer = await app.request(`/p/acme/admin/statement${query}`, {
          headers: { Authorization: `Bearer ${TOKEN}` },
        });
        expect(answer.status).toBe(200);
        return (await answer.json()) as StatementAnswer;
      };
      const whole = await ask();
      expect(whole.grants).toEqual([
        { at: '2026-11-01T09:00:00.000Z', publisherId: 'acme', credits: 4, note: 'INV-OLD' },
        { at: '2026-11-02T09:00:00.000Z', publisherId: 'acme', credits: 6, note: 'INV-NEW' },
      ]);
      const since = await ask('?since=2026-11-02');
      expect(since.grants.map((g) => g.note)).toEqual(['INV-NEW']);
      expect(since.sales.map((s) => s.transaction)).toEqual(['T1']);
    } finally {
      ledger.close();
    }
  });
});

describe('emi publisher statement as the operator runs it', { timeout: 60_000 }, () => {
  let config: string;
  const payTo = account();
  const args = () => ['--config', config, '--state', dir];
  const run = (...more: string[]) => runEmi(dir, ['publisher', 'statement', 'acme', ...more, ...args()]);
  const hostile = 'INV-9\nforged: 0 credit(s)\u001b[2K';

  beforeEach(async () => {
    config = join(dir, 'emi.config.json');
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', payTo)] }));
    const ledger = new SqliteCreditLedger(join(dir, 'publishers.sqlite'), now);
    try {
      at('2026-11-01T09:00:00.000Z');
      await ledger.credit('acme', 10, 'INV-2026-001');
      at('2026-11-03T09:00:00.000Z');
      await ledger.credit('acme', -2, hostile);
      await ledger.reserve('acme', 'TX1');
      await ledger.consume({ ...sale('TX1', '2026-11-02T10:00:00.000Z'), payTo });
      await ledger.reserve('acme', 'TX2');
      await ledger.consume({ ...sale('TX2', '2026-11-04T10:00:00.000Z'), payTo });
    } finally {
      ledger.close();
    }
  });

  it('prints the grants after the sales, one line each, then the totals that add up with the balance', async () => {
    const done = await run();
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toBe('');
    const lines = done.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      'statement of publisher acme',
      expect.stringMatching(/^2026-11-02T10:00:00\.000Z {2}atlas .* tx TX1 {2}credits 1$/),
      expect.stringMatching(/^2026-11-04T10:00:00\.000Z {2}atlas .* tx TX2 {2}credits 1$/),
      '2 sale(s), 0.100000 USDC paid directly to the publisher, 2 credit(s) consumed',
      '2026-11-01T09:00:00.000Z  +10 credit(s)  "INV-2026-001"',
      '2026-11-03T09:00:00.000Z  -2 credit(s)  "INV-9\\nforged: 0 credit(s)\\u001b[2K"',
      '2 grant(s) and withdrawal(s): 10 credit(s) granted, 2 withdrawn',
      'credits: 10 granted - 2 withdrawn - 2 consumed by sales = 6 on the books (0 held by sales in progress, ' +
        '6 available now)',
    ]);
    expect(done.stdout).not.toContain('\u001b');
  });

  it('--since applies to the sales and the grants', async () => {
    const done = await run('--since', '2026-11-03');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('tx TX2');
    expect(done.stdout).not.toContain('tx TX1');
    expect(done.stdout).toContain('-2 credit(s)');
    expect(done.stdout).not.toContain('INV-2026-001');
    expect(done.stdout).toContain(
      'credits: 9 before 2026-11-03T00:00:00.000Z + 0 granted - 2 withdrawn - 1 consumed by sales = 6 on the books',
    );
  });

  it('--csv prints exactly the sales table; --csv --grants the grants table; --grants alone the grants in text', async () => {
    const csv = await run('--csv');
    expect(csv.code, csv.stderr).toBe(0);
    const rows = csv.stdout.split('\r\n');
    expect(rows[0]).toBe(statement.STATEMENT_COLUMNS.join(','));
    expect(rows.slice(1, 3).map((row) => row.split(',').at(-2))).toEqual(['TX1', 'TX2']);
    expect(rows).toHaveLength(4);
    expect(csv.stdout).not.toContain('INV-');

    const grantsCsv = await run('--csv', '--grants', '--since', '2026-11-02');
    expect(grantsCsv.code, grantsCsv.stderr).toBe(0);
    expect(grantsCsv.stdout).toBe(
      'time,publisher,credits,note\r\n' +
        `2026-11-03T09:00:00.000Z,acme,-2,"INV-9\nforged: 0 credit(s)\u001b[2K"\r\n`,
    );

    const text = await run('--grants');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trimEnd().split('\n')).toEqual([
      'grants of publisher acme',
      '2026-11-01T09:00:00.000Z  +10 credit(s)  "INV-2026-001"',
      '2026-11-03T09:00:00.000Z  -2 credit(s)  "INV-9\\nforged: 0 credit(s)\\u001b[2K"',
      '2 grant(s) and withdrawal(s): 10 credit(s) granted, 2 withdrawn',
    ]);
  });

  it('--worker: the grants the admin route answers', async () => {
    const ledger = new SqliteCreditLedger(join(dir, 'publishers.sqlite'), now);
    const app = new Hono().route(
      '/',
      createAdminRoute({
        publishers: parsePublishers([publisherEntry('acme', payTo)]),
        ledger,
        token: TOKEN,
        clientIp,
      }),
    );
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const worker = `http://127.0.0.1:${server.port}`;
      const done = await runEmi(dir, ['publisher', 'statement', 'acme', '--worker', worker], {
        EMI_ADMIN_TOKEN: TOKEN,
      });
      expect(done.code, done.stderr).toBe(0);
      expect(done.stderr).toBe('');
      expect(done.stdout).toContain('2026-11-01T09:00:00.000Z  +10 credit(s)  "INV-2026-001"');
      expect(done.stdout).toContain('= 6 on the books');
    } finally {
      await server.close();
      ledger.close();
    }
  });

  it('--worker of an older release (no grants in its answer): the sales, and one line on stderr; --grants exits 1', async () => {
    const answer: Omit<StatementAnswer, 'grants'> = {
      publisher: 'acme',
      since: null,
      balance: { publisherId: 'acme', balance: 4, reserved: 0, available: 4, sales: 1 },
      sales: [{ ...sale('TXOLD', '2026-11-02T10:00:00.000Z'), payTo }],
    };
    const old = new Hono().get('/p/acme/admin/statement', (c) => c.json(answer));
    const server = await listen(old, 0, '127.0.0.1');
    const worker = `http://127.0.0.1:${server.port}`;
    const line = `emi publisher: ${worker} lists no grants: it runs an older release (deploy this release to see them)`;
    const statementOf = (...more: string[]) =>
      runEmi(dir, ['publisher', 'statement', 'acme', '--worker', worker, ...more], {
        EMI_ADMIN_TOKEN: TOKEN,
      });
    try {
      const text = await statementOf();
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain('tx TXOLD');
      expect(text.stdout).toContain('1 sale(s), 0.050000 USDC paid directly to the publisher');
      expect(text.stdout).not.toContain('granted');
      expect(text.stderr.trimEnd().split('\n')).toEqual([line]);

      const csv = await statementOf('--csv');
      expect(csv.code, csv.stderr).toBe(0);
      expect(csv.stdout.split('\r\n')[0]).toBe(statement.STATEMENT_COLUMNS.join(','));
      expect(csv.stdout).toContain('TXOLD');

      for (const more of [['--grants'], ['--grants', '--csv']]) {
        const grants = await statementOf(...more);
        expect(grants.code, more.join(' ')).toBe(1);
        expect(grants.stdout).toBe('');
        expect(grants.stderr.trimEnd().split('\n')).toEqual([
          `emi: ${worker} lists no grants: it runs an older release (deploy this release to see them)`,
        ]);
      }
    } finally {
      await server.close();
    }
  });
});
