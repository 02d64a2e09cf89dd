// Headers over Node's 16 KiB limit never reach the app: Node's parser refuses them. Its own answer is a bare 431
// without CORS headers, which a browser on another origin reports as a network error; the worker's answer is a
// JSON 431 in the paywall's error shape that such a browser can read. Nothing reaches the facilitator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Hono } from 'hono';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { hasChromium, launchChromium } from './buyer-stack.ts';
import { fetchChallenge, resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

const resource = resourceById('paidMarketRegime');
/** Above Node's 16 KiB and below the 32 KiB an nginx in front allows (deploy/nginx). */
const OVERSIZED = 'A'.repeat(20 * 1024);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('a request whose headers exceed 16 KiB', () => {
  it('gets a JSON 431 with CORS headers; nothing is settled, and the worker answers the next request', async () => {
    const settledBefore = stack.facilitator.ledger.transactionCount;
    const response = await fetch(stack.url(resource), { headers: { 'PAYMENT-SIGNATURE': OVERSIZED } });
    expect(response.status).toBe(431);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = PaywallErrorBody.parse(await response.json());
    expect(body).toMatchObject({ status: 431, error: 'request_headers_too_large' });
    expect(body.message).toMatch(/16 KiB/);
    expect(stack.facilitator.ledger.transactionCount).toBe(settledBefore);
    // The refused connection is closed; a new one is served as usual.
    expect((await fetchChallenge(stack.url(resource))).response.status).toBe(402);
  });

  it('a header just under the limit still reaches the paywall, which names its own 12 KiB cap', async () => {
    const response = await fetch(stack.url(resource), {
      headers: { 'PAYMENT-SIGNATURE': 'A'.repeat(14 * 1024) },
    });
    expect(response.status).toBe(402);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toBe('invalid_payload');
    expect(body.message).toMatch(/PAYMENT-SIGNATURE exceeds \d+ characters/);
  });
});

describe.skipIf(!hasChromium)('in chromium, from another origin', () => {
  let browser: Browser;
  let page: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const site = new Hono().get('/', (c) => c.html('<!doctype html><title>buyer</title>'));
    [browser, page] = await Promise.all([launchChromium(), listen(site, 0, '127.0.0.1')]);
  });
  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  it('the page reads the 431 and its reason instead of a network error', async () => {
    const tab = await browser.newPage();
    await tab.goto(`${page.url}/`);
    const seen = await tab.evaluate(
      async ({ url, value }) => {
        try {
          const response = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': value } });
          return { status: response.status, body: (await response.json()) as unknown };
        } catch (error) {
          return { failed: String(error) };
        }
      },
      // The worker listens on 127.0.0.1 and the page on localhost: two origins.
      { url: stack.url(resource).replace('127.0.0.1', 'localhost'), value: OVERSIZED },
    );
    expect(seen).toMatchObject({ status: 431, body: { error: 'request_headers_too_large' } });
  });
});
