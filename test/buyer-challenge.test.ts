// The buyer's challenge checker and header codec: pure functions, checked against hand-made challenges and against
// the real paywall's 402 for the human report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { checkChallenge, formatUsdc } from '../generator/buyer/challenge.ts';
import type { ChallengeExpectations } from '../generator/buyer/challenge.ts';
import {
  MAX_HEADER_CHARS,
  decodeBase64Json,
  encodeBase64Json,
  readChallenge,
} from '../generator/buyer/x402-codec.ts';
import {
  ALGORAND_MAINNET_GENESIS_HASH,
  ALGORAND_MAINNET_IDS,
  HUMAN_REPORT_AMOUNT,
  HUMAN_REPORT_PATH,
  USDC_ASSET_ID,
  USDC_DECIMALS,
} from '../generator/buyer/human-report-terms.ts';
import * as terms from '../schemas/paid/terms.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';

const MERCHANT = algosdk.generateAccount().addr.toString();
const OTHER = algosdk.generateAccount().addr.toString();
const FEE_PAYER = algosdk.generateAccount().addr.toString();
const expected: ChallengeExpectations = {
  amount: HUMAN_REPORT_AMOUNT,
  asset: USDC_ASSET_ID,
  payTo: MERCHANT,
  resourcePath: HUMAN_REPORT_PATH,
};

const offer = (changes: Record<string, unknown> = {}) => ({
  scheme: 'exact',
  network: 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
  amount: '100000',
  asset: '31566704',
  payTo: MERCHANT,
  maxTimeoutSeconds: 300,
  extra: { feePayer: FEE_PAYER },
  ...changes,
});
const challenge = (accepts: unknown[] = [offer()], changes: Record<string, unknown> = {}) => ({
  x402Version: 2,
  resource: { url: `https://example.org${HUMAN_REPORT_PATH}` },
  accepts,
  ...changes,
});
const reasonsFor = (paymentRequired: unknown): string[] => {
  const result = checkChallenge(paymentRequired, expected);
  return result.ok ? [] : result.reasons;
};

describe('buyer terms', () => {
  it('match the registry and the shared payment terms', () => {
    const report = PAID_RESOURCES.find((r) => r.id === 'atlasHumanReport');
    expect(report?.path).toBe(HUMAN_REPORT_PATH);
    expect(report?.amountAtomic).toBe(HUMAN_REPORT_AMOUNT);
    expect(USDC_ASSET_ID).toBe(terms.USDC_ASA_ID);
    expect(USDC_DECIMALS).toBe(terms.USDC_DECIMALS);
    expect(ALGORAND_MAINNET_GENESIS_HASH).toBe(terms.ALGORAND_MAINNET_GENESIS_HASH);
    expect([...ALGORAND_MAINNET_IDS].sort()).toEqual(
      [terms.ALGORAND_MAINNET, terms.ALGORAND_MAINNET_LONG].sort(),
    );
  });
});

