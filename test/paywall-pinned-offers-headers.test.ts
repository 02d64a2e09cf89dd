// Pins for the paywall rules a second mutation audit found no test guarding: an offer and a publisher's body follow
// the paid file's data generation (its time and its mode); a failed read of the facilitator's /supported is tried
// again; PAYMENT-SIGNATURE is decoded strictly (padding, UTF-8, version, shape, index, size); a payment's checks run
// in the order the README's table gives and name its network in either spelling; only a 503 carries a Retry-After
// wait; a refused payment is remembered (and the memory is bounded, oldest first); a stored arena vote keeps the
// nonce its wallet signed. Each case would pass if the rule it names were broken in the one line it guards.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { FacilitatorClient } from '@x402/core/server';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { createPaywallApp } from '../paywall-worker/app.ts';
import type { PaywallApp } from '../paywall-worker/app.ts';
import { createArenaVoteApp } from '../paywall-worker/arena-vote/app.ts';
import { formatVoteMessage } from '../paywall-worker/arena-vote/message.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { MAX_REFUSALS, createRefusalMemory } from '../paywall-worker/core/memories.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { MAX_PAYMENT_HEADER_CHARS } from '../paywall-worker/payment-header.ts';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { ALGORAND_MAINNET, ALGORAND_MAINNET_LONG } from '../schemas/paid/terms.ts';
import { MINUTE, T0 } from './arena-fixtures.ts';
import { signedDataVote } from './helpers/signed-vote.ts';
import { newBuyer, resourceById, startDevSale, writePaidFixtures } from './paywall-harness.ts';
import type { Buyer, DevSale } from './paywall-harness.ts';
import { account, publisherEntry, startPublisherStack } from './publishers-harness.ts';

const resource = resourceById('paidMarketRegime');
const PORT = 20180;

let devSale: DevSale;
let facilitator: DevFacilitator;
let paidDir: string;
let buyer: Buyer;

beforeAll(async () => {
  devSale = await startDevSale(PORT, 'emi-pinned-');
  ({ facilitator, paidDir, buyer } = devSale);
});
afterAll(async () => {
  await devSale?.close();
});
afterEach(async () => {
  await writePaidFixtures(paidDir);
});

/** The app in this process on the development facilitator; `getSupported` and `settle` are counted or replaced. */
function worker(options: { getSupported?: FacilitatorClient['getSupported'] } = {}) {
  const real = new HTTPFacilitatorClient({ url: facilitator.url });
  let settles = 0;
  const client: FacilitatorClient = {
    verify: (payload, requirements) => real.verify(payload, requirements),
    getSupported: options.getSupported ?? (() => real.getSupported()),
    settle: (payload, requirements) => {
      settles += 1;
      return real.settle(payload, requirements);
    },
  };
  const app = createPaywallApp(devSale.config(), { facilitatorClient: client, log: () => undefined });
  return { app, settleCalls: () => settles };
}

async function challengeOf(app: PaywallApp): Promise<{ paymentRequired: PaymentRequired; body: Body402 }> {
  const response = await app.request(resource.path);
  expect(response.status).toBe(402);
  return {
    paymentRequired: decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!),
    body: (await response.json()) as Body402,
  };
}

interface Body402 {
  error: string;
  message: string;
  data: { mode: string; generated_at: string };
}

const payFor = async (app: PaywallApp, who: Buyer = buyer): Promise<PaymentPayload> =>
  who.pay((await challengeOf(app)).paymentRequired);

/** The header for `payload`, with spaces after the JSON (still valid JSON) so that its base64 has `=` padding. */
function paddedHeader(payload: PaymentPayload): string {
  let json = JSON.stringify(payload);
  while (json.length % 3 === 0) json += ' ';
  const header = Buffer.from(json, 'utf8').toString('base64');
  expect(header.endsWith('=')).toBe(true);
  return header;
}

const sendHeader = (app: PaywallApp, header: string) =>
  app.request(resource.path, { headers: { 'PAYMENT-SIGNATURE': header } });

const sendPayload = (app: PaywallApp, payload: PaymentPayload) =>
  sendHeader(app, Buffer.from(JSON.stringify(payload), 'utf8').toString('base64'));

/** A header that must be refused: a 402 with `error` (and `message` matching), nothing settled, nothing paid. */
async function expectRefused(
  w: ReturnType<typeof worker>,
  header: string,
  error: string,
  message?: RegExp,
): Promise<void> {
  const before = facilitator.ledger.assetBalance(buyer.address);
  const response = await sendHeader(w.app, header);
  expect(response.status).toBe(402);
  const body = (await response.json()) as Body402;
  expect(body.error).toBe(error);
  if (message) expect(body.message).toMatch(message);
  expect(w.settleCalls()).toBe(0);
  expect(facilitator.ledger.assetBalance(buyer.address)).toBe(before);
}

const writeFile402 = async (change: (body: Record<string, unknown>) => void): Promise<void> => {
  const file = join(paidDir, resource.file);
  const body = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  change(body);
  await writeFile(file, JSON.stringify(body, null, 2));
};

