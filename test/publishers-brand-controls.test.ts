// A publisher's brand texts (its name and its links) reach the operator's terminal (`emi publisher list`), every
// 402's resource.description, the paid body's publisher block and the storefront. A C1 control (U+009B is CSI to a
// terminal, U+0085 a new line) or a bidirectional control (U+202E makes `evil\u202Egnp.exe` read `evilexe.png`) is
// refused wherever publishers are read, as the C0 controls always were: by `emi publisher add`, by `emi serve` at
// start and by the Worker's EMI_PUBLISHERS, each naming the field and the character.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { createSiteWorker } from '../paywall-worker/cloudflare/site-worker.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { errorLines, runEmi, startEmi } from './ops-cli.ts';
import { account, publisherEntry } from './publishers-harness.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-brand-controls-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PAY_TO = account();
/** The characters refused; none may be echoed back in a refusal either. */
const UNSAFE = /[\p{Cc}\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

const addArgs = (
  config: string,
  brand: { name?: string; contact?: string; terms?: string; logo?: string },
) => [
  'publisher',
  'add',
  '--config',
  config,
  '--state',
  join(dir, 'var'),
  '--id',
  'c1test',
  '--name',
  brand.name ?? 'C1 Test',
  '--pay-to',
  PAY_TO,
  '--contact',
  brand.contact ?? 'https://x.example',
  '--terms',
  brand.terms ?? 'https://x.example/t',
  ...(brand.logo ? ['--logo', brand.logo] : []),
  '--product',
  'atlas=0.02',
];

/** The one line `emi` prints for a refused brand text. */
const refusal = (id: string, field: string, found: string) =>
  `emi: publisher "${id}": brand.${field}: must not contain control characters or bidirectional controls: ` +
  `found ${found}`;

describe('emi publisher add refuses a brand text holding a control character, naming it', () => {
  it.each([
    [
      'a C1 CSI and NEL in the name',
      { name: 'Evil\u009b31mRed\u0085x' },
      'name',
      'U+009B (a C1 control character) at character 5',
    ],
    ['a NEL in the name', { name: 'Evil\u0085x' }, 'name', 'U+0085 (a C1 control character) at character 5'],
    [
      'a right-to-left override in the name',
      { name: 'evil\u202egnp.exe' },
      'name',
      'U+202E RIGHT-TO-LEFT OVERRIDE at character 5',
    ],
    [
      'a left-to-right isolate in the name',
      { name: '\u2066Acme' },
      'name',
      'U+2066 LEFT-TO-RIGHT ISOLATE at character 1',
    ],
    [
      'a right-to-left mark in the name',
      { name: 'Acme\u200f' },
      'name',
      'U+200F RIGHT-TO-LEFT MARK at character 5',
    ],
    [
      'an Arabic letter mark in the name',
      { name: 'Ac\u061cme' },
      'name',
      'U+061C ARABIC LETTER MARK at character 3',
    ],
    [
      'a C0 escape in the name',
      { name: 'Acme\u001b[31m' },
      'name',
      'U+001B (a C0 control character) at character 5',
    ],
    [
      'an override in the terms link',
      { terms: 'https://x.example/t\u202e' },
      'termsUrl',
      'U+202E RIGHT-TO-LEFT OVERRIDE at character 20',
    ],
    [
      'a C1 control in the contact link',
      { contact: 'mailto:desk@x.example\u009b' },
      'contactUrl',
      'U+009B (a C1 control character) at character 22',
    ],
    [
      'an isolate in the logo link',
      { logo: 'https://x.example/\u2067logo.png' },
      'logoUrl',
      'U+2067 RIGHT-TO-LEFT ISOLATE at character 19',
    ],
  ])('%s: exit 2, one line, nothing written', async (_what, brand, field, found) => {
    const config = join(dir, `refused-${field}.json`);
    const run = await runEmi(dir, addArgs(config, brand));
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(2);
    expect(errorLines(run)).toEqual([refusal('c1test', field, found)]);
    expect(UNSAFE.test(run.stderr.replaceAll('\n', ''))).toBe(false); // the text itself is not echoed
    expect(run.stdout).toBe('');
    expect(existsSync(config)).toBe(false);
  });

  it('takes any script and emoji (joiners included), and lists the name as given', async () => {
    const config = join(dir, 'accepted.json');
    const name = 'Café 研究 שלום مرحبا 👩‍💻';
    const added = await runEmi(dir, addArgs(config, { name }));
    expect(added.code, added.stderr).toBe(0);
    const listed = await runEmi(dir, ['publisher', 'list', '--config', config, '--state', join(dir, 'var')]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`c1test  "${name}" pays ${PAY_TO}`);
  });
});

describe('a configuration written by hand', () => {
  it('still has blanks and line breaks at either end of the name dropped, not refused', () => {
    for (const name of ['Acme Research\n', '\tAcme Research ', '\u2028Acme Research']) {
      const entry = publisherEntry('acme', PAY_TO);
      const [publisher] = parsePublishers([{ ...entry, brand: { ...entry.brand, name } }]);
      expect(publisher?.brand.name).toBe('Acme Research');
    }
  });

  const handWritten = (name: string) =>
    JSON.stringify({
      publishers: [
        publisherEntry('acme', PAY_TO, { brand: { ...publisherEntry('acme', PAY_TO).brand, name } }),
      ],
    });

  it('stops emi serve at start, naming the publisher, the field and the character', async () => {
    const config = join(dir, 'serve.json');
    await writeFile(config, handWritten('evil\u202egnp.exe'));
    await mkdir(join(dir, 'dist'), { recursive: true });
    const args = ['serve', '--port', '0', '--dev-facilitator-port', '0', '--config', config];
    const serve = startEmi(dir, args, { EMI_STATE_DIR: join(dir, 'var') }, { timeoutMs: 20_000 });
    // Had it started, it is stopped once it has said so (rather than at the time-out).
    void serve.waitFor('MCP (streamable HTTP)').then(serve.stop, () => {});
    const run = await serve.done;
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(2);
    expect(errorLines(run)).toEqual([
      refusal('acme', 'name', 'U+202E RIGHT-TO-LEFT OVERRIDE at character 5'),
    ]);
    expect(run.stdout).not.toContain('/p/acme/');
  });

  it("closes the Worker's /p/ (EMI_PUBLISHERS, the same schema) with a 500 naming it", async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    // A ledger, so that nothing but the brand could close /p/.
    const ledger = new SqliteCreditLedger(join(dir, 'worker.sqlite'));
    try {
      const worker = createSiteWorker(
        () => new MemoryPaymentBook(),
        () => ledger,
      );
      const env = {
        EMI_PAYTO: account(),
        EMI_FACILITATOR_URL: 'http://127.0.0.1:1',
        EMI_BASE_URL: 'http://127.0.0.1:8080',
        PAID_KV: { get: async () => null },
        ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
        EMI_PUBLISHERS: handWritten('Evil\u009b31mRed\u0085x'),
      };
      for (const path of ['/p/acme/api/x402-atlas.php', '/p/acme/x402-buyer/']) {
        const response = await worker.fetch(new Request(`http://127.0.0.1:8080${path}`), env);
        expect(response.status, path).toBe(500);
        const body = PaywallErrorBody.parse(await response.json());
        expect(body.error).toBe('publishers_misconfigured');
        expect(`emi: ${body.message}`).toBe(
          refusal('acme', 'name', 'U+009B (a C1 control character) at character 5'),
        );
      }
    } finally {
      ledger.close();
      errors.mockRestore();
    }
  });
});