describe('checkChallenge', () => {
  it('accepts the exact terms in either spelling of the mainnet network', () => {
    for (const network of ALGORAND_MAINNET_IDS) {
      const result = checkChallenge(challenge([offer({ network })]), expected);
      expect(result).toEqual({ ok: true, requirement: offer({ network }) });
    }
  });

  it('accepts an offer without a fee payer (the buyer pays the fee)', () => {
    expect(checkChallenge(challenge([offer({ extra: {} })]), expected).ok).toBe(true);
  });

  it.each([
    ['a lower amount', { amount: '99999' }, /0\.099999 USDC.*exactly 0\.10 USDC/],
    ['a higher amount', { amount: '100001' }, /0\.100001 USDC/],
    ['a decimal amount', { amount: '100000.0' }, /not a whole number/],
    ['a numeric amount', { amount: 100000 }, /not a whole number/],
    ['another asset', { asset: '10458941' }, /asset 10458941, not USDC/],
    ['testnet', { network: 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe' }, /not Algorand mainnet/],
    ['another chain', { network: 'eip155:8453' }, /not Algorand mainnet/],
    ['another payee', { payTo: OTHER }, /not to the merchant address/],
    ['another scheme', { scheme: 'upto' }, /only pays with "exact"/],
    ['no time limit', { maxTimeoutSeconds: 0 }, /time limit/],
    ['a malformed fee payer', { extra: { feePayer: 'nobody' } }, /fee payer/],
  ])('refuses %s', (_name, changes, reason) => {
    const reasons = reasonsFor(challenge([offer(changes)]));
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(reason);
  });

  it('lists every mismatch of an offer at once', () => {
    expect(reasonsFor(challenge([offer({ amount: '1', asset: '1', payTo: OTHER })]))).toHaveLength(3);
  });

  it('refuses another protocol version, another resource, and no offers', () => {
    expect(reasonsFor(challenge(undefined, { x402Version: 1 }))[0]).toMatch(/version 1/);
    expect(
      reasonsFor(challenge(undefined, { resource: { url: 'https://example.org/api/x402-atlas.php' } }))[0],
    ).toMatch(/is for \/api\/x402-atlas\.php/);
    expect(reasonsFor(challenge([]))[0]).toMatch(/no way to pay/);
    expect(reasonsFor('not an object')[0]).toMatch(/not a JSON object/);
  });

  it('picks the matching offer among several, or reports the closest one', () => {
    const good = offer();
    expect(checkChallenge(challenge([offer({ asset: '1' }), good]), expected)).toEqual({
      ok: true,
      requirement: good,
    });
    const reasons = reasonsFor(challenge([offer({ asset: '1', amount: '5' }), offer({ payTo: OTHER })]));
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/merchant address/);
  });
});

describe('formatUsdc', () => {
  it.each([
    ['100000', '0.10 USDC'],
    ['10000', '0.01 USDC'],
    ['1000000', '1.00 USDC'],
    ['1', '0.000001 USDC'],
    ['123456789', '123.456789 USDC'],
  ])('%s atomic units -> %s', (atomic, text) => expect(formatUsdc(atomic)).toBe(text));
});

describe('x402 header codec', () => {
  it('round-trips UTF-8 JSON through strict base64', () => {
    const value = { text: 'naïve – ✓', n: 1 };
    const encoded = encodeBase64Json(value);
    expect(encoded).toBe(Buffer.from(JSON.stringify(value)).toString('base64'));
    expect(decodeBase64Json(encoded)).toEqual(value);
  });

  it('refuses what is not strict base64 of JSON', () => {
    const json = Buffer.from('{"a":1}').toString('base64'); // eyJhIjoxfQ==
    expect(decodeBase64Json(json.replace(/=+$/, ''))).toBeNull(); // unpadded
    expect(decodeBase64Json(Buffer.from('{"a":"??>"}').toString('base64url'))).toBeNull(); // url-safe alphabet
    expect(decodeBase64Json('not base64!')).toBeNull();
    expect(decodeBase64Json(Buffer.from('not json').toString('base64'))).toBeNull();
    expect(decodeBase64Json(Buffer.from([0xff, 0xfe]).toString('base64'))).toBeNull(); // not UTF-8
    expect(decodeBase64Json('A'.repeat(MAX_HEADER_CHARS + 4))).toBeNull();
  });

  it('reads the header first and falls back to the body', () => {
    const fromHeader = challenge([offer({ amount: '1' })]);
    const body = JSON.stringify(challenge());
    expect(readChallenge(encodeBase64Json(fromHeader), body)).toEqual({
      source: 'header',
      paymentRequired: fromHeader,
    });
    expect(readChallenge(null, body)).toEqual({ source: 'body', paymentRequired: challenge() });
    expect(readChallenge('%%%', body)).toMatchObject({ source: 'body' });
    expect(readChallenge(null, '<html>')).toHaveProperty('error');
    expect(readChallenge(null, '{"error":"x"}')).toHaveProperty('error');
  });
});

describe('against the real paywall', () => {
  let facilitator: DevFacilitator;
  beforeAll(async () => {
    facilitator = await startDevFacilitator({ port: 0 });
  });
  afterAll(() => facilitator.close());

  it("accepts the paywall's own 402 for the human report, from the header and from the body", async () => {
    const app = createPaywallApp({
      payTo: MERCHANT,
      facilitatorUrl: facilitator.url,
      baseUrl: 'http://127.0.0.1:9',
      allowSimulated: true,
      storage: {
        read: async () =>
          JSON.stringify({
            ...(PAID_EXAMPLES.atlasHumanReport as object),
            updated: new Date().toISOString(),
          }),
      },
    });
    const response = await app.fetch(new Request(`http://127.0.0.1:9${HUMAN_REPORT_PATH}`));
    expect(response.status).toBe(402);
    const fromHeader = readChallenge(response.headers.get('PAYMENT-REQUIRED'), '');
    const fromBody = readChallenge(null, await response.text());
    for (const read of [fromHeader, fromBody]) {
      if ('error' in read) throw new Error(read.error);
      const result = checkChallenge(read.paymentRequired, expected);
      expect(result).toMatchObject({
        ok: true,
        requirement: { payTo: MERCHANT, extra: { feePayer: facilitator.feePayer } },
      });
    }
    expect(
      checkChallenge((fromHeader as { paymentRequired: unknown }).paymentRequired, {
        ...expected,
        payTo: OTHER,
      }).ok,
    ).toBe(false);
  });
});
