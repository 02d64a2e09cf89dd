// The vote endpoint's rate limits as each runtime applies them. On Cloudflare the limiters live as long as the
// isolate (the site worker builds the vote app once, as it builds the paywall), so a flood from one wallet and one
// CF-Connecting-IP is refused 429. On Node the per-IP key is the socket's address, never a header the client writes
// itself (CF-Connecting-IP); only from a loopback peer (the nginx recipe proxies from 127.0.0.1) the last
// X-Forwarded-For entry, which nginx appends. IPv6 addresses count by their /64.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import type { Context } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../paywall-worker/arena-vote/app.ts';
import {
  UNKNOWN_CLIENT,
  clientKey,
  nodeClientIp,
  workerClientIp,
} from '../paywall-worker/arena-vote/client-ip.ts';
import { createSiteWorker, type SiteWorkerEnv } from '../paywall-worker/cloudflare/site-worker.ts';
import { startLocalStack } from '../generator/local-stack.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { MemoryPaymentBook } from '../paywall-worker/payment-book.ts';
import { signedVoteBody } from './helpers/signed-vote.ts';
import { voteNamespace } from './helpers/vote-namespace.ts';

const SITE = 'https://arena.example';
const PER_IP = DEFAULT_LIMITS.perIp.max;
const PER_ADDRESS = DEFAULT_LIMITS.perAddress.max;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A vote for the round open to votes now (the apps here run on the real clock). */
const signedVote = (account: algosdk.Account): string =>
  JSON.stringify(signedVoteBody({ site: SITE, account }));

const workerEnv = (): SiteWorkerEnv => ({
  ASSETS: { fetch: async () => new Response('not found', { status: 404 }) },
  ARENA_VOTES: voteNamespace(),
});

