// The paid report's number and reading formats: sub-dollar prices keep their digits, bearish is never "up".
import { describe, expect, it } from 'vitest';
import { formatNumber, toneOf } from '../site/x402-buyer/src/format.ts';
import { formatUsdc } from '../generator/buyer/challenge.ts';

describe('formatNumber', () => {
  it.each([
    [1234567, '1,234,567'],
    [43210.567, '43,210.57'],
    [0.052341, '0.05234'],
    [0.000012345, '0.00001235'],
    [-0.5, '-0.5'],
    [Number.NaN, '—'],
  ])('%d -> %s', (value, expected) => {
    expect(formatNumber(value)).toBe(expected);
  });
});

describe('toneOf', () => {
  it('matches the reading, whatever its case', () => {
    expect(toneOf('BEARISH')).toBe('down');
    expect(toneOf('bullish')).toBe('up');
    expect(toneOf('RISK_OFF')).toBe('down');
    expect(toneOf('WAIT')).toBe('neutral');
    expect(toneOf('BTC')).toBeNull();
    expect(toneOf(3)).toBeNull();
  });
});

describe('formatUsdc', () => {
  it('never rounds a sub-dollar price to two decimals', () => {
    expect(formatUsdc('100000')).toBe('0.10 USDC');
    expect(formatUsdc('5000')).toBe('0.005 USDC');
    expect(formatUsdc('1')).toBe('0.000001 USDC');
  });
});
