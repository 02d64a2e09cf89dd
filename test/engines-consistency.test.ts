// The free and paid bodies of one run never contradict each other: the summary of an asset names the readings the
// paid `agreement` compares, funding words say the rule that set the level, the 30-day z-score looks back 30 days
// whatever the venue's interval, a degraded body lists why, and no limitation repeats its asset prefix.
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots, type FreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies, type PaidBodies } from '../generator/engines/paid/index.ts';
import { readFunding } from '../generator/engines/positioning.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { collectSimulatedMarket } from '../generator/sources/collect.ts';
import { TRACKED_ASSETS, type Bias } from '../schemas/common.ts';
import { DerivativesAsset, FUNDING_RULE } from '../schemas/derivatives.ts';
import {
  crash,
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  reversal,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

/** The simulated run the audit read: seed 42 with the default plan's venue gaps (XLM and HBAR on fallbacks). */
const DEFAULT_AS_OF = Date.parse('2026-11-25T23:00:00Z');
const defaultRun = (asOf = DEFAULT_AS_OF) =>
  collectSimulatedMarket({ seed: 42, asOf, symbols: TRACKED_ASSETS });

const bodiesOf = (snapshot: MarketSnapshot): { free: FreeSnapshots; paid: PaidBodies } => {
  const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
  return { free, paid: buildPaidBodies(free, FIXTURE_CLOCK) };
};

/** BTC with crowded longs on a strong uptrend: the brain reads bullish, positioning bearish. */
const conflictingBtc = () =>
  fixtureSnapshot([
    fixtureAsset('BTC', uptrend(), { fundingRate: 0.0012, openInterestChange: 0.01 }),
    ...universe(uptrend, {}, ['ETH', 'XRP']),
  ]);

/** An open-interest venue that gives one point (no 24-hour change), as Hyperliquid and OKX do. */
const onePointOpenInterest = (snapshot: MarketSnapshot, symbols: readonly string[]): MarketSnapshot => {
  for (const asset of snapshot.assets)
    if (symbols.includes(asset.symbol) && asset.openInterest) {
      const { valueUsd } = asset.openInterest.value;
      asset.openInterest.value = { valueUsd, history: [{ time: snapshot.asOf, valueUsd }] };
    }
  return snapshot;
};

const scenarios = async (): Promise<Array<[string, MarketSnapshot]>> => [
  ['default simulated run', await defaultRun()],
  ['another hour of it', await defaultRun(DEFAULT_AS_OF - 5 * 24 * 3_600_000)],
  ['brain and positioning conflict', conflictingBtc()],
  ['uptrend', fixtureSnapshot(universe(uptrend))],
  ['crash', fixtureSnapshot(universe(crash, { openInterestChange: -0.12 }))],
  ['reversal', fixtureSnapshot(universe(reversal, { openInterestChange: 0.08 }))],
  ['one-point open interest', onePointOpenInterest(fixtureSnapshot(universe(uptrend)), ['XLM', 'HBAR'])],
  [
    'estimated liquidations',
    fixtureSnapshot(
      universe(uptrend, { liquidations: { longUsd24h: 5e6, shortUsd24h: 1e6, events: 4, estimated: true } }),
    ),
  ],
];

const OPPOSITE: Record<Bias, Bias | null> = { bullish: 'bearish', bearish: 'bullish', neutral: null };

describe('an asset summary and the paid agreement describe one picture', () => {
  it('names the readings the agreement compares, and says which lean the other way', async () => {
    for (const [name, snapshot] of await scenarios()) {
      const { paid } = bodiesOf(snapshot);
      for (const coin of Object.values(paid.paidMainBrain.coins)) {
        const where = `${name}: ${coin.asset}`;
        const { brain, derivatives, order_book: book } = coin.agreement_readings;
        if (brain === null) continue;
        // No overall agreement claim of another kind sits beside the paid label.
        expect(coin.summary, where).not.toMatch(/signals (largely|partly) agree|signals are mixed/);
        expect(coin.reasoning?.summary ?? coin.summary, where).toBe(coin.summary);
        if (derivatives === null && book === null)
          expect(coin.summary, where).toContain('no positioning or order-book reading to compare');
        else
          for (const [words, vote] of [
            ['positioning', derivatives],
            ['the order book', book],
          ] as const) {
            if (vote === null) expect(coin.summary, where).not.toContain(words);
            else expect(coin.summary, where).toContain(words);
          }
        const other = OPPOSITE[brain];
        if (other !== null && [derivatives, book].includes(other))
          expect(coin.summary, where).toContain(`the other way (${other})`);
        else expect(coin.summary, where).not.toContain('the other way');
        expect(coin.agreement === 'conflicting', where).toBe(
          [brain, derivatives, book].includes('bullish') && [brain, derivatives, book].includes('bearish'),
        );
      }
    }
  });

  it('reads BTC of the default run as the audit found it: bearish brain, bullish positioning, no agreement claim', async () => {
    const { free, paid } = bodiesOf(await defaultRun());
    const btc = paid.paidMainBrain.coins.BTC!;
    expect(btc.agreement).toBe('conflicting');
    expect(free.mainBrain.coins.BTC!.summary).toMatch(
      /leans bearish .*positioning leans the other way \(bullish\)/,
    );
    expect(free.reasoning.BTC!.reasoning.summary).toBe(free.mainBrain.coins.BTC!.summary);
  });

  it('the atlas and the human report name the readings that point opposite ways, as agreement_readings has them', () => {
    const { paid } = bodiesOf(conflictingBtc());
    const btc = paid.atlas.intelligence_layer.assets.BTC!;
    expect(btc.agreement).toBe('conflicting');
    expect(paid.atlas.summary.conflicting).toEqual(['BTC']);
    const readings = paid.paidMainBrain.coins.BTC!.agreement_readings;
    expect(paid.atlas.summary.text).toContain(
      `BTC (brain ${readings.brain}, positioning ${readings.derivatives})`,
    );
    expect(paid.atlas.summary.text).not.toMatch(/positioning and trend disagree/);
    const report = JSON.stringify(paid.atlasHumanReport.sections);
    expect(report).toContain(`BTC (brain ${readings.brain}, positioning ${readings.derivatives})`);
    expect(report).not.toMatch(/Trend and positioning point opposite ways/);
  });
});

describe('funding level words say the rule that set the level', () => {
  // A month of settled rates around -0.05 % per 8 h, widely spread: -0.055 % is at the fixed extreme mark but
  // ordinary for this history.
  const history8h = Array.from({ length: 90 }, (_, i) => -0.0005 + ((i % 7) - 3) * 0.0001);
  const funding = {
    rate8h: -0.00055,
    rateKind: 'predicted' as const,
    intervalHours: 8,
    markPrice: 100,
    indexPrice: 100,
    history8h,
  };

  it('an extreme set by the fixed mark is said to be so, not "against its recent history"', () => {
    const snapshot = fixtureSnapshot([fixtureAsset('BTC', uptrend())]);
    snapshot.assets[0]!.funding!.value = funding;
    const btc = buildFreeSnapshots(snapshot, FIXTURE_CLOCK).derivatives.assets.BTC!;
    expect(btc.funding!.level).toBe('extreme_low');
    expect(Math.abs(btc.funding!.z_score_30d!)).toBeLessThan(FUNDING_RULE.highZ);
    const line = btc.evidence!.find((l) => l.includes('per 8 hours'))!;
    expect(line).not.toMatch(/extreme low against its recent history/);
    expect(line).toContain(`fixed mark of -${(-FUNDING_RULE.extremeLow8h * 100).toFixed(2)}%`);
  });

  it('a level said to be "against its recent history" has the z-score its level needs', async () => {
    const bands = {
      extreme_high: (z: number) => z >= FUNDING_RULE.extremeZ,
      extreme_low: (z: number) => z <= -FUNDING_RULE.extremeZ,
      high: (z: number) => z >= FUNDING_RULE.highZ,
      low: (z: number) => z <= -FUNDING_RULE.highZ,
      normal: (z: number) => Math.abs(z) < FUNDING_RULE.highZ,
    };
    for (const [name, snapshot] of await scenarios()) {
      const { free } = bodiesOf(snapshot);
      for (const asset of Object.values(free.derivatives.assets)) {
        const f = asset.funding;
        const line = asset.evidence?.find((l) => l.includes('per 8 hours')) ?? '';
        if (f === null || !line.includes('against its recent history')) continue;
        expect(f.z_score_30d, `${name}: ${asset.asset}`).not.toBeNull();
        expect(bands[f.level](f.z_score_30d!), `${name}: ${asset.asset} ${line}`).toBe(true);
      }
    }
  });

  it('the published descriptions of level and crowding state the fixed marks', () => {
    const detail = DerivativesAsset.shape.funding.unwrap().shape;
    for (const mark of [FUNDING_RULE.extremeHigh8h, FUNDING_RULE.extremeLow8h])
      expect(detail.level.description).toContain(`${Number((mark * 100).toFixed(4))} %`);
    expect(detail.level.description).not.toMatch(/top of its history/);
    expect(detail.crowding.description).toContain('extreme_high');
  });
});

describe('the 30-day z-score looks back 30 days at any settlement interval', () => {
  const rates = (n: number) => Array.from({ length: n }, (_, i) => 0.0001 + (i % 5) * 0.00001);
  const at = (intervalHours: number, history8h: number[]) =>
    readFunding(
      { rate8h: 0.0001, rateKind: 'predicted', intervalHours, markPrice: null, indexPrice: null, history8h },
      'v',
    );

  it('counts the settlements of 30 days: 90 at 8 h, 180 at 4 h, 720 at 1 h', () => {
    for (const interval of [8, 4, 1]) {
      const month = (FUNDING_RULE.windowDays * 24) / interval;
      expect(at(interval, rates(1000)).historyPoints, `${interval} h`).toBe(month);
      // A venue that gave less history is read with what it gave (Hyperliquid: 20 days of hourly rates).
      expect(at(interval, rates(month - 7)).historyPoints, `${interval} h`).toBe(month - 7);
    }
  });

  it('reads the whole month, and nothing older', () => {
    // An hourly venue: 40 days at -0.1 %, then 26 days around 0.03 %, then 4 days around the 0.01 % base rate.
    // The current 0.03 % is ordinary for the month; against the last 4 days alone, or everything, it would not be.
    const around = (n: number, centre: number) =>
      Array.from({ length: n }, (_, i) => centre + ((i % 5) - 2) * 0.00002);
    const history8h = [...around(960, -0.001), ...around(630, 0.0003), ...around(90, 0.0001)];
    const reading = readFunding(
      {
        rate8h: 0.0003,
        rateKind: 'predicted',
        intervalHours: 1,
        markPrice: null,
        indexPrice: null,
        history8h,
      },
      'v',
    );
    expect(reading.historyPoints).toBe(720);
    expect(reading.level).toBe('normal');
  });

  it('publishes how many settled rates, and the evidence says how many days they span', () => {
    const snapshot = fixtureSnapshot([fixtureAsset('BTC', uptrend())]);
    snapshot.assets[0]!.funding!.value = {
      ...snapshot.assets[0]!.funding!.value,
      intervalHours: 4,
      history8h: rates(100),
    };
    const btc = buildFreeSnapshots(snapshot, FIXTURE_CLOCK).derivatives.assets.BTC!;
    expect(btc.funding!.history_points).toBe(100);
    expect(btc.evidence!.join(' ')).toContain('100 settled rates of the last 17 days');
  });
});

describe('a degraded body lists why', () => {
  const named = (lines: readonly string[] | null, symbol: string) =>
    (lines ?? []).some((l) => new RegExp(`\\b${symbol}\\b`).test(l));

  it('derivatives: every asset with a limitation is named in the body-wide limitations', async () => {
    for (const [name, snapshot] of await scenarios()) {
      const { free } = bodiesOf(snapshot);
      const d = free.derivatives;
      expect(d.status === 'degraded', name).toBe(d.source_details.degraded);
      if (d.status === 'degraded') expect(d.limitations, name).not.toEqual([]);
      for (const asset of Object.values(d.assets))
        if ((asset.limitations ?? []).length > 0)
          expect(named(d.limitations, asset.asset), `${name}: ${asset.asset}`).toBe(true);
    }
  });

  it('reasoning and main brain: a degraded reading has limitations, and the main brain names its asset', async () => {
    for (const [name, snapshot] of await scenarios()) {
      const { free } = bodiesOf(snapshot);
      for (const [symbol, body] of Object.entries(free.reasoning)) {
        if (body.source.degraded) expect(body.reasoning.limitations, `${name}: ${symbol}`).not.toEqual([]);
        if (body.reasoning.data_status === 'partial')
          expect(named(free.mainBrain.brain.limitations, symbol), `${name}: ${symbol}`).toBe(true);
      }
      if (free.mainBrain.status === 'degraded')
        expect(free.mainBrain.brain.limitations, name).not.toEqual([]);
    }
  });

  it('the default run: the one-point open interest of XLM and HBAR is listed in every free body', async () => {
    const { free, paid } = bodiesOf(await defaultRun());
    const line = /open-interest history too short/;
    expect(free.derivatives.status).toBe('degraded');
    expect(free.derivatives.limitations!.join(' ')).toMatch(/XLM and HBAR: open-interest history too short/);
    for (const symbol of ['XLM', 'HBAR']) {
      expect(free.reasoning[symbol]!.reasoning.limitations.join(' '), symbol).toMatch(line);
      expect(free.reasoning[symbol]!.source.degraded, symbol).toBe(true);
      expect(paid.paidMainBrain.coins[symbol]!.limitations.join(' '), symbol).toMatch(line);
    }
    expect(free.mainBrain.brain.limitations.join(' ')).toMatch(line);
  });
});

describe('a limitation carries its asset prefix once', () => {
  it('in the atlas, the human report and the paid main brain', async () => {
    for (const [name, snapshot] of await scenarios()) {
      const { paid } = bodiesOf(snapshot);
      const text = JSON.stringify(paid);
      expect(text.match(/\b([A-Z]{2,5}): \1: /), name).toBeNull();
    }
    const { paid } = bodiesOf(onePointOpenInterest(fixtureSnapshot(universe(uptrend)), ['XLM']));
    expect(paid.atlas.limitations).toContain(
      'XLM: open-interest history too short for a 24-hour comparison.',
    );
  });
});