const workerPost = (
  worker: ReturnType<typeof createSiteWorker>,
  env: SiteWorkerEnv,
  body: string,
  ip: string,
) =>
  worker.fetch(
    new Request(`${SITE}/arena/vote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cf-connecting-ip': ip },
      body,
    }),
    env,
  );

describe('vote rate limits on Cloudflare (createSiteWorker)', () => {
  it('counts across the requests of an isolate: 40 votes from one wallet and one CF-Connecting-IP meet 429', async () => {
    const worker = createSiteWorker(() => new MemoryPaymentBook());
    const env = workerEnv();
    const alice = algosdk.generateAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      statuses.push((await workerPost(worker, env, signedVote(alice), '198.51.100.7')).status);
    }
    // One vote per round, then the wallet's limit, then (from the 31st request) the address's too.
    expect(statuses).toEqual([
      201,
      ...Array<number>(PER_ADDRESS - 1).fill(409),
      ...Array<number>(40 - PER_ADDRESS).fill(429),
    ]);
  });

  it('limits one CF-Connecting-IP across wallets, an IPv6 client by its /64, and a new isolate starts afresh', async () => {
    const worker = createSiteWorker(() => new MemoryPaymentBook());
    const env = workerEnv();
    const statusesFrom = async (ips: (i: number) => string, n: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) statuses.push((await workerPost(worker, env, '{}', ips(i))).status);
      return statuses;
    };
    // Malformed bodies count too: the per-IP limit comes before the body is read.
    expect(await statusesFrom(() => '198.51.100.8', PER_IP + 2)).toEqual([
      ...Array<number>(PER_IP).fill(400),
      429,
      429,
    ]);
    expect(await statusesFrom((i) => `2001:db8:7:8::${(i + 1).toString(16)}`, PER_IP + 1)).toEqual([
      ...Array<number>(PER_IP).fill(400),
      429,
    ]);
    expect(await statusesFrom(() => '2001:db8:7:9::1', 1)).toEqual([400]);
    const another = createSiteWorker(() => new MemoryPaymentBook());
    expect((await workerPost(another, env, '{}', '198.51.100.8')).status).toBe(400);
  });
});

describe('the client address each runtime vouches for', () => {
  const context = (headers: Record<string, string>, remoteAddress?: string) =>
    ({
      req: { header: (name: string) => headers[name.toLowerCase()] },
      env: remoteAddress === undefined ? undefined : { incoming: { socket: { remoteAddress } } },
    }) as unknown as Context;

  it('keys IPv4 as it is, IPv6 by its /64 and IPv4-mapped IPv6 as IPv4', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey(' 2001:DB8:0:1:aaaa:bbbb:cccc:dddd ')).toBe('2001:db8:0:1::/64');
    expect(clientKey('2001:db8:0:1::9')).toBe('2001:db8:0:1::/64');
    expect(clientKey('[2001:db8::1]')).toBe('2001:db8:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:cb00:7109')).toBe('203.0.113.9');
    for (const bad of ['', 'unknown', '1.2.3', '256.1.1.1', '1::2::3', '2001:db8:1:2:3:4:5:6:7', 'g::1']) {
      expect(clientKey(bad)).toBeNull();
    }
  });

  it('Node: the socket address; X-Forwarded-For (its last entry) only from a loopback peer', () => {
    const forged = { 'cf-connecting-ip': '192.0.2.1', 'x-forwarded-for': '192.0.2.2, 192.0.2.3' };
    expect(nodeClientIp(context(forged, '203.0.113.9'))).toBe('203.0.113.9');
    expect(nodeClientIp(context(forged, '::ffff:203.0.113.9'))).toBe('203.0.113.9');
    expect(nodeClientIp(context(forged, '2001:db8:5:6::77'))).toBe('2001:db8:5:6::/64');
    expect(nodeClientIp(context(forged, '127.0.0.1'))).toBe('192.0.2.3');
    expect(nodeClientIp(context(forged, '::ffff:127.0.0.1'))).toBe('192.0.2.3');
    expect(nodeClientIp(context(forged, '::1'))).toBe('192.0.2.3');
    expect(nodeClientIp(context({ 'x-forwarded-for': '2001:db8:5:6::1' }, '::1'))).toBe('2001:db8:5:6::/64');
    // From loopback without a (usable) X-Forwarded-For: the loopback address itself.
    expect(nodeClientIp(context({}, '127.0.0.1'))).toBe('127.0.0.1');
    expect(nodeClientIp(context({ 'x-forwarded-for': '192.0.2.2, nonsense' }, '127.0.0.1'))).toBe(
      '127.0.0.1',
    );
    // A composition that did not hand Node's bindings on: one shared key, never the client's header.
    expect(nodeClientIp(context(forged))).toBe(UNKNOWN_CLIENT);
  });

  it('Worker: CF-Connecting-IP, which Cloudflare sets', () => {
    expect(workerClientIp(context({ 'cf-connecting-ip': '203.0.113.9' }))).toBe('203.0.113.9');
    expect(workerClientIp(context({ 'cf-connecting-ip': '2001:db8:5:6::1' }))).toBe('2001:db8:5:6::/64');
    expect(workerClientIp(context({ 'x-forwarded-for': '203.0.113.9' }))).toBe(UNKNOWN_CLIENT);
  });
});

describe('vote rate limits on Node (the local paywall on 127.0.0.1)', () => {
  const startNode = async () => {
    const root = await mkdtemp(join(tmpdir(), 'emi-vote-limit-'));
    const paywall = await createLocalPaywall({
      paidDir: join(root, 'paid'),
      baseUrl: SITE,
      devFacilitatorPort: 0,
      ledgerFile: join(root, 'publishers.sqlite'),
      voteStorePath: join(root, 'state', 'arena-votes.sqlite'),
    });
    const server = await listen(paywall.app, 0, '127.0.0.1');
    cleanups.push(
      () => rm(root, { recursive: true, force: true }),
      () => paywall.close(),
      () => server.close(),
    );
    return async (headers: Record<string, string>) =>
      (
        await fetch(`${server.url}/arena/vote`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
        })
      ).status;
  };

  it('a CF-Connecting-IP sent by the client does not make it another client', async () => {
    const post = await startNode();
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP + 1; i++)
      statuses.push(await post({ 'cf-connecting-ip': `192.0.2.${i + 1}` }));
    expect(statuses).toEqual([...Array<number>(PER_IP).fill(400), 429]);
  });

  it('behind a proxy on loopback, the last X-Forwarded-For entry is the client, an IPv6 one by its /64', async () => {
    const post = await startNode();
    const from = async (xff: (i: number) => string, n: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) statuses.push(await post({ 'x-forwarded-for': xff(i) }));
      return statuses;
    };
    // The entries before the last are the client's own words: rotating them changes nothing.
    expect(await from((i) => `192.0.2.${i + 1}, 203.0.113.9`, PER_IP + 1)).toEqual([
      ...Array<number>(PER_IP).fill(400),
      429,
    ]);
    expect(await from(() => '203.0.113.10', 1)).toEqual([400]);
    expect(await from((i) => `2001:db8:1:2::${(i + 1).toString(16)}`, PER_IP + 1)).toEqual([
      ...Array<number>(PER_IP).fill(400),
      429,
    ]);
    expect(await from(() => '2001:db8:1:3::1', 1)).toEqual([400]);
  });
});

describe('vote rate limits behind the preview (emi serve, emi up)', () => {
  it('counts each client by its own address, not every visitor in one shared bucket', async () => {
    const root = await mkdtemp(join(tmpdir(), 'emi-vote-preview-'));
    const stack = await startLocalStack({
      port: 0,
      host: '127.0.0.1',
      dir: join(root, 'dist'),
      paid: join(root, 'paid'),
      devFacilitatorPort: 0,
      ledgerFile: join(root, 'publishers.sqlite'),
      voteStorePath: join(root, 'state', 'arena-votes.sqlite'),
      log: () => {},
    });
    cleanups.push(
      () => rm(root, { recursive: true, force: true }),
      () => stack.close(),
    );
    const post = async (xff: string) =>
      (
        await fetch(`${stack.url}/arena/vote`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
          body: '{}',
        })
      ).status;
    // A proxy on loopback in front of the preview names a different client each time: none is limited.
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP + 5; i++) statuses.push(await post(`192.0.2.${i + 1}`));
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    // One client is limited as everywhere else.
    const one: number[] = [];
    for (let i = 0; i < PER_IP + 1; i++) one.push(await post('203.0.113.7'));
    expect(one.at(-1)).toBe(429);
  });
});
