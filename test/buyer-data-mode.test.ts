// What the buyer page says about the data on sale before payment: read from the 402's body (`data`) and from the
// PAYMENT-REQUIRED resource description, the less live of the two winning, and worded with its age.
import { describe, expect, it } from 'vitest';
import { ageInWords, describeData, readDataFacts } from '../site/x402-buyer/src/data-mode.ts';

const GENERATED = '2026-11-25T23:31:00.000Z';
const described = (words: string) => ({
  resource: {
    url: 'http://127.0.0.1:8080/api/x402-atlas-human-report.php',
    description: `Atlas human report (people, browser), educational, not advice; ${words} data generated ${GENERATED}`,
  },
});
const body = (data: unknown) => JSON.stringify({ accepts: [], data });

describe('readDataFacts', () => {
  it('reads the body and the header description the paywall writes (paywall-worker/offers.ts)', () => {
    expect(
      readDataFacts(
        described('SIMULATED (not live)'),
        body({ mode: 'simulated', simulated: true, generated_at: GENERATED }),
      ),
    ).toEqual({ mode: 'simulated', generatedAt: GENERATED });
    expect(readDataFacts(described('REPLAY (not live)'), '')).toEqual({
      mode: 'replay',
      generatedAt: GENERATED,
    });
    expect(
      readDataFacts(described('live'), body({ mode: 'live', simulated: false, generated_at: GENERATED })),
    ).toEqual({ mode: 'live', generatedAt: GENERATED });
  });

  it('takes the less live answer when header and body disagree', () => {
    expect(readDataFacts(described('live'), body({ mode: 'simulated', generated_at: GENERATED })).mode).toBe(
      'simulated',
    );
    expect(
      readDataFacts(described('REPLAY (not live)'), body({ mode: 'live', generated_at: GENERATED })).mode,
    ).toBe('replay');
    // "live" beside simulated: true is not believed.
    expect(
      readDataFacts({}, body({ mode: 'live', simulated: true, generated_at: GENERATED })).mode,
    ).toBeNull();
  });

  it('says nothing rather than guessing when neither source states the mode', () => {
    expect(readDataFacts({ resource: { description: 'Atlas human report' } }, 'not json')).toEqual({
      mode: null,
      generatedAt: null,
    });
    expect(readDataFacts(described('live'), body({ mode: 'made-up', generated_at: 'yesterday' }))).toEqual({
      mode: null,
      generatedAt: GENERATED,
    });
  });
});

describe('describeData', () => {
  const now = Date.parse(GENERATED) + 4 * 60_000;

  it('makes simulated and replayed data unmistakable, with the time generated and its age', () => {
    const simulated = describeData({ mode: 'simulated', generatedAt: GENERATED }, now);
    expect(simulated.kind).toBe('simulated');
    expect(simulated.label).toMatch(/^SIMULATED DATA/);
    expect(simulated.detail).toContain('Generated 2026-11-25 23:31 UTC (4 minutes ago).');
    expect(simulated.clause).toBe('SIMULATED data (not real market data), generated 2026-11-25 23:31 UTC');
    expect(describeData({ mode: 'replay', generatedAt: GENERATED }, now).label).toMatch(
      /^REPLAYED DATA: not live/,
    );
    expect(describeData({ mode: 'live', generatedAt: GENERATED }, now).label).toBe('Live data');
  });

  it('treats an unstated mode as not live', () => {
    const unknown = describeData({ mode: null, generatedAt: null }, now);
    expect(unknown.kind).toBe('unknown');
    expect(unknown.label).toContain('not live');
    expect(unknown.detail).toContain('does not say when');
  });
});

describe('ageInWords', () => {
  const at = (seconds: number) => ageInWords(GENERATED, Date.parse(GENERATED) + seconds * 1000);
  it.each([
    [-30, 'just now (by this device’s clock)'],
    [20, 'less than a minute ago'],
    [60, '1 minute ago'],
    [119 * 60, '119 minutes ago'],
    [3 * 3600, '3 hours ago'],
    [3 * 86400, '3 days ago'],
  ])('%d s -> %s', (seconds, words) => {
    expect(at(seconds)).toBe(words);
  });
});
