// `emi buy` after the paid request went out: the answer can be a 504 (the facilitator answered the paywall too late,
// but the payment landed) or nothing at all (the connection dropped after the paywall settled). The buyer is charged
// either way, so `emi buy` must resend the SAME signed PAYMENT-SIGNATURE (never sign again) until the file comes, and
// hand the kept header over when it cannot. Real programs on loopback: the compiled `emi buy` and `emi paywall`, the
// development facilitator and its ledger behind a facilitator proxy that can submit late, and a proxy between
// `emi buy` and the paywall that can drop the connection once the paid answer is ready.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { BUY_EXIT_CODES } from '../paywall-worker/buy-command.ts';
import { resourceById, writePaidFixtures } from './paywall-harness.ts';
import { runEmi, startEmi } from './ops-cli.ts';
import type { Finished, Running } from './ops-cli.ts';

const resource = resourceById('paidMarketRegime');
const FUNDED = 1_000_000n; // what `emi buy` funds its development wallet with
const PAYWALL_TIMEOUT_MS = 2_000;
const LATE_SUBMIT_MS = 3_000; // beyond the paywall's timeout: it answers 504 while the payment lands

let work: string;
let chain: DevFacilitator;
let payTo: string;
/** The facilitator the paywall uses: the development one, whose next settle can be made to submit late. */
const facilitator = { url: '', lateSettles: 0, close: async () => {} };
/** Between `emi buy` and the paywall: records each PAYMENT-SIGNATURE and can drop the next paid answer. */
const site = { url: '', dropPaidAnswers: 0, signatures: [] as string[], server: null as Server | null };
let paywall: Running;
let paywallUrl = '';

