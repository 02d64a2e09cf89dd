// `emi publisher` as an operator runs it (bin/emi.js, the compiled CLI): a usage mistake exits 2 with one line that
// says what to mend and writes nothing; and an id whose books are in the ledger is never handed to a new publisher
// without saying so.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listen } from '../paywall-worker/node-listen.ts';
import { createAdminRoute } from '../paywall-worker/publishers/admin-route.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import { account, publisherEntry } from './publishers-harness.ts';

/** The admin route's token: long enough for it (operator-token.ts). */
const ADMIN_TOKEN = 'secret-operator-token-of-32-char';
/** One client for the admin route's wrong-token count (the Worker counts by CF-Connecting-IP). */
const clientIp = () => 'test-client';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/emi.js without blocking this process (the servers the command asks live here). */
function emi(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/emi.js', 'publisher', ...args], {
      env: {
        ...process.env,
        EMI_CONFIG: undefined,
        EMI_ADMIN_TOKEN: undefined,
        EMI_PAYTO: undefined,
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

let dir: string;
let config: string;
let ledgerFile: string;
const acmePayTo = account();

/** The Worker's admin route over `ledger`, configured with acme alone. */
const adminApp = (ledger: SqliteCreditLedger) =>
  new Hono().route(
    '/',
    createAdminRoute({
      publishers: parsePublishers([publisherEntry('acme', acmePayTo)]),
      ledger,
      token: ADMIN_TOKEN,
      clientIp,
    }),
  );

const addArgs = (id: string, payTo: string, ...more: string[]) => [
  'add',
  '--config',
  config,
  '--state',
  dir,
  '--id',
  id,
  '--name',
  `${id} Research`,
  '--pay-to',
  payTo,
  '--contact',
  `mailto:desk@${id}.example`,
  '--terms',
  `https://${id}.example/terms`,
  '--product',
  'atlas=0.05',
  ...more,
];

/** A sale on the books of `id`, as the worker records one. */
const sale = (id: string, payTo: string, transaction: string) => ({
  at: '2026-11-20T10:00:00.000Z',
  publisherId: id,
  product: 'atlas',
  path: `/p/${id}/api/x402-atlas.php`,
  priceUsd: '0.05',
  amountAtomic: '50000',
  payTo,
  payer: account(),
  transaction,
  network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
  credits: 1,
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-publishers-cli-'));
  config = join(dir, 'emi.config.json');
  ledgerFile = join(dir, 'publishers.sqlite');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('usage mistakes: exit 2, one line, nothing written', () => {
  it('add --credits -5 is refused before the entry is written (a new publisher has nothing to withdraw)', async () => {
    const run = await emi(addArgs('acme', acmePayTo, '--credits', '-5'));
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--credits wants a positive whole number');
    expect(run.stdout).toBe('');
    expect(existsSync(config)).toBe(false);
    expect(existsSync(ledgerFile)).toBe(false);
  });

  it('credit, close and statement of an id the configuration does not name, naming those it does', async () => {
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', acmePayTo)] }));
    const before = await readFile(config, 'utf8');
    for (const args of [
      ['credit', 'nobody', '5'],
      ['close', 'nobody'],
      ['statement', 'nobody'],
    ]) {
      const run = await emi([...args, '--config', config, '--state', dir]);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(
        /^emi: publisher "nobody" is not in .* \(configured: acme\)/,
      );
      expect(run.stdout).toBe('');
    }
    expect(await readFile(config, 'utf8')).toBe(before);
    expect(existsSync(ledgerFile)).toBe(false);
  });

  it('a statement of a publisher whose entry was deleted is still given (the ledger knows it)', async () => {
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', acmePayTo)] }));
    const ledger = new SqliteCreditLedger(ledgerFile);
    await ledger.credit('gone', 1);
    await ledger.consume(sale('gone', acmePayTo, 'TXGONE'));
    ledger.close();
    const run = await emi(['statement', 'gone', '--config', config, '--state', dir]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('tx TXGONE');
  });

  it('credit N that is zero, fractional or beyond the limit states the rule, in the words of the admin route', async () => {
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', acmePayTo)] }));
    const rule = 'a non-zero whole number of at most 999999999';
    for (const n of ['0', '-0', '1.5', '1e3', '007', '1000000000', '-1000000000']) {
      const run = await emi(['credit', 'acme', n, '--config', config, '--state', dir]);
      expect(run.status, n).toBe(2);
      expect(run.stderr, n).toContain(`N must be ${rule} (negative withdraws unused credits): ${n}`);
      expect(run.stderr, n).not.toContain('not a whole number');
    }
    expect(existsSync(ledgerFile)).toBe(false);
    const tooMany = await emi(addArgs('acme', acmePayTo, '--credits', '1000000000'));
    expect(tooMany.status).toBe(2);
    expect(tooMany.stderr).toContain('--credits wants a positive whole number of at most 999999999');

    // The limit itself is taken, both ways.
    const granted = await emi(['credit', 'acme', '999999999', '--config', config, '--state', dir]);
    expect(granted.stdout).toContain('publisher acme: 999999999 credit(s)');
    const withdrawn = await emi(['credit', 'acme', '-999999999', '--config', config, '--state', dir]);
    expect(withdrawn.stdout).toContain('publisher acme: 0 credit(s)');

    // The Worker's admin route states the same rule.
    const ledger = new SqliteCreditLedger(join(dir, 'worker.sqlite'));
    const publishers = parsePublishers([publisherEntry('acme', acmePayTo)]);
    const app = new Hono().route('/', createAdminRoute({ publishers, ledger, token: ADMIN_TOKEN, clientIp }));
    try {
      const answer = await app.request('/p/acme/admin/credits', {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ credits: 0 }),
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { message: string }).message).toContain(`N ${rule}`);
    } finally {
      ledger.close();
    }
  }, 30_000);

  it('credit without a configuration still checks that the id is a publisher id', async () => {
    const run = await emi(['credit', 'Acme Corp', '5', '--state', dir]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('not a publisher id (a slug: a-z, 0-9 and inner hyphens, 1-32 characters)');
    expect(existsSync(ledgerFile)).toBe(false);
  });

  it('credit without a configuration refuses an id the ledger has no books for (a typo), and credits one it has', async () => {
    const added = await emi(addArgs('acme', acmePayTo, '--credits', '1'));
    expect(added.status, added.stderr).toBe(0);

    const typo = await emi(['credit', 'acmee', '5', '--state', dir]);

    expect(typo.status).toBe(2);
    expect(typo.stderr.trim().split('\n')).toEqual([
      `emi: no configuration file (--config or EMI_CONFIG) to check "acmee" against, and ${ledgerFile} has no ` +
        'books for it (it has: acme): give --config; no credits were changed',
    ]);
    const known = await emi(['credit', 'acme', '5', '--state', dir]);
    expect(known.status, known.stderr).toBe(0);
    expect(known.stdout).toContain('publisher acme: 6 credit(s)');
    expect(known.stderr).toContain('"acme" is checked against its books only');
    const ledger = new SqliteCreditLedger(ledgerFile);
    try {
      expect((await ledger.list()).map((b) => b.publisherId)).toEqual(['acme']);
    } finally {
      ledger.close();
    }
  }, 30_000);

  it('--worker that is not a URL names the option', async () => {
    const run = await emi(['credit', 'acme', '5', '--worker', 'notaurl'], { EMI_ADMIN_TOKEN: 'secret' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("--worker wants a deployed Worker's origin");
    expect(run.stderr).toContain('notaurl');
  });

  it('--worker without EMI_ADMIN_TOKEN says what to set, and asks nothing', async () => {
    for (const args of [
      ['credit', 'acme', '5'],
      ['statement', 'acme'],
    ]) {
      const run = await emi([...args, '--worker', 'http://127.0.0.1:1']);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('set EMI_ADMIN_TOKEN');
      expect(run.stderr).not.toContain('cannot reach');
    }
  });

  it('add refuses a configuration whose publishers is not a list instead of overwriting it', async () => {
    const text = `${JSON.stringify({ publishers: { acme: publisherEntry('acme', acmePayTo) } })}\n`;
    await writeFile(config, text);
    const run = await emi(addArgs('other', account()));
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('is not a list');
    expect(await readFile(config, 'utf8')).toBe(text);
  });
});

describe('--worker answers', () => {
  it('a 404 says the admin route exists only on a Cloudflare Worker with EMI_ADMIN_TOKEN set', async () => {
    // The Node paywall (`emi serve`) has no admin route.
    const paywall = await createLocalPaywall({
      paidDir: dir,
      baseUrl: 'http://127.0.0.1:8080',
      devFacilitatorPort: 0,
    });
    const server = await listen(paywall.app, 0, '127.0.0.1');
    try {
      const run = await emi(['credit', 'acme', '5', '--worker', `http://127.0.0.1:${server.port}`], {
        EMI_ADMIN_TOKEN: 'secret',
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        'the admin route exists only on a Cloudflare Worker with publishers (EMI_PUBLISHERS) and the EMI_ADMIN_TOKEN secret set',
      );
    } finally {
      await server.close();
      await paywall.close();
    }
  }, 30_000);

  it("an id the Worker does not configure is a usage mistake naming the Worker's publishers", async () => {
    const ledger = new SqliteCreditLedger(ledgerFile);
    const app = adminApp(ledger);
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const worker = `http://127.0.0.1:${server.port}`;
      const run = await emi(['credit', 'nobody', '5', '--worker', worker], { EMI_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(
        `publisher "nobody" is not in this Worker's EMI_PUBLISHERS (configured: acme)`,
      );
      const credited = await emi(['credit', 'acme', '5', '--worker', worker], {
        EMI_ADMIN_TOKEN: ADMIN_TOKEN,
      });
      expect(credited.stdout).toContain('publisher acme: 5 credit(s)');
    } finally {
      await server.close();
      ledger.close();
    }
  }, 30_000);
});

describe('an id the ledger already knows', () => {
  it('add refuses it (exit 2, nothing written) unless --keep-ledger says it is the same publisher', async () => {
    const ledger = new SqliteCreditLedger(ledgerFile);
    await ledger.credit('acme', 3);
    await ledger.consume(sale('acme', acmePayTo, 'TXOLD'));
    ledger.close();
    await writeFile(config, '{}\n'); // the old entry was deleted

    const newcomer = account();
    const refused = await emi(addArgs('acme', newcomer, '--credits', '5'));
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(
      `publisher id "acme" already has books in ${ledgerFile}: 2 credit(s), 1 sale(s) paid to ${acmePayTo}`,
    );
    expect(refused.stderr).toContain('--keep-ledger');
    expect(await readFile(config, 'utf8')).toBe('{}\n');

    const kept = await emi(addArgs('acme', acmePayTo, '--keep-ledger', '--credits', '5'));
    expect(kept.status).toBe(0);
    expect(kept.stdout).toContain('publisher acme: 7 credit(s)');
    expect(
      parsePublishers((JSON.parse(await readFile(config, 'utf8')) as { publishers: unknown }).publishers),
    ).toHaveLength(1);
  });

  it('the text statement shows the address each sale paid', async () => {
    const ledger = new SqliteCreditLedger(ledgerFile);
    await ledger.credit('acme', 1);
    await ledger.consume(sale('acme', acmePayTo, 'TX1'));
    ledger.close();
    const run = await emi(['statement', 'acme', '--state', dir]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`pay_to ${acmePayTo}`);
  });
});

describe('a publisher removed from the configuration, with credits left in the ledger', () => {
  it('emi publisher credit withdraws them (a negative N) and refuses to add any (exit 2, nothing changed)', async () => {
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', acmePayTo)] }));
    const ledger = new SqliteCreditLedger(ledgerFile);
    await ledger.credit('gone', 5, 'bought before removal');
    ledger.close();
    const flags = ['--config', config, '--state', dir];

    const added = await emi(['credit', 'gone', '3', ...flags]);
    expect(added.status).toBe(2);
    expect(added.stderr).toMatch(
      /^emi: publisher "gone" is not in .* \(configured: acme\); no credits were changed \(its unused credits can be withdrawn, a negative N; none added\)/,
    );

    const withdrawn = await emi(['credit', 'gone', '-5', '--note', 'refunded', ...flags]);
    expect(withdrawn.status, withdrawn.stderr).toBe(0);
    expect(withdrawn.stdout).toContain('publisher gone: 0 credit(s)');

    // An id the ledger never knew is still a typo, whatever the sign.
    const typo = await emi(['credit', 'gnoe', '-1', ...flags]);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toMatch(
      /^emi: publisher "gnoe" is not in .* and has no books in .*\(which has: gone\)/,
    );
  });

  it("the Worker's admin route gives its statement and a withdrawal, refuses a grant (409), and 404s an id it never knew", async () => {
    const ledger = new SqliteCreditLedger(ledgerFile);
    await ledger.credit('gone', 5);
    const app = adminApp(ledger);
    const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const credit = (id: string, credits: number) =>
      app.request(`/p/${id}/admin/credits`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ credits }),
      });
    try {
      const statement = await app.request('/p/gone/admin/statement', { headers: auth });
      expect(statement.status).toBe(200);
      expect(((await statement.json()) as { balance: { balance: number } }).balance.balance).toBe(5);

      const grant = await credit('gone', 2);
      expect(grant.status).toBe(409);
      expect(await grant.json()).toMatchObject({ error: 'publisher_removed' });
      expect((await ledger.balance('gone')).balance).toBe(5);

      // Through `emi publisher credit --worker`: the grant is a usage mistake (exit 2), as the local command says.
      const server = await listen(app, 0, '127.0.0.1');
      try {
        const flags = ['--worker', `http://127.0.0.1:${server.port}`];
        const refused = await emi(['credit', 'gone', '2', ...flags], { EMI_ADMIN_TOKEN: ADMIN_TOKEN });
        expect(refused.status).toBe(2);
        expect(refused.stderr).toMatch(
          /^emi: http:\/\/127\.0\.0\.1:\d+: publisher "gone" is no longer in this Worker's EMI_PUBLISHERS: .*none added; nothing was changed$/m,
        );
        expect((await ledger.balance('gone')).balance).toBe(5);
      } finally {
        await server.close();
      }

      const withdrawal = await credit('gone', -5);
      expect(withdrawal.status).toBe(200);
      expect((await ledger.balance('gone')).balance).toBe(0);

      for (const answer of [
        await credit('never', -1),
        await app.request('/p/never/admin/statement', { headers: auth }),
      ]) {
        expect(answer.status).toBe(404);
        expect(await answer.json()).toMatchObject({ error: 'unknown_publisher' });
      }
    } finally {
      ledger.close();
    }
  });
});
