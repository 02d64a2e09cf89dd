// POST /arena/vote end to end: a real signature from a generated Algorand account, accepted once and imported by
// the next generator step; replays, bad signatures, closed rounds, floods, malformed and oversized bodies are
// refused with 4xx JSON and never reach the store. Served on 127.0.0.1 (port 0) through Node's adapter.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import algosdk from 'algosdk';
import { afterEach, describe, expect, it } from 'vitest';
import { DISCLAIMER } from '../schemas/common.ts';
import { roundAt, roundByIndex } from '../generator/engines/arena/rounds.ts';
import { VOTE_GRACE_SECONDS } from '../generator/engines/arena/rules.ts';
import { importEndpointVotes } from '../generator/state/endpoint-votes.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { createArenaVoteApp, MAX_VOTE_BODY_BYTES } from '../paywall-worker/arena-vote/app.ts';
import { openSqliteVoteStore, type SqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { MIN_OPERATOR_TOKEN_LENGTH } from '../paywall-worker/operator-token.ts';
import { MINUTE, step, T0 } from './arena-fixtures.ts';
import { signedDataVote, voteMessage, type VoteText } from './helpers/signed-vote.ts';
import { tempDirSync } from './helpers/temp-dir.ts';

const SITE = 'https://arena.example';
const ROUND = roundAt(T0);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const messageFor = (over: Partial<VoteText> = {}): string =>
  voteMessage({ site: SITE, round: ROUND, ...over });

const dataVote = (account: algosdk.Account, message = messageFor()) => signedDataVote(account, message);

/** The transaction form, built here only: its validity window varies (the page's voteTransaction fixes it). */
const txnVote = (account: algosdk.Account, message = messageFor(), lastValid = 2) => {
  const txn = algosdk.makePaymentTxnWithSuggestedParamsFromObject({
    sender: account.addr,
    receiver: account.addr,
    amount: 0,
    note: new TextEncoder().encode(message),
    suggestedParams: {
      fee: 0,
      minFee: 1000,
      firstValid: 1,
      lastValid,
      genesisID: 'testnet-v1.0',
      genesisHash: algosdk.base64ToBytes('SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI='),
    },
  });
  return { form: 'transaction', signed_transaction: b64(txn.signTxn(account.sk)) };
};

interface Harness {
  url: string;
  votes: SqliteVoteStore;
  file: string;
  setNow(ms: number): void;
  post(
    body: unknown,
    init?: { ip?: string; raw?: string; type?: string },
  ): Promise<{ status: number; json: Record<string, unknown> }>;
}

const start = async (limits?: Parameters<typeof createArenaVoteApp>[0]['limits']): Promise<Harness> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arena-vote-'));
  const file = path.join(dir, 'arena-votes.sqlite');
  const votes = openSqliteVoteStore(file);
  let now = T0 - 10 * MINUTE;
  const app = createArenaVoteApp({
    store: votes,
    site: SITE,
    now: () => now,
    ...(limits ? { limits } : {}),
    clientIp: (c) => c.req.header('x-test-ip') ?? 'ip-1',
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const { port } = server.address() as { port: number };
  cleanups.push(
    () => new Promise<void>((r) => server.close(() => r())),
    () => votes.close(),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    votes,
    file,
    setNow: (ms) => (now = ms),
    post: async (body, init = {}) => {
      const res = await fetch(`http://127.0.0.1:${port}/arena/vote`, {
        method: 'POST',
        headers: { 'content-type': init.type ?? 'application/json', 'x-test-ip': init.ip ?? 'ip-1' },
        body: init.raw ?? JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    },
  };
};

const stored = async (h: Harness) => (await h.votes.since(0, 1000)).length;

describe('POST /arena/vote', () => {
  it('accepts a signed vote once (both forms) and the next run imports it into human consensus', async () => {
    const h = await start();
    const alice = algosdk.generateAccount();
    const bob = algosdk.generateAccount();
    const aliceVote = dataVote(alice);
    const first = await h.post(aliceVote);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ success: true, round_id: ROUND.id, address: alice.addr.toString() });
    expect((await h.post(txnVote(bob, messageFor({ prediction: 'BEARISH' })))).status).toBe(201);

    // The same signed vote again: a replay.
    const replay = await h.post(aliceVote);
    expect(replay).toMatchObject({ status: 409, json: { error: 'replayed_signature' } });
    // A new signature by the same wallet for the same round: one vote per wallet per round.
    const again = await h.post(dataVote(alice, messageFor({ prediction: 'NEUTRAL' })));
    expect(again).toMatchObject({ status: 409, json: { error: 'already_voted' } });
    expect(await stored(h)).toBe(2);

    // The next generator run imports both, once.
    const dir = tempDirSync('emi-arena-store-');
    const arena = openArenaStore(path.join(dir, 'arena.sqlite'));
    cleanups.push(() => arena.close());
    expect(await importEndpointVotes(arena, h.file, T0 + MINUTE)).toBe(2);
    expect(await importEndpointVotes(arena, h.file, T0 + 2 * MINUTE)).toBe(0);
    const body = step(arena, T0 + 2 * MINUTE, { mode: 'live', seed: null }).humanConsensus;
    expect(body.human_consensus).toMatchObject({ total: 2, bullish: 1, bearish: 1, call_status: 'tie' });
  });

  it('refuses bad signatures, wrong content and closed rounds without storing anything', async () => {
    const h = await start();
    const alice = algosdk.generateAccount();
    const mallory = algosdk.generateAccount();
    const forged = { ...dataVote(mallory), address: alice.addr.toString() };
    expect(await h.post(forged)).toMatchObject({ status: 401, json: { error: 'bad_signature' } });
    const tampered = { ...dataVote(alice), message: messageFor({ prediction: 'BEARISH' }) };
    expect(await h.post(tampered)).toMatchObject({ status: 401, json: { error: 'bad_signature' } });
    const confirmable = txnVote(alice, messageFor(), 50_000_000);
    expect(await h.post(confirmable)).toMatchObject({ status: 401, json: { error: 'bad_signature' } });
    expect(await h.post(dataVote(alice, messageFor({ site: 'https://other.example' })))).toMatchObject({
      status: 400,
      json: { error: 'wrong_site' },
    });
    const other = roundByIndex(ROUND.index + 1);
    expect(
      await h.post(dataVote(alice, messageFor({ round: { id: other.id, asset: ROUND.asset } }))),
    ).toMatchObject({
      status: 400,
      json: { error: 'unknown_round' },
    });
    h.setNow(ROUND.start + VOTE_GRACE_SECONDS * 1000);
    expect(await h.post(dataVote(alice))).toMatchObject({ status: 409, json: { error: 'round_closed' } });
    expect(await stored(h)).toBe(0);
  });

  it('refuses malformed and oversized bodies', async () => {
    const h = await start();
    expect(await h.post(null, { raw: '{"form":' })).toMatchObject({
      status: 400,
      json: { error: 'malformed_body' },
    });
    expect(await h.post({ form: 'data', address: 'x' })).toMatchObject({
      status: 400,
      json: { error: 'malformed_body' },
    });
    expect(await h.post({ form: 'other' })).toMatchObject({ status: 400 });
    expect(await h.post({}, { type: 'text/plain' })).toMatchObject({ status: 415 });
    const big = JSON.stringify({ form: 'data', pad: 'x'.repeat(MAX_VOTE_BODY_BYTES) });
    expect(await h.post(null, { raw: big })).toMatchObject({
      status: 413,
      json: { error: 'payload_too_large' },
    });
    expect(await stored(h)).toBe(0);
  });

  it('bounds floods per IP and per wallet', async () => {
    const h = await start({ perIp: { max: 3, windowMs: 60_000 }, perAddress: { max: 2, windowMs: 60_000 } });
    const alice = algosdk.generateAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.post(dataVote(alice), { ip: 'flood' })).status);
    expect(statuses).toEqual([201, 409, 429, 429, 429]);
    // Same wallet from other IPs: the wallet's own limit (2 per minute) refuses the third.
    const third = await h.post(dataVote(alice), { ip: 'ip-2' });
    expect(third).toMatchObject({ status: 429, json: { error: 'rate_limited' } });
    expect(await stored(h)).toBe(1);
    h.setNow(T0 - 8 * MINUTE);
    expect((await h.post(dataVote(algosdk.generateAccount()), { ip: 'flood' })).status).toBe(201);
  });
});

