// One exact USD-to-USDC conversion (schemas/usdc.ts) for the catalogue and the publishers' prices.
import { describe, expect, it } from 'vitest';
import { PAID_CATALOG } from '../schemas/catalog.ts';
import { USDC_DECIMALS as TERMS_USDC_DECIMALS } from '../schemas/paid/terms.ts';
import { USDC_DECIMALS, atomicFromUsd } from '../schemas/usdc.ts';
import { atomicFromUsd as publishersAtomicFromUsd } from '../paywall-worker/publishers/config.ts';

describe('atomicFromUsd', () => {
  it('converts exactly, beyond what a double holds', () => {
    expect(atomicFromUsd('0.1')).toBe(100_000n);
    expect(atomicFromUsd('0.29')).toBe(290_000n);
    expect(atomicFromUsd('12.000001')).toBe(12_000_001n);
    expect(atomicFromUsd('9007199254.740993')).toBe(9_007_199_254_740_993n);
  });

  it('refuses a price with more decimals than USDC has, or none at all', () => {
    for (const price of ['0.1234567', '', '.5', '1e3', '-1', '0,1']) {
      expect(() => atomicFromUsd(price), price).toThrow(RangeError);
    }
  });

  it('is the conversion of the catalogue and of the publishers’ configuration', () => {
    expect(publishersAtomicFromUsd).toBe(atomicFromUsd);
    expect(USDC_DECIMALS).toBe(TERMS_USDC_DECIMALS);
    for (const entry of Object.values(PAID_CATALOG)) {
      expect(entry.amountAtomic, entry.path).toBe(atomicFromUsd(entry.priceUsd).toString());
    }
  });
});
