// The Durable Object vote store through the same VoteStore interface the worker uses. The storage here is an
// in-memory stand-in for the Durable Object storage API (get / put of several keys / list by prefix); running the
// class in workerd needs the hosts engineer's wrangler setup (see the final report).
import algosdk from 'algosdk';
import { describe, expect, it } from 'vitest';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { createArenaVoteApp } from '../paywall-worker/arena-vote/app.ts';
import {
  ArenaVoteStore,
  durableObjectVoteStore,
  type DoNamespace,
} from '../paywall-worker/arena-vote/store-durable-object.ts';
import { MINUTE, T0 } from './arena-fixtures.ts';
import { signedVoteBody } from './helpers/signed-vote.ts';

const memoryStorage = () => {
  const data = new Map<string, unknown>();
  return {
    data,
    get: async <T>(key: string) => data.get(key) as T | undefined,
    put: async (entries: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(entries)) data.set(k, structuredClone(v));
    },
    list: async <T>(o: { prefix: string; start?: string; limit?: number }) =>
      new Map(
        [...data.entries()]
          .filter(([k]) => k.startsWith(o.prefix) && (o.start === undefined || k >= o.start))
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .slice(0, o.limit ?? Infinity) as Array<[string, T]>,
      ),
  };
};

const namespaceOver = (object: ArenaVoteStore): DoNamespace => ({
  idFromName: (name) => name,
  get: () => ({ fetch: (input, init) => object.fetch(new Request(input, init)) }),
});

describe('ArenaVoteStore (Durable Object)', () => {
  it('stores a signed vote once and exports it in order', async () => {
    const storage = memoryStorage();
    const object = new ArenaVoteStore({ storage, blockConcurrencyWhile: (fn) => fn() });
    const store = durableObjectVoteStore(namespaceOver(object));
    const round = roundAt(T0);
    const app = createArenaVoteApp({
      store,
      site: 'https://s.example',
      now: () => T0 - MINUTE,
      clientIp: () => '192.0.2.1',
    });
    const account = algosdk.generateAccount();
    const body = JSON.stringify(
      signedVoteBody({ site: 'https://s.example', round, prediction: 'NEUTRAL', account }),
    );
    const post = () =>
      app.request('/arena/vote', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect((await post()).status).toBe(201);
    const replay = await post();
    expect(replay.status).toBe(409);
    expect(await replay.json()).toMatchObject({ error: 'replayed_signature' });
    const exported = await store.since(0, 10);
    expect(exported).toEqual([
      expect.objectContaining({
        seq: 1,
        address: account.addr.toString(),
        roundId: round.id,
        prediction: 'NEUTRAL',
      }),
    ]);
    expect(await store.since(1, 10)).toEqual([]);
    expect(await store.add({ ...exported[0]!, signature: 'another', nonce: 'another-nonce-123' })).toBe(
      'already_voted',
    );
  });
});
