// The paid report kept for the tab: stored, found again for the same report URL only, and never a crash on
// storage that is full, disabled or holds something else.
import { describe, expect, it } from 'vitest';
import { KEPT_REPORT_KEY, keepReport, keptReport } from '../site/x402-buyer/src/kept-report.ts';
import type { KeptReport } from '../site/x402-buyer/src/kept-report.ts';

const memory = () => {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
  };
};

const kept: KeptReport = {
  reportUrl: 'https://emi.test/api/x402-atlas-human-report.php',
  proof: { txId: 'TX', network: 'algorand:x', amountAtomic: '100000', payTo: 'PAYEE', development: true },
  report: { title: 'T' },
  rawText: '{"title":"T"}',
};

describe('kept paid report', () => {
  it('comes back for the same report URL only', () => {
    const store = memory();
    keepReport(store, kept);
    expect(keptReport(store, kept.reportUrl)).toEqual(kept);
    expect(keptReport(store, 'https://other.test/x')).toBeNull();
  });

  it('reads nothing from empty, foreign or broken storage', () => {
    const store = memory();
    expect(keptReport(store, kept.reportUrl)).toBeNull();
    store.setItem(KEPT_REPORT_KEY, '{not json');
    expect(keptReport(store, kept.reportUrl)).toBeNull();
    store.setItem(KEPT_REPORT_KEY, JSON.stringify({ reportUrl: kept.reportUrl }));
    expect(keptReport(store, kept.reportUrl)).toBeNull();
  });

  it('does not throw when storage refuses to write', () => {
    const full = {
      getItem: () => null,
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(() => keepReport(full, kept)).not.toThrow();
  });
});
