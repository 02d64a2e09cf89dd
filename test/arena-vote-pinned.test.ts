// Pins the vote endpoint's published rules, each where a mutation audit found no test that would notice it broken:
// a transaction-form vote whose signature does not match its transaction, and the transaction's shape (to the voter,
// amount 0, no close, no rekey), refused 401; the signed text's exact format (line count, field names, prediction
// list, nonce) refused 400 before anything is stored; the body size limit (declared and counted, exactly 4096 bytes
// accepted) checked before the media type and the per-IP count; Retry-After rounded up; the export cursor a whole
// number; and the generator's votes read-through time, which never moves back. These are the rules a voter and an
// operator are told: a vote that breaks them must never be stored (a vote stored then refused at import told the
// voter something untrue). In process (app.request), no port.
import algosdk from 'algosdk';
import { afterEach, describe, expect, it } from 'vitest';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { setVotesReadThrough, votesReadThrough } from '../generator/state/votes.ts';
import { createArenaVoteApp, type ArenaVoteOptions } from '../paywall-worker/arena-vote/app.ts';
import { formatVoteMessage } from '../paywall-worker/arena-vote/message.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { MIN_OPERATOR_TOKEN_LENGTH } from '../paywall-worker/operator-token.ts';
import { MINUTE, T0 } from './arena-fixtures.ts';
import { signedDataVote } from './helpers/signed-vote.ts';

const SITE = 'https://arena.example';
const ROUND = roundAt(T0);
const OPEN = T0 - 10 * MINUTE; // ROUND takes votes then
const TOKEN = 't'.repeat(MIN_OPERATOR_TOKEN_LENGTH);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const start = (limits?: ArenaVoteOptions['limits']) => {
  const votes = openSqliteVoteStore(':memory:');
  cleanups.push(() => votes.close());
  let now = OPEN;
  const app = createArenaVoteApp({
    store: votes,
    site: SITE,
    now: () => now,
    ...(limits ? { limits } : {}),
    exportToken: TOKEN,
    clientIp: () => 'ip-1',
  });
  const post = async (body: string | object, headers: Record<string, string> = {}) => {
    const res = await app.request('/arena/vote', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), json: await res.json() };
  };
  return {
    app,
    post,
    setNow: (ms: number) => (now = ms),
    stored: async () => (await votes.since(0, 1000)).length,
  };
};

/** The product's vote text for ROUND with a nonce of our choosing. */
const text = (nonce = 'nonce-0123456789abcdef') =>
  formatVoteMessage({ site: SITE, asset: ROUND.asset, prediction: 'BULLISH', roundId: ROUND.id, nonce });

const TESTNET = {
  fee: 0,
  minFee: 1000,
  firstValid: 1,
  lastValid: 2,
  genesisID: 'testnet-v1.0',
  genesisHash: algosdk.base64ToBytes('SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI='),
};

type PaymentShape = Partial<{
  receiver: algosdk.Address;
  amount: number;
  rekeyTo: algosdk.Address;
  closeRemainderTo: algosdk.Address;
}>;

/** The unsigned vote transaction: a zero payment to the voter itself, the message its note, long expired. */
const voteTxn = (account: algosdk.Account, message: string, shape: PaymentShape = {}) =>
  algosdk.makePaymentTxnWithSuggestedParamsFromObject({
    sender: account.addr,
    receiver: account.addr,
    amount: 0,
    note: new TextEncoder().encode(message),
    suggestedParams: TESTNET,
    ...shape,
  });

const txnBody = (signed: Uint8Array) => ({ form: 'transaction', signed_transaction: b64(signed) });

