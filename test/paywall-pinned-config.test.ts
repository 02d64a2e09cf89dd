// Pinned paywall settings a mutation audit found no test holding, by their documented literals (README): the
// fee-payer fee cap defaults to 10 000 microALGO; EMI_FACILITATOR_TIMEOUT_MS is at most 15 000 (the proxies in front
// are rendered from that bound); EMI_ALLOW_SIMULATED is 0 or 1, nothing else; and a facilitator URL without a payee
// is refused, naming EMI_PAYTO, since such a worker could never be paid.
import algosdk from 'algosdk';
import { describe, expect, it } from 'vitest';
import {
  PaywallConfigError,
  checkSettings,
  resolveConfig,
  settingsFromEnv,
} from '../paywall-worker/config.ts';
import type { PaywallConfig } from '../paywall-worker/config.ts';
import type { PaidFileStorage } from '../paywall-worker/storage.ts';

const config = (overrides: Partial<PaywallConfig> = {}): PaywallConfig => ({
  payTo: algosdk.generateAccount().addr.toString(),
  facilitatorUrl: 'http://127.0.0.1:20160',
  baseUrl: 'http://127.0.0.1:20161',
  storage: {} as PaidFileStorage, // resolveConfig only passes it on
  ...overrides,
});

/** The settings as the environment gives them, checked as at start. */
const checkEnv = (env: Record<string, string>): void => checkSettings(settingsFromEnv(env));

describe('paywall settings, pinned to their documented literals', () => {
  it('caps the fee-payer fee at 10 000 microALGO by default', () => {
    expect(resolveConfig(config()).maxFeePayerFeeMicroAlgos).toBe(10_000n);
  });

  it('accepts a facilitator timeout of 15 000 ms and refuses 15 001', () => {
    expect(() => checkEnv({ EMI_FACILITATOR_TIMEOUT_MS: '15000' })).not.toThrow();
    expect(() => checkEnv({ EMI_FACILITATOR_TIMEOUT_MS: '15001' })).toThrow(
      /^EMI_FACILITATOR_TIMEOUT_MS must be at most 15000 \(ms\)/,
    );
    expect(resolveConfig(config({ facilitatorTimeoutMs: 15_000 })).facilitatorTimeoutMs).toBe(15_000);
    expect(() => resolveConfig(config({ facilitatorTimeoutMs: 15_001 }))).toThrow(PaywallConfigError);
  });

  it('takes EMI_ALLOW_SIMULATED as 0 or 1 only', () => {
    expect(settingsFromEnv({ EMI_ALLOW_SIMULATED: '1' }).allowSimulated).toBe(true);
    expect(settingsFromEnv({ EMI_ALLOW_SIMULATED: '0' }).allowSimulated).toBe(false);
    expect(() => settingsFromEnv({ EMI_ALLOW_SIMULATED: 'true' })).toThrow(
      /^EMI_ALLOW_SIMULATED must be 0 or 1: "true"$/,
    );
  });

  it('refuses a facilitator URL without a payee, naming EMI_PAYTO', () => {
    expect(() => checkEnv({ EMI_FACILITATOR_URL: 'http://127.0.0.1:20160' })).toThrow(PaywallConfigError);
    expect(() => checkEnv({ EMI_FACILITATOR_URL: 'http://127.0.0.1:20160' })).toThrow(/EMI_PAYTO/);
    const payTo = algosdk.generateAccount().addr.toString();
    expect(() => checkEnv({ EMI_FACILITATOR_URL: 'http://127.0.0.1:20160', EMI_PAYTO: payTo })).not.toThrow();
  });
});