describe('the disclaimer of the vote app (spec section 1: every response carries one)', () => {
  it('is on every JSON answer: each refusal, the accepted vote, and the export route', async () => {
    const votes = openSqliteVoteStore(path.join(tempDirSync('emi-vote-disclaimer-'), 'arena-votes.sqlite'));
    cleanups.push(() => votes.close());
    const token = 't'.repeat(MIN_OPERATOR_TOKEN_LENGTH);
    const app = createArenaVoteApp({
      store: votes,
      site: SITE,
      now: () => T0 - 10 * MINUTE,
      limits: { perIp: { max: 100, windowMs: 60_000 }, perAddress: { max: 3, windowMs: 60_000 } },
      exportToken: token,
      clientIp: () => 'ip-1',
    });
    // No server: the app answers in process, as the Worker calls it.
    const vote = (body: unknown, type = 'application/json') =>
      app.request('/arena/vote', {
        method: 'POST',
        headers: { 'content-type': type },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const alice = algosdk.generateAccount();
    const aliceVote = dataVote(alice);
    const answers: Record<string, Response> = {
      unsupported_media_type: await vote({}, 'text/plain'),
      payload_too_large: await vote('x'.repeat(MAX_VOTE_BODY_BYTES + 1)),
      malformed_body: await vote('{"form":'),
      bad_signature: await vote({ ...dataVote(algosdk.generateAccount()), address: alice.addr.toString() }),
      wrong_site: await vote(dataVote(alice, messageFor({ site: 'https://other.example' }))),
      accepted: await vote(aliceVote),
      replayed_signature: await vote(aliceVote),
      rate_limited: await vote(dataVote(alice, messageFor({ prediction: 'NEUTRAL' }))),
      export_bad_after: await app.request('/arena/votes/export?after=-1', {
        headers: { authorization: `Bearer ${token}` },
      }),
      export: await app.request('/arena/votes/export', { headers: { authorization: `Bearer ${token}` } }),
    };
    const seen: Record<string, { status: number; error: unknown; disclaimer: unknown }> = {};
    for (const [name, res] of Object.entries(answers)) {
      const body = (await res.json()) as { error?: unknown; disclaimer?: unknown };
      seen[name] = { status: res.status, error: body.error, disclaimer: body.disclaimer };
    }
    const withDisclaimer = (status: number, error?: unknown) => ({ status, error, disclaimer: DISCLAIMER });
    expect(seen).toEqual({
      unsupported_media_type: withDisclaimer(415, 'unsupported_media_type'),
      payload_too_large: withDisclaimer(413, 'payload_too_large'),
      malformed_body: withDisclaimer(400, 'malformed_body'),
      bad_signature: withDisclaimer(401, 'bad_signature'),
      wrong_site: withDisclaimer(400, 'wrong_site'),
      accepted: withDisclaimer(201),
      replayed_signature: withDisclaimer(409, 'replayed_signature'),
      rate_limited: withDisclaimer(429, 'rate_limited'),
      export_bad_after: withDisclaimer(400, 'after must be a whole number'),
      export: withDisclaimer(200),
    });
  });
});