describe('transaction-form votes: the signature must match the transaction (verify.ts)', () => {
  it('refuses 401 a transaction carrying the signature of another transaction by the same wallet, storing nothing', async () => {
    const h = start();
    const alice = algosdk.generateAccount();
    const sigA = algosdk.decodeSignedTransaction(
      voteTxn(alice, text('nonce-aaaaaaaaaaaaaaaa')).signTxn(alice.sk),
    ).sig!;
    const txnB = voteTxn(alice, text('nonce-bbbbbbbbbbbbbbbb'));
    // B with A's signature: same signer, no sgnr, so only the signature check itself can refuse it.
    const swapped = algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: txnB, sig: sigA }));
    expect(await h.post(txnBody(swapped))).toMatchObject({
      status: 401,
      json: { error: 'bad_signature', message: 'the signature does not match' },
    });
    expect(await h.stored()).toBe(0);
    // The same transaction B signed by alice herself is accepted: the refusal above was the signature's.
    expect((await h.post(txnBody(txnB.signTxn(alice.sk)))).status).toBe(201);
    expect(await h.stored()).toBe(1);
  });

  it('refuses 401 a signed transaction that is not a zero payment from the voter to the voter, with its own sentence', async () => {
    const h = start();
    const other = algosdk.generateAccount().addr;
    const variants: Array<[string, PaymentShape, string]> = [
      ['to someone else', { receiver: other }, 'the payment must go from the voter to the voter'],
      ['of 1 microAlgo', { amount: 1 }, 'the payment amount must be 0'],
      ['rekeying the account', { rekeyTo: other }, 'the transaction must not close or rekey the account'],
      [
        'closing the account',
        { closeRemainderTo: other },
        'the transaction must not close or rekey the account',
      ],
    ];
    const seen: Record<string, unknown> = {};
    for (const [name, shape] of variants) {
      const voter = algosdk.generateAccount();
      const res = await h.post(txnBody(voteTxn(voter, text(), shape).signTxn(voter.sk)));
      seen[name] = { status: res.status, error: res.json.error, message: res.json.message };
    }
    expect(seen).toEqual(
      Object.fromEntries(
        variants.map(([name, , message]) => [name, { status: 401, error: 'bad_signature', message }]),
      ),
    );
    expect(await h.stored()).toBe(0);
  });
});

describe('data-form votes: a signature of the wrong length (verify.ts)', () => {
  it('refuses 401 bad_signature a 10-byte signature (not a 500)', async () => {
    const h = start();
    const alice = algosdk.generateAccount();
    const vote = { ...signedDataVote(alice, text()), signature: b64(new Uint8Array(10).fill(7)) };
    expect(await h.post(vote)).toMatchObject({
      status: 401,
      json: { error: 'bad_signature', message: 'signature must be 64 bytes' },
    });
    expect(await h.stored()).toBe(0);
  });
});

describe('the signed text must be exactly the published format (message.ts)', () => {
  const refusals: Array<[string, string, string]> = [
    [
      'an extra line',
      `${text()}\nextra:1`,
      'the signed message must be "emi-arena-vote/v1" followed by site, asset, prediction, round, nonce lines',
    ],
    [
      'a prediction outside the list',
      text().replace('prediction:BULLISH', 'prediction:MOON'),
      'prediction must be one of BULLISH, BEARISH, NEUTRAL',
    ],
    [
      'a nonce with a character outside A-Z a-z 0-9 - _',
      text('nonce.0123456789abcdef'),
      'nonce must be 16 to 64 characters of A-Z, a-z, 0-9, "-" or "_"',
    ],
    [
      'a nonce of 15 characters',
      text('a'.repeat(15)),
      'nonce must be 16 to 64 characters of A-Z, a-z, 0-9, "-" or "_"',
    ],
    [
      'a nonce of 65 characters',
      text('a'.repeat(65)),
      'nonce must be 16 to 64 characters of A-Z, a-z, 0-9, "-" or "_"',
    ],
    [
      '"sitx:" for "site:"',
      text().replace('\nsite:', '\nsitx:'),
      'line 2 of the signed message must start with "site:"',
    ],
    [
      '"assex:" for "asset:"',
      text().replace('\nasset:', '\nassex:'),
      'line 3 of the signed message must start with "asset:"',
    ],
    [
      '"predictiox:" for "prediction:"',
      text().replace('\nprediction:', '\npredictiox:'),
      'line 4 of the signed message must start with "prediction:"',
    ],
    [
      '"rounx:" for "round:"',
      text().replace('\nround:', '\nrounx:'),
      'line 5 of the signed message must start with "round:"',
    ],
    [
      '"noncx:" for "nonce:"',
      text().replace('\nnonce:', '\nnoncx:'),
      'line 6 of the signed message must start with "nonce:"',
    ],
  ];

  it.each(refusals)('refuses 400 bad_message, storing nothing: %s', async (_name, message, sentence) => {
    const h = start();
    const res = await h.post(signedDataVote(algosdk.generateAccount(), message));
    expect(res).toMatchObject({ status: 400, json: { error: 'bad_message', message: sentence } });
    expect(await h.stored()).toBe(0);
  });

  it('accepts nonces of exactly 16 and exactly 64 characters of the allowed alphabet', async () => {
    const h = start();
    const at16 = await h.post(signedDataVote(algosdk.generateAccount(), text('Az09-_Az09-_Az09')));
    const at64 = await h.post(signedDataVote(algosdk.generateAccount(), text('Zz9_-'.repeat(12) + 'abcd')));
    expect([at16.status, at64.status]).toEqual([201, 201]);
    expect(await h.stored()).toBe(2);
  });
});

