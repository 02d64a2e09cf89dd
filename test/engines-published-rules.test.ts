// Every published rule is written down where the field is described, and the code does what it says: market-wide
// confidences never rise when an asset's evidence goes missing; `liquidity_context` has no depth label without an
// order book, and the sentences that count it say how many assets had none; the thresholds behind open interest's
// `flat`, liquidations' `dominant_side` and `liquidity_context` are published from the constants the engines read;
// estimated liquidations read as an upper bound, not as liquidations; lesson `agreement` and `pattern_type` say what
// the code does; the docs call an example what it is; `price` says which quote it is.
import { readFile } from 'node:fs/promises';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLesson, currentLessonLabels, type ResolvedRound } from '../generator/engines/arena/lessons.ts';
import type { VoteCounts } from '../generator/engines/arena/consensus.ts';
import type { RunClock } from '../generator/engines/clock.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { readLiquidity } from '../generator/engines/liquidity.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { oiReading, readDerivatives } from '../generator/engines/positioning.ts';
import { buildLlmsTxt } from '../generator/discovery/llms-txt.ts';
import { schemaEntries, toJsonSchema } from '../generator/discovery/json-schema.ts';
import type { AssetMarket, MarketSnapshot } from '../generator/market/types.ts';
import { loadSiteData } from '../generator/site/site-data.ts';
import { buildPlan, SIMULATED_RUN_ORDER } from '../generator/sources/adapters/plan.ts';
import { collectMarket, collectSimulatedMarket } from '../generator/sources/collect.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import * as common from '../schemas/common.ts';
import { TRACKED_ASSETS, type ArenaPrediction, type ArenaReading } from '../schemas/common.ts';
import * as derivativesSchema from '../schemas/derivatives.ts';
import * as liquiditySchema from '../schemas/liquidity-lite.ts';
import { PATTERN_TYPES } from '../schemas/teacher-lessons.ts';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import {
  emptyAsset,
  fixtureAsset,
  fixtureSnapshot,
  FIXTURE_CLOCK,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

// ---------------------------------------------------------------------------------------------------------------
// Helpers

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => v !== null && typeof v === 'object' && !Array.isArray(v);
const branches = (n: Node): Node[] => [n, ...((n.anyOf as Node[] | undefined) ?? []).flatMap(branches)];

/** The published description of the field at `path` of a schema file ("assets.*.liquidity_context"). */
function describedAt(file: string, path: string): string {
  const entry = schemaEntries().find((e) => e.fileName === file);
  if (!entry) throw new Error(`no schema file ${file}`);
  let node = toJsonSchema(entry.schema) as Node;
  for (const part of path.split('.')) {
    const next = branches(node)
      .map((b) =>
        part === '*'
          ? ((isNode(b.additionalProperties) ? b.additionalProperties : b.items) as unknown)
          : isNode(b.properties)
            ? b.properties[part]
            : undefined,
      )
      .find(isNode);
    if (!next) throw new Error(`${file}: no field ${path} (at ${part})`);
    node = next;
  }
  return String(node.description ?? '');
}

const clockAt = (asOf: number): RunClock => ({ asOf, generatedAt: asOf, nextUpdateDue: asOf + 60_000 });

/** The four market-wide confidences of a snapshot. */
function marketWide(snapshot: MarketSnapshot): Record<string, number | null> {
  const clock = clockAt(snapshot.asOf);
  const free = buildFreeSnapshots(snapshot, clock);
  const paid = buildPaidBodies(free, clock);
  return {
    'derivatives confidence': free.derivatives.confidence,
    'main brain brain.average_confidence': free.mainBrain.brain.average_confidence,
    'paid main brain confidence': paid.paidMainBrain.confidence,
    'atlas confidence.overall': paid.atlas.confidence.overall,
  };
}

/** Every way one asset's evidence can go missing: one section, or all of them. */
const SECTIONS = ['candles', 'ticker', 'book', 'funding', 'openInterest', 'liquidations'] as const;
const withoutSection = (
  snapshot: MarketSnapshot,
  symbol: string,
  sections: ReadonlyArray<(typeof SECTIONS)[number]>,
): MarketSnapshot => ({
  ...snapshot,
  assets: snapshot.assets.map((a) =>
    a.symbol === symbol ? { ...a, ...Object.fromEntries(sections.map((s) => [s, null])) } : a,
  ),
});

/** "name: before -> after" for every figure that rose from `before` to `after`. */
const risen = (where: string, before: Record<string, number | null>, after: Record<string, number | null>) =>
  Object.keys(before).flatMap((name) => {
    const b = before[name] ?? null;
    const a = after[name] ?? null;
    const rose = a !== null && (b === null || a > b);
    return rose ? [`${where}: ${name} ${String(b)} -> ${String(a)}`] : [];
  });

/** The times the audit read: a quiet hour and the one where removing XLM's funding raised derivatives 9 -> 34. */
const TIMES = [Date.parse('2025-01-15T12:00:00Z'), Date.parse('2025-03-10T05:00:00Z')];
const simulated = (asOf: number) => collectSimulatedMarket({ seed: 42, asOf, symbols: TRACKED_ASSETS });

/** A book with one level a side: spread `spreadBps` around a mid of 100, `depthUsd` on each side. */
const bookOf = (spreadBps: number, depthUsd: number) => {
  const bid = 100 * (1 - spreadBps / 2e4);
  const ask = 100 * (1 + spreadBps / 2e4);
  return {
    bids: [[bid, depthUsd / bid]] as Array<[number, number]>,
    asks: [[ask, depthUsd / ask]] as Array<[number, number]>,
  };
};
const withBook = (asset: AssetMarket, spreadBps: number, depthUsd: number): AssetMarket => ({
  ...asset,
  book: { value: bookOf(spreadBps, depthUsd), provenance: asset.book!.provenance },
});
/** No order book; a ticker quoting `spreadBps` around the last price. */
const tickerOnly = (asset: AssetMarket, spreadBps: number): AssetMarket => {
  const t = asset.ticker!;
  const last = t.value.last;
  return {
    ...asset,
    book: null,
    ticker: {
      ...t,
      value: { ...t.value, bid: last * (1 - spreadBps / 2e4), ask: last * (1 + spreadBps / 2e4) },
    },
  };
};

// ---------------------------------------------------------------------------------------------------------------

describe('1. a market-wide confidence never rises when an asset’s evidence goes missing', () => {
  it('derivatives, main brain, paid main brain, atlas: any section of any asset removed (simulated venues)', async () => {
    const rises: string[] = [];
    for (const asOf of TIMES) {
      const full = await simulated(asOf);
      const before = marketWide(full);
      for (const symbol of TRACKED_ASSETS) {
        for (const section of SECTIONS) {
          const where = `${new Date(asOf).toISOString()} ${symbol} without ${section}`;
          rises.push(...risen(where, before, marketWide(withoutSection(full, symbol, [section]))));
        }
        const where = `${new Date(asOf).toISOString()} ${symbol} without any data`;
        rises.push(...risen(where, before, marketWide(withoutSection(full, symbol, SECTIONS))));
      }
    }
    expect(rises).toEqual([]);
  }, 120_000);

  it('funding and open interest from binance-usdm only (ALGO, XLM and HBAR lose them): no figure rises', async () => {
    const asOf = TIMES[0]!;
    const all = await simulated(asOf);
    const usdmOnly = await collectMarket({
      transport: createSimulatedTransport({ seed: 42, asOf, symbols: TRACKED_ASSETS, listings: 'with-gaps' }),
      symbols: TRACKED_ASSETS,
      asOf,
      seed: 42,
      plan: buildPlan({ ...SIMULATED_RUN_ORDER, funding: ['binance-usdm'], openInterest: ['binance-usdm'] }),
    });
    const lost = usdmOnly.assets.filter((a) => a.funding === null).map((a) => a.symbol);
    expect(lost).toEqual(['ALGO', 'XLM', 'HBAR']);
    expect(risen('binance-usdm only', marketWide(all), marketWide(usdmOnly))).toEqual([]);
  });

  it('is the mean over all tracked assets, an asset without evidence counting as 0', () => {
    const assets = universe(uptrend);
    // XRP has nothing at all; HBAR has no positioning reading (no funding, no open interest).
    const snapshot = fixtureSnapshot(
      assets.map((a) =>
        a.symbol === 'XRP'
          ? emptyAsset(a.symbol)
          : a.symbol === 'HBAR'
            ? { ...a, funding: null, openInterest: null }
            : a,
      ),
    );
    const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
    const paid = buildPaidBodies(free, FIXTURE_CLOCK);
    const meanOverAll = (values: Array<number | null>) =>
      Math.round(values.reduce<number>((sum, v) => sum + (v ?? 0), 0) / values.length);
    const coins = Object.values(free.mainBrain.coins).map((c) => c.confidence);
    expect(coins).toHaveLength(7);
    expect(coins.filter((c) => c === null)).toHaveLength(1);
    expect(free.mainBrain.brain.average_confidence).toBe(meanOverAll(coins));
    expect(paid.paidMainBrain.confidence).toBe(meanOverAll(coins));
    expect(paid.atlas.confidence.overall).toBe(meanOverAll(Object.values(paid.atlas.confidence.by_asset)));
    const positioning = Object.values(free.derivatives.assets).map((a) => a.confidence);
    expect(positioning.filter((c) => c === null)).toHaveLength(2);
    expect(free.derivatives.confidence).toBe(meanOverAll(positioning));
  });

  it('says so in each field’s published description', () => {
    const rule = (common as Record<string, unknown>).MEAN_OVER_ALL_ASSETS_RULE;
    expect(typeof rule).toBe('string');
    for (const [file, path] of [
      ['derivatives.json', 'confidence'],
      ['main-brain.json', 'brain.average_confidence'],
      ['paid-main-brain.json', 'confidence'],
      ['paid-main-brain.json', 'brain.average_confidence'],
      ['atlas.json', 'confidence.overall'],
    ] as const) {
      const text = describedAt(file, path);
      expect(text, `${file}: ${path}`).toContain(String(rule));
      expect(text, `${file}: ${path}`).toMatch(/counting as 0/);
    }
    expect(describedAt('main-brain.json', 'brain.average_confidence')).not.toMatch(
      /over assets with evidence/,
    );
  });
});

describe('2. liquidity_context rests on an order book, and the sentences that count it say so', () => {
  it('with the book section empty, no asset reads `moderate` or `deep`; `thin` only from a spread past the rule', async () => {
    const full = await simulated(TIMES[0]!);
    const noBooks = { ...full, assets: full.assets.map((a) => ({ ...a, book: null })) };
    const free = buildFreeSnapshots(noBooks, clockAt(full.asOf));
    const rule = (liquiditySchema as Record<string, unknown>).LIQUIDITY_CONTEXT_RULE as
      { thinSpreadBps: number; estimateSlack: number } | undefined;
    expect(rule).toBeDefined();
    for (const a of Object.values(free.liquidityLite.assets)) {
      expect(a.metrics?.bid_depth_usd_1pct ?? null, a.asset).toBeNull();
      expect([null, 'thin'], `${a.asset} reads ${String(a.liquidity_context)}`).toContain(
        a.liquidity_context,
      );
      if (a.liquidity_context === 'thin') {
        const slack = a.metrics?.spread_method === 'high_low_estimate' ? rule!.estimateSlack : 1;
        expect(a.metrics!.spread_bps!).toBeGreaterThan(rule!.thinSpreadBps * slack);
      }
    }
    // The main brain lists exactly the assets that read thin, and names every asset without an order book.
    const thin = Object.values(free.liquidityLite.assets).filter((a) => a.liquidity_context === 'thin');
    expect(free.mainBrain.market_context.thin_liquidity_assets).toEqual(thin.map((a) => a.asset));
    expect(free.mainBrain.brain.limitations.join(' ')).toMatch(/No order book for BTC, .* and HBAR this run/);
  });

  it('without a book a tight quoted spread gives no label, a wide one reads thin', () => {
    const btc = fixtureAsset('BTC', uptrend());
    expect(readLiquidity(tickerOnly(btc, 2)).context).toBeNull();
    expect(readLiquidity(tickerOnly(btc, 80)).context).toBe('thin');
    expect(readLiquidity(btc).context).not.toBeNull(); // with its book it reads as before
  });

  it('the human report counts the assets without an order book instead of "no tracked asset reads thin"', async () => {
    const full = await simulated(TIMES[0]!);
    const noBooks = { ...full, assets: full.assets.map((a) => ({ ...a, book: null })) };
    const clock = clockAt(full.asOf);
    const paid = buildPaidBodies(buildFreeSnapshots(noBooks, clock), clock);
    const liquidity = paid.atlasHumanReport.sections.find((s) => s.id === 'liquidity')!.paragraphs.join(' ');
    expect(liquidity).not.toMatch(/No tracked asset reads thin/);
    expect(liquidity).toMatch(/7 of 7 assets had no order book/);
    // With every book in, nothing is said about missing books.
    const whole = buildPaidBodies(buildFreeSnapshots(full, clock), clock);
    const text = whole.atlasHumanReport.sections.find((s) => s.id === 'liquidity')!.paragraphs.join(' ');
    expect(text).not.toMatch(/no order book/);
    expect(text).toMatch(/of (the )?7 assets/);
  });

  it('the paid regime gives liquidity and leverage a level only when the assets without a reading could not change it (COUNTED_FACTOR_RULE)', async () => {
    const full = await simulated(TIMES[0]!);
    const clock = clockAt(full.asOf);
    const regimeOf = (snapshot: typeof full) =>
      buildPaidBodies(buildFreeSnapshots(snapshot, clock), clock).paidMarketRegime;
    const factorOf = (snapshot: typeof full, factor: string) =>
      regimeOf(snapshot).risk_factors.find((f) => f.factor === factor);

    expect(describedAt('paid-market-regime.json', 'risk_factors')).toContain(
      'gets a level only when the assets without one could not change it',
    );
    // Every book in: liquidity has its level, and the note says nothing about missing books.
    expect(factorOf(full, 'liquidity')!.note).not.toMatch(/no order book/);

    // Five books missing: a calm count from two assets could understate the risk, so no level is given.
    const fiveMissing = {
      ...full,
      assets: full.assets.map((a, i) => (i < 5 ? { ...a, book: null, ticker: null } : a)),
    };
    const read = Object.values(buildFreeSnapshots(fiveMissing, clock).liquidityLite.assets).filter(
      (a) => a.liquidity_context !== null,
    ).length;
    expect(read).toBeLessThan(7);
    expect(factorOf(fiveMissing, 'liquidity')).toBeUndefined();
    expect(regimeOf(fiveMissing).limitations.join(' ')).toMatch(
      new RegExp(
        `Liquidity \\(thin books\\) was read for ${read} of 7 assets: .* anywhere from \\w+ to high`,
      ),
    );

    // Positioning missing for all but one asset: leverage is left out the same way.
    const oneWithPositioning = {
      ...full,
      assets: full.assets.map((a, i) =>
        i === 0 ? a : { ...a, funding: null, openInterest: null, liquidations: null },
      ),
    };
    expect(factorOf(oneWithPositioning, 'leverage')).toBeUndefined();
    expect(regimeOf(oneWithPositioning).limitations.join(' ')).toMatch(
      /Leverage \(crowded positioning\) was read for 1 of 7 assets: the 6 without a reading could put its level anywhere from \w+ to high/,
    );
  });
});

describe('3. the thresholds behind each label are published from the constants the engines read', () => {
  const oiRule = () =>
    (derivativesSchema as Record<string, unknown>).OPEN_INTEREST_RULE as
      { flatBand: number; priceFlatBand: number } | undefined;
  /** The band in the words of every description of an open-interest reading and of the state it gives. */
  const expectBandPublished = (band: number) => {
    const words = `±${Number((band * 100).toFixed(4))} %`;
    for (const [file, path] of [
      ['derivatives.json', 'assets.*.open_interest.reading'],
      ['paid-main-brain.json', 'coins.*.derivatives.open_interest_reading'],
      ['derivatives.json', 'assets.*.state'],
    ] as const)
      expect(describedAt(file, path), `${file}: ${path}`).toContain(words);
  };

  it('open interest `flat`: within the published band, and not at its edge', () => {
    expect(oiRule()).toBeDefined();
    const band = oiRule()!.flatBand;
    expect(oiReading(band * 0.999, 0.01)).toBe('flat');
    expect(oiReading(-band * 0.999, -0.01)).toBe('flat');
    expect(oiReading(band, 0.01)).toBe('new_longs');
    expect(oiReading(-band, -0.01)).toBe('deleveraging');
    expectBandPublished(band);
  });

  it('open interest against a flat price: inside the published price band no side is named, at its edge one is', () => {
    const band = oiRule()!.priceFlatBand;
    expect(band).toBeGreaterThan(0);
    // Before, +0.1 % and -0.1 % read as opposite sides and moved the lean by a whole unit.
    for (const price of [0, band * 0.999, -band * 0.999]) {
      expect(oiReading(0.05, price), `price ${price}`).toBe('new_positions');
      expect(oiReading(-0.05, price), `price ${price}`).toBe('closing_positions');
    }
    expect(oiReading(0.05, band)).toBe('new_longs');
    expect(oiReading(0.05, -band)).toBe('new_shorts');
    expect(oiReading(-0.05, band)).toBe('short_covering');
    expect(oiReading(-0.05, -band)).toBe('deleveraging');
    expectBandPublished(band);
  });

  it('`dominant_side`: longs above the published share, shorts below the other, balanced between', () => {
    const rule = (derivativesSchema as Record<string, unknown>).LIQUIDATION_SIDE_RULE as
      { longsAbove: number; shortsBelow: number } | undefined;
    expect(rule).toBeDefined();
    const dominant = (longUsd24h: number, shortUsd24h: number) =>
      readDerivatives(
        fixtureAsset('BTC', uptrend(), { liquidations: { longUsd24h, shortUsd24h, events: 10 } }),
        0.01,
        1e9,
      ).liquidations!.dominant;
    const total = 1_000_000;
    expect(dominant(total * (rule!.longsAbove + 0.001), total * (1 - rule!.longsAbove - 0.001))).toBe(
      'longs',
    );
    expect(dominant(total * rule!.longsAbove, total * (1 - rule!.longsAbove))).toBe('balanced');
    expect(dominant(total * rule!.shortsBelow, total * (1 - rule!.shortsBelow))).toBe('balanced');
    expect(dominant(total * (rule!.shortsBelow - 0.001), total * (1 - rule!.shortsBelow + 0.001))).toBe(
      'shorts',
    );
    expect(dominant(0, 0)).toBe('none');
    // The audit's BTC: 63,333 of longs against 83,934 of shorts (43 % longs) is `balanced`, and the field says why.
    expect(dominant(63_333, 83_934)).toBe('balanced');
    const text = describedAt('derivatives.json', 'assets.*.liquidations.dominant_side');
    expect(text).toContain(`${rule!.longsAbove * 100} %`);
    expect(text).toContain(`${rule!.shortsBelow * 100} %`);
    expect(text).not.toMatch(/^`longs` \/ `shorts`: which side was liquidated more; `balanced`;/);
  });

  it('`liquidity_context`: spread and depth cut-offs, at their edges', () => {
    const rule = (liquiditySchema as Record<string, unknown>).LIQUIDITY_CONTEXT_RULE as
      | {
          deepSpreadBps: number;
          thinSpreadBps: number;
          deepDepthUsd: number;
          thinDepthUsd: number;
          estimateSlack: number;
        }
      | undefined;
    expect(rule).toBeDefined();
    const r = rule!;
    const btc = fixtureAsset('BTC', uptrend());
    const context = (spreadBps: number, depthUsd: number) =>
      readLiquidity(withBook(btc, spreadBps, depthUsd)).context;
    expect(context(r.deepSpreadBps * 0.99, r.deepDepthUsd * 1.01)).toBe('deep');
    expect(context(r.deepSpreadBps * 1.01, r.deepDepthUsd * 1.01)).toBe('moderate');
    expect(context(r.deepSpreadBps * 0.99, r.deepDepthUsd * 0.99)).toBe('moderate');
    expect(context(r.thinSpreadBps * 0.99, r.thinDepthUsd * 1.01)).toBe('moderate');
    expect(context(r.thinSpreadBps * 1.01, r.deepDepthUsd * 1.01)).toBe('thin');
    expect(context(r.deepSpreadBps * 0.99, r.thinDepthUsd * 0.99)).toBe('thin');
    expect(readLiquidity(tickerOnly(btc, r.thinSpreadBps * 1.01)).context).toBe('thin');
    expect(readLiquidity(tickerOnly(btc, r.thinSpreadBps * 0.99)).context).toBeNull();
    const usd = (n: number) => n.toLocaleString('en-US');
    for (const [file, path] of [
      ['liquidity-lite.json', 'assets.*.liquidity_context'],
      ['atlas.json', 'intelligence_layer.assets.*.liquidity_context'],
      ['paid-main-brain.json', 'coins.*.liquidity.liquidity_context'],
    ] as const) {
      const text = describedAt(file, path);
      for (const words of [
        `${r.deepSpreadBps} bps`,
        `${r.thinSpreadBps} bps`,
        `${usd(r.deepDepthUsd)} USD`,
        `${usd(r.thinDepthUsd)} USD`,
        `${r.thinSpreadBps * r.estimateSlack} bps`,
      ])
        expect(text, `${file}: ${path}`).toContain(words);
      expect(text, `${file}: ${path}`).toMatch(/no order book/i);
    }
  });
});

describe('4. estimated liquidations read as an upper bound, not as liquidations', () => {
  const estimated = { longUsd24h: 790_520_000, shortUsd24h: 179_940_000, events: 0, estimated: true };

  it('the evidence calls the figures an upper-bound estimate from open-interest drops', () => {
    const d = readDerivatives(fixtureAsset('BTC', uptrend(), { liquidations: estimated }), 0.01, 1e9);
    const line = d.evidence.find((l) => /liquidat/i.test(l))!;
    expect(line).toMatch(/upper bound/i);
    expect(line).toMatch(/not liquidations observed/);
    expect(line).not.toMatch(/^Liquidations over 24 hours:/);
    const observed = readDerivatives(fixtureAsset('BTC', uptrend()), 0.01, 1e9);
    expect(observed.evidence.find((l) => /liquidat/i.test(l))).toMatch(/^Liquidations over 24 hours:/);
  });

  it('publishes no dominant side from an estimate, and the field says why', () => {
    const snapshot = fixtureSnapshot([
      fixtureAsset('BTC', uptrend(), { liquidations: estimated }),
      fixtureAsset('ETH', uptrend(), { liquidations: { longUsd24h: 9e6, shortUsd24h: 1e6, events: 30 } }),
    ]);
    const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
    const parsed = derivativesSchema.DerivativesResponse.parse(free.derivatives);
    expect(parsed.assets.BTC!.liquidations).toMatchObject({
      estimated: true,
      events: null,
      dominant_side: null,
    });
    expect(parsed.assets.ETH!.liquidations).toMatchObject({ estimated: false, dominant_side: 'longs' });
    expect(describedAt('derivatives.json', 'assets.*.liquidations.dominant_side')).toMatch(
      /null when the figures are estimated/,
    );
  });
});

describe('5. wording matches what the code does', () => {
  const round = (brainCall: ArenaReading, counts: VoteCounts, outcome: ArenaPrediction): ResolvedRound => ({
    roundId: 'BTC-20250101T10Z',
    asset: 'BTC',
    brainCall,
    brainConfidence: brainCall === 'NONE' ? null : 60,
    counts,
    humanVotes: counts.bullish + counts.bearish + counts.neutral,
    syntheticVotes: 0,
    outcome,
    returnFraction: outcome === 'BULLISH' ? 0.01 : outcome === 'BEARISH' ? -0.01 : 0,
    resolvedAt: Date.parse('2025-01-01T11:05:00Z'),
    replayed: false,
  });
  const CROWDS: Record<string, VoteCounts> = {
    none: { bullish: 0, bearish: 0, neutral: 0 },
    tie: { bullish: 2, bearish: 2, neutral: 0 },
    bullish: { bullish: 3, bearish: 1, neutral: 0 },
    bearish: { bullish: 1, bearish: 3, neutral: 0 },
    neutral: { bullish: 0, bearish: 1, neutral: 3 },
  };
  const CALLS: ArenaReading[] = ['BULLISH', 'BEARISH', 'NEUTRAL', 'NONE'];
  const OUTCOMES: ArenaPrediction[] = ['BULLISH', 'BEARISH', 'NEUTRAL'];
  const everyLesson = () =>
    CALLS.flatMap((call) =>
      Object.values(CROWDS).flatMap((counts) =>
        OUTCOMES.map((outcome) => buildLesson(round(call, counts, outcome))),
      ),
    );

  it('(a) lesson `agreement` is 1 only when both called and called the same side, as its description says', () => {
    for (const l of everyLesson()) {
      const both = l.brain_prediction !== 'NONE' && l.human_consensus !== 'NONE';
      expect(l.agreement, l.summary).toBe(both && l.brain_prediction === l.human_consensus ? 1 : 0);
    }
    const text = describedAt('teacher-lessons.json', 'latest_lessons.*.agreement');
    expect(text).not.toBe('1 when brain_prediction equals human_consensus');
    expect(text).toMatch(/NONE/);
  });

  it('(a) `pattern_type` agrees with the summary: a brain without a call is never split_both_wrong', () => {
    const wrong: string[] = [];
    for (const l of everyLesson()) {
      const brainNoCall = /Brain made no call/.test(l.summary);
      const crowdNoCall = /crowd (absent|made no call)/.test(l.summary);
      const expected =
        brainNoCall && crowdNoCall
          ? 'neither_called'
          : brainNoCall
            ? 'crowd_only_no_brain'
            : crowdNoCall
              ? 'brain_only_no_crowd'
              : null;
      if (expected !== null && l.pattern_type !== expected) wrong.push(`${l.pattern_type}: ${l.summary}`);
      if (l.pattern_type === 'split_both_wrong' && !/Brain wrong, crowd wrong/.test(l.summary))
        wrong.push(`${l.pattern_type}: ${l.summary}`);
    }
    expect(wrong).toEqual([]);
    expect(PATTERN_TYPES).toEqual(expect.arrayContaining(['crowd_only_no_brain', 'neither_called']));
    // A lesson stored before the fix is published with the labels of the rule.
    const stored = {
      ...buildLesson(round('NONE', CROWDS.bearish!, 'BULLISH')),
      pattern_type: 'split_both_wrong' as const,
    };
    expect(currentLessonLabels(stored).pattern_type).toBe('crowd_only_no_brain');
  });

  it('(b) the docs name a free example for what it is, with its data mode, never “Live example”', async () => {
    const template = await readFile(join(import.meta.dirname, '..', 'site', 'docs', 'endpoint.njk'), 'utf8');
    expect(template).not.toMatch(/Live example/);
    expect(template).toMatch(/Example from the latest run/);
    expect(buildLlmsTxt({ baseUrl: 'https://emi.test', hasBuyer: false })).not.toMatch(/live example/i);
    const dir = await mkdtemp(join(tmpdir(), 'emi-rules-site-'));
    try {
      const full = await simulated(TIMES[0]!);
      const free = buildFreeSnapshots(full, clockAt(full.asOf));
      const derivatives = FREE_RESOURCES.find((r) => r.id === 'derivatives')!;
      await mkdir(join(dir, 'api'), { recursive: true });
      await writeFile(join(dir, derivatives.file), JSON.stringify(free.derivatives));
      const data = await loadSiteData({ siteDir: dir, baseUrl: 'https://emi.test' });
      const page = data.endpoints.find((e) => e.id === 'derivatives')!;
      expect(page.exampleNote).toMatch(/simulated/i);
      expect(page.exampleNote).not.toMatch(/\blive\b/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('(c) `price` says it is in US dollars from the venue `price_source` names, USDT taken at par', () => {
    for (const [file, path] of [
      ['main-brain.json', 'coins.*.price'],
      ['liquidity-lite.json', 'assets.*.price'],
      ['atlas.json', 'intelligence_layer.assets.*.price'],
      ['paid-main-brain.json', 'coins.*.market.price'],
    ] as const) {
      const text = describedAt(file, path);
      expect(text, `${file}: ${path}`).not.toMatch(/USDT quote/);
      expect(text, `${file}: ${path}`).toMatch(/price_source/);
      expect(text, `${file}: ${path}`).toMatch(/Coinbase.*Kraken.*CoinGecko/);
      expect(text, `${file}: ${path}`).toMatch(/USDT/);
    }
  });

  it('(d) the sources README says estimated liquidations carry `events: null`, as the body publishes', async () => {
    const readme = await readFile(
      join(import.meta.dirname, '..', 'generator', 'sources', 'README.md'),
      'utf8',
    );
    const paragraph = readme.split('\n- ').find((p) => p.startsWith('**Estimated liquidations'))!;
    expect(paragraph).toBeDefined();
    expect(paragraph).not.toMatch(/`events: 0`/);
    expect(paragraph).toMatch(/`events: null`/);
    const free = buildFreeSnapshots(
      fixtureSnapshot([
        fixtureAsset('BTC', uptrend(), {
          liquidations: { longUsd24h: 1e6, shortUsd24h: 1e6, events: 0, estimated: true },
        }),
      ]),
      FIXTURE_CLOCK,
    );
    expect(free.derivatives.assets.BTC!.liquidations!.events).toBeNull();
  });
});