// offer-cache.ts: an offer is one data generation's, and a generation is its time AND its mode (sameData).
describe('the offer follows the data generation', () => {
  it('states the new mode in the next 402 when the file is rewritten with the same generated_at', async () => {
    const { app } = worker();
    const first = (await challengeOf(app)).body;
    expect(first.data.mode).toBe('simulated');
    await writeFile402((body) => {
      body.source_mode = 'replay';
    });
    const next = (await challengeOf(app)).body;
    expect(next.data.generated_at).toBe(first.data.generated_at);
    expect(next.data.mode).toBe('replay');
  });
});

// offer-cache.ts: a failed server.initialize() (the facilitator's /supported) is forgotten and tried again, not kept
// as the answer to every request until a restart.
describe('a facilitator whose /supported fails once', () => {
  it('is asked again: the next unpaid request gets its 402', async () => {
    const real = new HTTPFacilitatorClient({ url: facilitator.url });
    let asked = 0;
    const { app } = worker({
      getSupported: () => {
        asked += 1;
        return asked === 1 ? Promise.reject(new Error('supported: 503')) : real.getSupported();
      },
    });
    const failed = await app.request(resource.path);
    expect(failed.status).not.toBe(402);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const recovered = await app.request(resource.path);
    expect(recovered.status).toBe(402);
    expect(asked).toBe(2);
  });
});

// payment-header.ts: the strict decoding of PAYMENT-SIGNATURE, each rule with a real payment that would otherwise
// be served (so a broken rule settles it) or with the refusal's own wording.
describe('PAYMENT-SIGNATURE decoding', () => {
  it('refuses a real payment whose base64 lost its `=` padding (STRICT_BASE64)', async () => {
    const w = worker();
    const header = paddedHeader(await payFor(w.app)).replace(/=+$/, '');
    await expectRefused(w, header, 'invalid_payload', /not padded standard base64/);
  });

  it('refuses JSON whose string holds the raw byte 0xff, as not UTF-8 (fatal decoding)', async () => {
    const w = worker();
    const payload = await payFor(w.app);
    const json = JSON.stringify({ ...payload, resource: { ...payload.resource, note: '@@' } });
    const [head, tail] = json.split('@@') as [string, string];
    const bytes = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
    await expectRefused(w, bytes.toString('base64'), 'invalid_payload', /does not decode to UTF-8 JSON/);
  });

  it('refuses a payment without x402Version as invalid_payload, not invalid_x402_version', async () => {
    const w = worker();
    const payload: Record<string, unknown> = { ...(await payFor(w.app)) };
    delete payload.x402Version;
    const header = Buffer.from(JSON.stringify(payload)).toString('base64');
    await expectRefused(w, header, 'invalid_payload', /not an x402 v2 payment \(x402Version/);
  });

  it('refuses a paymentIndex outside its paymentGroup', async () => {
    const w = worker();
    const payload = await payFor(w.app);
    const { paymentGroup } = payload.payload as { paymentGroup: string[] };
    const header = Buffer.from(
      JSON.stringify({ ...payload, payload: { paymentGroup: [paymentGroup[1]], paymentIndex: 1 } }),
    ).toString('base64');
    await expectRefused(w, header, 'invalid_payload', /paymentIndex points outside paymentGroup/);
  });

  it('refuses an extra key in `payload` (a strict object)', async () => {
    const w = worker();
    const payload = await payFor(w.app);
    const header = Buffer.from(
      JSON.stringify({ ...payload, payload: { ...payload.payload, memo: 'extra' } }),
    ).toString('base64');
    await expectRefused(w, header, 'invalid_payload', /payload/);
  });

  it(`serves a real payment whose header is exactly MAX_PAYMENT_HEADER_CHARS (${MAX_PAYMENT_HEADER_CHARS}) long`, async () => {
    const w = worker();
    const json = JSON.stringify(await payFor(w.app));
    const bytes = (MAX_PAYMENT_HEADER_CHARS / 4) * 3;
    expect(json.length).toBeLessThan(bytes);
    const header = Buffer.from(json.padEnd(bytes, ' ')).toString('base64');
    expect(header).toHaveLength(MAX_PAYMENT_HEADER_CHARS);
    const response = await sendHeader(w.app, header);
    expect(response.status).toBe(200);
    expect(w.settleCalls()).toBe(1);
  });
});

// payment-check.ts: the checks run in the README's order (match, path, extensions), and a mismatch is worded with the
// network compared in its short form (both CAIP-2 spellings name the same network).
describe('the order and codes of the payment checks', () => {
  it('calls a payment for another path with a tampered echo payment_for_another_resource', async () => {
    const w = worker();
    const payload = await payFor(w.app);
    const bazaar = structuredClone(payload.extensions?.bazaar) as { info: { input: { method: string } } };
    bazaar.info.input.method = 'DELETE';
    const other = resourceById('paidMainBrain');
    const header = Buffer.from(
      JSON.stringify({
        ...payload,
        resource: { ...payload.resource, url: `http://127.0.0.1:8080${other.path}` },
        extensions: { ...payload.extensions, bazaar },
      }),
    ).toString('base64');
    await expectRefused(w, header, 'payment_for_another_resource');
  });

  it('calls a changed amount on the other spelling of the offered network payment_does_not_match', async () => {
    const w = worker();
    const payload = await payFor(w.app);
    expect(payload.accepted.network).toBe(ALGORAND_MAINNET);
    const accepted = { ...payload.accepted, amount: '1', network: ALGORAND_MAINNET_LONG };
    const header = Buffer.from(JSON.stringify({ ...payload, accepted })).toString('base64');
    await expectRefused(w, header, 'payment_does_not_match');
  });
});

// answers.ts: only a 503 asks to retry the same request after a wait; a 404 or a 405 is final.
describe('retry_after_seconds', () => {
  it('is null in a 404 and a 405 body', async () => {
    const { app } = worker();
    const missing = await app.request('/api/x402-nothing-here.php');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'not_found', retry_after_seconds: null });
    const post = await app.request(resource.path, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(await post.json()).toMatchObject({ error: 'method_not_allowed', retry_after_seconds: null });
  });
});