describe('the body size limit comes first (app.ts)', () => {
  it('refuses 413 a declared Content-Length of 5000 even when the media type is wrong', async () => {
    const h = start();
    const res = await h.post('x'.repeat(5000), { 'content-type': 'text/plain', 'content-length': '5000' });
    expect(res).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
  });

  it('does not count oversized posts against the per-IP limit: after 31 of them a valid vote is accepted', async () => {
    const h = start(); // the default limits: 30 per IP per minute
    const oversized = JSON.stringify({ form: 'data', pad: 'x'.repeat(5000) });
    const length = String(Buffer.byteLength(oversized));
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++)
      statuses.push((await h.post(oversized, { 'content-length': length })).status);
    expect(statuses).toEqual(Array<number>(31).fill(413));
    expect((await h.post(signedDataVote(algosdk.generateAccount(), text()))).status).toBe(201);
  });

  /** A valid vote padded with trailing spaces (still the same JSON) to exactly `size` bytes. */
  const paddedVote = (size: number) => {
    const json = JSON.stringify(signedDataVote(algosdk.generateAccount(), text()));
    return json + ' '.repeat(size - Buffer.byteLength(json));
  };
  /** A body sent as one stream chunk with no Content-Length: counted as it is read. */
  const streamed = (body: string) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });

  it('accepts a body of exactly 4096 bytes, declared or not, and refuses 4097 bytes 413', async () => {
    const h = start();
    const declared = await h.post(paddedVote(4096), { 'content-length': '4096' });
    expect(declared.status).toBe(201);
    const chunked = (body: string) =>
      h.app.request('/arena/vote', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: streamed(body),
        duplex: 'half',
      } as RequestInit);
    const undeclared = await chunked(paddedVote(4096));
    expect(undeclared.status).toBe(201);
    expect(await h.stored()).toBe(2);

    const declaredOver = await h.post(paddedVote(4097), { 'content-length': '4097' });
    expect(declaredOver).toMatchObject({ status: 413, json: { error: 'payload_too_large' } });
    const undeclaredOver = await chunked(paddedVote(4097));
    expect(undeclaredOver.status).toBe(413);
    expect(await undeclaredOver.json()).toMatchObject({ error: 'payload_too_large' });
    expect(await h.stored()).toBe(2);
  });
});

describe('the per-IP limit and its Retry-After (app.ts, rate-limit.ts)', () => {
  const ONE_PER_MINUTE = { max: 1, windowMs: 60_000 };
  const limits = { perIp: ONE_PER_MINUTE, perAddress: { max: 100, windowMs: 60_000 } };

  it.each([
    [59_500, '1'],
    [59_600, '1'],
    [58_900, '2'],
    [1_000, '59'],
  ])(
    'a second post %i ms into the window is refused 429 with Retry-After %s (seconds left, rounded up)',
    async (after, retryAfter) => {
      const h = start(limits);
      expect((await h.post(signedDataVote(algosdk.generateAccount(), text()))).status).toBe(201);
      h.setNow(OPEN + after);
      const second = await h.post(signedDataVote(algosdk.generateAccount(), text()));
      expect(second).toMatchObject({ status: 429, retryAfter, json: { error: 'rate_limited' } });
      expect(await h.stored()).toBe(1);
    },
  );
});

describe('the export cursor (app.ts)', () => {
  it('refuses after=-1 with 400 and answers after=0', async () => {
    const h = start();
    const get = (query: string) =>
      h.app.request(`/arena/votes/export${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const negative = await get('?after=-1');
    expect(negative.status).toBe(400);
    expect(await negative.json()).toMatchObject({ success: false, error: 'after must be a whole number' });
    expect((await get('?after=0')).status).toBe(200);
  });
});

describe("the generator's votes read-through time (generator/state/votes.ts)", () => {
  it('never moves backwards: 2000 then 1000 stays 2000; a later time moves it on', () => {
    const store = openArenaStore(':memory:');
    cleanups.push(() => store.close());
    expect(votesReadThrough(store, 'endpoint-a')).toBeNull();
    setVotesReadThrough(store, 'endpoint-a', 2000);
    setVotesReadThrough(store, 'endpoint-a', 1000);
    expect(votesReadThrough(store, 'endpoint-a')).toBe(2000);
    setVotesReadThrough(store, 'endpoint-a', 3000);
    expect(votesReadThrough(store, 'endpoint-a')).toBe(3000);
    // Each source keeps its own.
    expect(votesReadThrough(store, 'endpoint-b')).toBeNull();
  });
});
