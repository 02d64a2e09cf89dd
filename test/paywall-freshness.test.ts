// Selling only what is fresh and real, by default: a simulated or replayed file, or one older than the maximum
// age, is refused with a 503 before any payment is asked for; a development stack may opt in to simulated data,
// and then every 402 says so and when the data was generated.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { PaymentRequiredBody, PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { createPaywallApp } from '../paywall-worker/app.ts';
import type { PaywallConfig } from '../paywall-worker/app.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { resourceById } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
let facilitator: DevFacilitator;
let dir: string;
let base: PaywallConfig;

beforeAll(async () => {
  facilitator = await startDevFacilitator();
  dir = await mkdtemp(join(tmpdir(), 'emi-fresh-'));
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
  base = {
    payTo,
    facilitatorUrl: facilitator.url,
    baseUrl: 'http://127.0.0.1:8080',
    storage: createFsStorage(dir),
  };
});
afterAll(async () => {
  await facilitator?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Writes the paid file as if generated `ageSeconds` ago from `mode` data. */
async function writeBody(mode: 'simulated' | 'live', ageSeconds: number) {
  const example = PAID_EXAMPLES[resource.id] as Record<string, unknown>;
  const body = {
    ...example,
    source_mode: mode,
    simulated: mode === 'simulated',
    updated: new Date(Date.now() - ageSeconds * 1000).toISOString(),
  };
  expect(resource.schema.safeParse(body).success).toBe(true);
  await writeFile(join(dir, resource.file), JSON.stringify(body));
}

const get = (config: Partial<PaywallConfig> = {}) =>
  createPaywallApp({ ...base, ...config }).request(resource.path);

describe('by default', () => {
  it('refuses to sell simulated data, before any payment is asked for', async () => {
    await writeBody('simulated', 5);
    const response = await get();
    expect(response.status).toBe(503);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
    const body = PaywallErrorBody.parse(await response.json());
    expect(body.error).toBe('data_not_live');
    expect(body.message).toMatch(/simulated data/);
  });

  it('sells a live file while the freshness rule calls it fresh or late, never once it calls it stale (120 s)', async () => {
    // Generated at G, due at G + 60 s (late past it), stale one more interval later: G + 120 s at the default cadence.
    await writeBody('live', 110);
    expect((await get()).status).toBe(402);
    await writeBody('live', 150); // what the docs, llms.txt and MCP call stale: sold until 180 s before
    const stale = await get();
    expect(stale.status).toBe(503);
    const body = PaywallErrorBody.parse(await stale.json());
    expect(body.error).toBe('data_stale');
    expect(body.message).toMatch(/generated 150 s ago .* past the 120 s this service sells/);
  });

  it('refuses a live body older than the maximum age (default 120 s)', async () => {
    await writeBody('live', 16 * 60);
    const response = await get();
    expect(response.status).toBe(503);
    const body = PaywallErrorBody.parse(await response.json());
    expect(body.error).toBe('data_stale');
    // Also what a request carrying a payment is told: it was not settled.
    expect(body.message).toMatch(/no payment was taken \(a payment sent with this request was not settled\)/);
  });

  it('refuses a stale file with its reason even to a request carrying a payment header, never with a 402', async () => {
    await writeBody('live', 16 * 60);
    const response = await createPaywallApp(base).request(resource.path, {
      headers: { 'PAYMENT-SIGNATURE': 'AAAA' }, // unreadable: before, a 402 invalid_payload with a fresh offer
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('PAYMENT-REQUIRED')).toBeNull();
    expect(PaywallErrorBody.parse(await response.json()).error).toBe('data_stale');
  });

  it('refuses a file dated more than a minute ahead of its clock (its age cannot be told)', async () => {
    await writeBody('live', -10 * 60);
    const response = await get();
    expect(response.status).toBe(503);
    const body = PaywallErrorBody.parse(await response.json());
    expect(body.error).toBe('data_stale');
    expect(body.message).toMatch(/dated 600 s ahead of this service's clock/);
    await writeBody('live', -20); // ordinary skew between two hosts: still sold
    expect((await get()).status).toBe(402);
  });

  it('sells fresh live data, and the 402 says it is live and when it was generated', async () => {
    await writeBody('live', 5);
    const response = await get();
    expect(response.status).toBe(402);
    const body = PaymentRequiredBody.parse(await response.json());
    expect(body.data).toMatchObject({ mode: 'live', simulated: false });
    expect(Date.now() - Date.parse(body.data.generated_at)).toBeGreaterThan(4000);
    expect(
      decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!).resource.description,
    ).toMatch(new RegExp(`live data generated ${body.data.generated_at}`));
  });
});

describe('opted in for development', () => {
  it('sells simulated data and says so in the 402 body, the header and the Bazaar description', async () => {
    await writeBody('simulated', 5);
    const response = await get({ allowSimulated: true });
    expect(response.status).toBe(402);
    const body = PaymentRequiredBody.parse(await response.json());
    expect(body.data).toMatchObject({ mode: 'simulated', simulated: true });
    const header = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!);
    expect(header.resource.description).toMatch(/SIMULATED \(not live\) data generated/);
  });

  it('a shorter maximum age is honoured', async () => {
    await writeBody('simulated', 120);
    expect((await get({ allowSimulated: true })).status).toBe(402);
    expect((await get({ allowSimulated: true, maxDataAgeSeconds: 60 })).status).toBe(503);
  });
});