// memories.ts: refusals are remembered per presentation (not only the last one), within a bound that forgets the
// oldest first.
describe('the refusal memory', () => {
  it('answers a refused payment again from memory after another payment was refused', async () => {
    const w = worker();
    const poorA = await newBuyer(facilitator, '1'); // 1 atomic unit, the price is 10000
    const poorB = await newBuyer(facilitator, '1');
    const a = await payFor(w.app, poorA);
    const b = await payFor(w.app, poorB);
    expect((await sendPayload(w.app, a)).status).toBe(402);
    expect((await sendPayload(w.app, b)).status).toBe(402);
    expect(w.settleCalls()).toBe(2);
    const again = await sendPayload(w.app, a);
    expect(again.status).toBe(402);
    expect(((await again.json()) as Body402).error).toBe('invalid_exact_avm_simulation_failed');
    expect(w.settleCalls()).toBe(2);
  });

  it(`holds at most MAX_REFUSALS (${MAX_REFUSALS}) presentations, forgetting the oldest first`, () => {
    const memory = createRefusalMemory({ now: () => 0 });
    const verdict: SettleResponse = {
      success: false,
      errorReason: 'refused',
      transaction: '',
      network: ALGORAND_MAINNET,
    };
    for (let i = 0; i <= MAX_REFUSALS; i++) memory.remember(`p${i}`, { ...verdict, transaction: `t${i}` });
    expect(memory.known('p0')).toBeNull();
    expect(memory.known('p1')).toMatchObject({ transaction: 't1' });
    expect(memory.known(`p${MAX_REFUSALS}`)).toMatchObject({ transaction: `t${MAX_REFUSALS}` });
  });
});

// offer-cache.ts: a publisher's body (its file plus the publisher block) is built per data generation: a buyer who
// pays after the file changed gets the new generation, not the first body cached for the path.
describe('a publisher path after its paid file changed', () => {
  const REPORT = '/p/acme/api/x402-atlas-human-report.php';
  let stack: Awaited<ReturnType<typeof startPublisherStack>>;
  beforeAll(async () => {
    stack = await startPublisherStack(() => [publisherEntry('acme', account())], { acme: 5 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const buy = async (who: Buyer) => {
    const challenge = await fetch(stack.url(REPORT));
    expect(challenge.status).toBe(402);
    const payload = await who.pay(decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!));
    const response = await fetch(stack.url(REPORT), {
      headers: { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { updated: string; publisher?: { id: string } };
  };

  it('serves the new generation, still with the publisher block', async () => {
    const who = await newBuyer(stack.facilitator);
    await writePaidFixtures(stack.paidDir, 60);
    const first = await buy(who);
    await writePaidFixtures(stack.paidDir, 0);
    const second = await buy(who);
    expect(second.updated).not.toBe(first.updated);
    expect(Date.parse(second.updated)).toBeGreaterThan(Date.parse(first.updated));
    expect(second.publisher).toMatchObject({ id: 'acme' });
    expect(first.publisher).toMatchObject({ id: 'acme' });
  });
});

// arena-vote/app.ts: the stored (and exported) vote keeps the nonce its wallet signed.
describe('an accepted arena vote', () => {
  it('is exported with the nonce of the signed message', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-pinned-vote-'));
    const votes = openSqliteVoteStore(join(dir, 'arena-votes.sqlite'));
    try {
      const site = 'https://arena.example';
      const round = roundAt(T0);
      const app = createArenaVoteApp({
        store: votes,
        site,
        now: () => T0 - 10 * MINUTE,
        clientIp: () => 'ip-1',
      });
      const nonce = 'pinned-nonce-0123456789';
      const message = formatVoteMessage({
        site,
        asset: round.asset,
        prediction: 'BULLISH',
        roundId: round.id,
        nonce,
      });
      const response = await app.request('/arena/vote', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signedDataVote(algosdk.generateAccount(), message)),
      });
      expect(response.status).toBe(201);
      const exported = await votes.since(0, 10);
      expect(exported).toHaveLength(1);
      expect(exported[0]?.nonce).toBe(nonce);
    } finally {
      votes.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
