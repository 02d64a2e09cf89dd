// Bodies and media types as a hostile client sends them: the development faucet refuses an amount that is no
// whole number with a 400 that says so (never a 500 from BigInt), and a body that is not JSON with a 400 that says
// that; POST /arena/vote reads its media type as HTTP defines it (case-insensitive, parameters after `;`), exactly,
// not as a prefix.
import algosdk from 'algosdk';
import { describe, expect, it } from 'vitest';
import { createArenaVoteApp } from '../paywall-worker/arena-vote/app.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { InMemoryAlgorandLedger } from '../paywall-worker/dev-facilitator/ledger.ts';
import { createDevFacilitatorApp } from '../paywall-worker/dev-facilitator/server.ts';

/** Node's bindings of a loopback caller, as @hono/node-server passes them. */
const LOOPBACK = {
  incoming: { socket: { remoteAddress: '127.0.0.1', remotePort: 5555, remoteFamily: 'IPv4' } },
};

describe('the development faucet (POST /dev/fund)', () => {
  const ledger = new InMemoryAlgorandLedger();
  const { app } = createDevFacilitatorApp(ledger);
  const fund = (body: string) =>
    app.fetch(
      new Request('http://127.0.0.1/dev/fund', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      }),
      LOOPBACK,
    );
  const address = algosdk.generateAccount().addr.toString();

  it('refuses amounts that are no whole number of atomic units with a 400, never a 500', async () => {
    for (const amount of ['1e400', '1e3', '0x10', '1.5', ' 1', '']) {
      const response = await fund(JSON.stringify({ address, amount }));
      expect(response.status, amount).toBe(400);
      const { error } = (await response.json()) as { error: string };
      expect(error, amount).toMatch(/atomic units as a decimal string/);
      expect(error, amount).not.toMatch(/BigInt/);
    }
    expect(ledger.assetBalance(address)).toBe(0n);
  });

  it('still refuses a whole amount over the cap, and funds one under it', async () => {
    const over = await fund(JSON.stringify({ address, amount: '1000000001' }));
    expect(over.status).toBe(400);
    expect(((await over.json()) as { error: string }).error).toMatch(/at most 1000000000/);
    expect((await fund(JSON.stringify({ address, amount: '7' }))).status).toBe(200);
    expect(ledger.assetBalance(address)).toBe(7n);
  });

  it('says that a body that is not JSON is not JSON', async () => {
    for (const body of ['hello', '{"address":', '']) {
      const response = await fund(body);
      expect(response.status, body).toBe(400);
      expect(((await response.json()) as { error: string }).error, body).toMatch(/not JSON/);
    }
  });
});

describe('POST /arena/vote media type', () => {
  const app = createArenaVoteApp({
    store: openSqliteVoteStore(':memory:'),
    site: 'https://arena.example',
    clientIp: () => '192.0.2.1',
    limits: { perIp: { max: 1000, windowMs: 60_000 }, perAddress: { max: 1000, windowMs: 60_000 } },
  });
  const post = (contentType: string) =>
    app.fetch(
      new Request('https://arena.example/arena/vote', {
        method: 'POST',
        headers: { 'Content-Type': contentType },
        body: '{}',
      }),
    );

  it('takes application/json in any case and with parameters', async () => {
    for (const type of [
      'application/json',
      'APPLICATION/JSON',
      'Application/Json; charset=UTF-8',
      'application/json ;charset=utf-8',
    ]) {
      const response = await post(type);
      // Past the media type: the empty object is refused for its shape.
      expect(response.status, type).toBe(400);
      expect(await response.json(), type).toMatchObject({ error: 'malformed_body' });
    }
  });

  it('refuses another media type that merely starts with application/json', async () => {
    for (const type of [
      'application/jsonx',
      'application/json-patch+json',
      'application/json5',
      'text/plain',
    ]) {
      const response = await post(type);
      expect(response.status, type).toBe(415);
      expect(await response.json(), type).toMatchObject({ error: 'unsupported_media_type' });
    }
  });
});