/** Forwards a request to the paywall; drops the connection instead of answering when told to. */
async function forwardToPaywall(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const signature = req.headers['payment-signature'];
  if (typeof signature === 'string') site.signatures.push(signature);
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !['host', 'connection'].includes(name)),
  ) as Record<string, string>;
  const answer = await fetch(`${paywallUrl}${req.url ?? '/'}`, { headers });
  const body = Buffer.from(await answer.arrayBuffer());
  if (typeof signature === 'string' && site.dropPaidAnswers > 0) {
    site.dropPaidAnswers--;
    req.socket.destroy(); // the paywall has settled and answered; the buyer never hears it
    return;
  }
  const kept = [...answer.headers].filter(
    ([name]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name),
  );
  res.writeHead(answer.status, Object.fromEntries(kept));
  res.end(body);
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'emi-buy-retry-'));
  await writePaidFixtures(work);
  chain = await startDevFacilitator({ port: 0 });
  payTo = algosdk.generateAccount().addr.toString();
  chain.ledger.optIn(payTo);

  const app = new Hono();
  const forward = async (path: string, body: string) =>
    fetch(`${chain.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  app.get('/supported', () => fetch(`${chain.url}/supported`));
  app.post('/verify', async (c) => forward('/verify', await c.req.text()));
  app.post('/settle', async (c) => {
    const body = await c.req.text();
    if (facilitator.lateSettles > 0) {
      facilitator.lateSettles--;
      await new Promise((resolve) => setTimeout(resolve, LATE_SUBMIT_MS));
    }
    return forward('/settle', body);
  });
  const served = await listen(app, 0, '127.0.0.1');
  Object.assign(facilitator, { url: `http://127.0.0.1:${served.port}`, close: served.close });

  paywall = startEmi(work, ['paywall', '--port', '0', '--paid', work, '--state', join(work, 'var')], {
    EMI_PAYTO: payTo,
    EMI_FACILITATOR_URL: facilitator.url,
    EMI_INDEXER_URL: chain.url,
    EMI_ALLOW_SIMULATED: '1',
    EMI_FACILITATOR_TIMEOUT_MS: String(PAYWALL_TIMEOUT_MS),
  });
  await paywall.waitFor(/x402 paywall listening on http:\/\/\S+/);
  paywallUrl = /x402 paywall listening on (http:\/\/\S+)/.exec(paywall.output())![1]!;

  site.server = createServer((req, res) => {
    forwardToPaywall(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => site.server!.listen(0, '127.0.0.1', resolve));
  site.url = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
}, 60_000);

afterEach(() => {
  facilitator.lateSettles = 0;
  site.dropPaidAnswers = 0;
  site.signatures = [];
});

afterAll(async () => {
  site.server?.closeAllConnections();
  await new Promise((resolve) => site.server?.close(resolve));
  paywall?.stop();
  await paywall?.done;
  await facilitator.close();
  await chain?.close();
  await rm(work, { recursive: true, force: true });
});

const buy = (...extra: string[]): Promise<Finished> =>
  runEmi(work, ['buy', resource.path, '--base-url', site.url, '--facilitator-url', chain.url, ...extra]);

/** The development wallets `emi buy` made (one per signature), from its `payer ADDRESS` lines. */
const payersOf = (run: Finished): string[] => [
  ...new Set([...run.stderr.matchAll(/payer ([A-Z2-7]{58})/g)].map((m) => m[1]!)),
];

/** What each wallet was charged on the development ledger. */
const charged = (payer: string): bigint => FUNDED - chain.ledger.assetBalance(payer);

/** The delivered file on stdout: the paid body of the resource. */
function expectDelivered(run: Finished): void {
  expect(run.code, run.stderr).toBe(BUY_EXIT_CODES.paid);
  expect(resource.schema.safeParse(JSON.parse(run.stdout)).success, run.stdout).toBe(true);
}

describe('emi buy resends the payment it signed, never a new one', () => {
  it('collects the file after a 504 whose payment landed late: one wallet, one charge', async () => {
    const before = chain.ledger.assetBalance(payTo);
    facilitator.lateSettles = 1;
    const run = await buy();
    expectDelivered(run);
    expect(run.stderr).toMatch(/504/); // it did meet the late answer, and said it resends
    expect(run.stderr).toMatch(/Resending the same PAYMENT-SIGNATURE/);
    expect(new Set(site.signatures).size).toBe(1);
    expect(site.signatures.length).toBeGreaterThan(1);
    const [payer, ...others] = payersOf(run);
    expect(others).toEqual([]);
    const price = chain.ledger.assetBalance(payTo) - before;
    expect(price).toBeGreaterThan(0n);
    expect(charged(payer!)).toBe(price);
  }, 120_000);

  it('collects the file after the site dropped the connection once the payment settled: one charge', async () => {
    const before = chain.ledger.assetBalance(payTo);
    site.dropPaidAnswers = 1;
    const run = await buy();
    expectDelivered(run);
    // The site, not the facilitator, dropped the connection: said so, never "cannot reach the facilitator".
    expect(run.stderr).not.toMatch(/cannot reach the development facilitator/);
    expect(run.stderr).toMatch(/dropped the connection after the payment was sent/);
    expect(site.signatures).toHaveLength(2);
    expect(new Set(site.signatures).size).toBe(1);
    const [payer, ...others] = payersOf(run);
    expect(others).toEqual([]);
    expect(charged(payer!)).toBe(chain.ledger.assetBalance(payTo) - before);
  }, 120_000);

  it('hands over the kept payment when it gives up, and collects with it later without paying again', async () => {
    const before = chain.ledger.assetBalance(payTo);
    site.dropPaidAnswers = 1;
    const first = await buy('--retry-for', '0');
    expect(first.code, first.stderr).toBe(BUY_EXIT_CODES.paymentKept);
    expect(first.stdout).toBe('');
    const command = /\n\s*(emi buy .*--payment-signature @(\S+))\s*$/m.exec(first.stderr);
    expect(command, first.stderr).not.toBeNull();
    const file = command![2]!;
    expect((await readFile(file, 'utf8')).trim()).toBe(site.signatures[0]);

    const later = await runEmi(work, [
      'buy',
      resource.path,
      '--base-url',
      site.url,
      '--payment-signature',
      `@${file}`,
    ]);
    expectDelivered(later);
    expect(new Set(site.signatures).size).toBe(1);
    const [payer, ...others] = payersOf(first);
    expect(others).toEqual([]);
    expect(payersOf(later)).toEqual([]); // no wallet made, nothing funded or signed
    expect(charged(payer!)).toBe(chain.ledger.assetBalance(payTo) - before);
    // Collected: the signed payment emi buy left in the temporary folder is removed, not left lying about.
    await expect(stat(dirname(file))).rejects.toThrow(/ENOENT/);
  }, 120_000);

  it('refuses an unusable --retry-for or --payment-signature before asking, funding or paying', async () => {
    const badRetry = await buy('--retry-for', 'soon');
    expect(badRetry.code, badRetry.stderr).toBe(BUY_EXIT_CODES.usage);
    expect(badRetry.stderr).toMatch(/--retry-for "soon" is not a whole number of seconds/);
    const badHeader = await buy('--payment-signature', 'not-a-payment');
    expect(badHeader.code, badHeader.stderr).toBe(BUY_EXIT_CODES.usage);
    expect(badHeader.stderr).toMatch(/--payment-signature is not a PAYMENT-SIGNATURE header/);
    const missing = await buy('--payment-signature', `@${join(work, 'no-such-file')}`);
    expect(missing.code, missing.stderr).toBe(BUY_EXIT_CODES.usage);
    expect(missing.stderr).toMatch(/--payment-signature: cannot read .*no-such-file/);
    expect(site.signatures).toEqual([]);
    expect([badRetry, badHeader, missing].flatMap(payersOf)).toEqual([]);
  }, 60_000);
});
