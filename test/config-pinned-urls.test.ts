// Pins the paywall's URL and number settings where a mutation audit found no test noticing a one-line change
// (paywall-worker/config.ts, README "Paywall settings"): a facilitator or indexer URL is an API base the paths are
// appended to, so one with a query string, a fragment or a password (fetch refuses user:pass@) would start a worker
// whose every sale fails; it is refused at start, naming its variable and never repeating the value (it may hold a
// key). The site's base URL loses its trailing slash (the 402's resource.url appends the path to it); a facilitator
// timeout must be a positive number of milliseconds; and a payment stays valid for 300 s by default, as the 402
// says. Published settings must be enforced, so each case uses literal values.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { PaywallConfigError, checkSettings, resolveConfig } from '../paywall-worker/config.ts';
import type { PaywallConfig } from '../paywall-worker/config.ts';
import type { PaidFileStorage } from '../paywall-worker/storage.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { ALGORAND_MAINNET } from '../schemas/paid/terms.ts';
import { resourceById, supportedOnlyFacilitator, writePaidFixtures } from './paywall-harness.ts';

const payTo = algosdk.generateAccount().addr.toString();

const config = (overrides: Partial<PaywallConfig> = {}): PaywallConfig => ({
  payTo,
  facilitatorUrl: 'http://127.0.0.1:20160',
  baseUrl: 'http://127.0.0.1:20161',
  storage: {} as PaidFileStorage, // resolveConfig only passes it on
  ...overrides,
});

/** The error `check` throws (a PaywallConfigError), or a failure when it throws none. */
function configError(check: () => unknown): PaywallConfigError {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(PaywallConfigError);
    return error as PaywallConfigError;
  }
  throw new Error('no PaywallConfigError was thrown');
}

describe('an API base URL that can never work is refused, named, and not repeated', () => {
  it.each([
    ['a query string', 'https://f.example/x?key=1', 'key=1'],
    ['a fragment', 'https://f.example/x#key=1', 'key=1'],
  ])('EMI_FACILITATOR_URL with %s is refused', (_what, url, secret) => {
    const error = configError(() => checkSettings({ payTo, facilitatorUrl: url }));
    expect(error.message).toMatch(/^EMI_FACILITATOR_URL must not carry /);
    expect(error.message).not.toContain(secret);
  });

  it.each([
    ['a query string', 'https://i.example/x?key=1', 'key=1'],
    ['a fragment', 'https://i.example/x#key=1', 'key=1'],
  ])('EMI_INDEXER_URL with %s is refused', (_what, url, secret) => {
    const error = configError(() => checkSettings({ indexerUrl: url }));
    expect(error.message).toMatch(/^EMI_INDEXER_URL must not carry /);
    expect(error.message).not.toContain(secret);
    // The same refusal when the worker starts.
    expect(configError(() => resolveConfig(config({ indexerUrl: url }))).message).toMatch(
      /^indexerUrl must not carry /,
    );
  });

  it('a facilitator URL with a password and no user name is refused too', () => {
    const error = configError(() => checkSettings({ payTo, facilitatorUrl: 'https://:secret@f.example' }));
    expect(error.message).toMatch(/^EMI_FACILITATOR_URL must not carry a user name or password/);
    expect(error.message).not.toContain('secret@');
    expect(() => resolveConfig(config({ facilitatorUrl: 'https://:secret@f.example' }))).toThrow(
      PaywallConfigError,
    );
  });

  it('a plain facilitator and indexer URL are accepted', () => {
    expect(() =>
      checkSettings({ payTo, facilitatorUrl: 'https://f.example/x', indexerUrl: 'https://i.example' }),
    ).not.toThrow();
  });
});

describe('the base URL and the numbers of the paywall settings', () => {
  it("the site's base URL loses its trailing slash", () => {
    expect(resolveConfig(config({ baseUrl: 'https://x.org/' })).baseUrl).toBe('https://x.org');
  });

  it('a facilitator timeout of 0 ms is refused; 1 ms is accepted', () => {
    expect(configError(() => resolveConfig(config({ facilitatorTimeoutMs: 0 }))).message).toBe(
      'facilitatorTimeoutMs (EMI_FACILITATOR_TIMEOUT_MS) must be a positive integer',
    );
    expect(configError(() => checkSettings({ facilitatorTimeoutMs: 0 })).message).toBe(
      'EMI_FACILITATOR_TIMEOUT_MS must be a positive integer',
    );
    expect(resolveConfig(config({ facilitatorTimeoutMs: 1 })).facilitatorTimeoutMs).toBe(1);
  });
});

describe('a payment stays valid for 300 s by default', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-config-pinned-'));
    await writePaidFixtures(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const facilitator = supportedOnlyFacilitator(ALGORAND_MAINNET);

  it("the 402's accepts[0].maxTimeoutSeconds is 300 when none is set", async () => {
    expect(resolveConfig(config()).maxTimeoutSeconds).toBe(300);
    const app = createPaywallApp(
      {
        payTo,
        facilitatorUrl: 'http://127.0.0.1:1',
        baseUrl: 'https://emi.test',
        storage: createFsStorage(dir),
        allowSimulated: true, // the fixtures are the simulated examples
      },
      { facilitatorClient: facilitator },
    );
    const response = await app.request(resourceById('paidMarketRegime').path);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!);
    expect(required.accepts[0]?.maxTimeoutSeconds).toBe(300);
  });
});
