// Property-style check of the honesty rule: every combination of missing sections (and the weaker readings a
// venue can hand in: too few candles, an empty book, a collection issue), for one asset and for several, builds
// bodies whose every degraded or weaker reading says why, naming the asset and the missing piece. A complete
// snapshot carries no missing-data limitation at all.
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots, type FreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies, type PaidBodies } from '../generator/engines/paid/index.ts';
import type { AssetMarket, MarketSnapshot, SourceIssue } from '../generator/market/types.ts';
import { PERFORMANCE_STORE_UNAVAILABLE } from '../schemas/performance.ts';
import { FIXTURE_CLOCK, fixtureAsset, fixtureSnapshot, SEVEN, uptrend } from './helpers/market-fixtures.ts';

const SECTIONS = ['candles', 'ticker', 'book', 'funding', 'openInterest', 'liquidations'] as const;
type Section = (typeof SECTIONS)[number];

/** How a body names each piece. */
const WORDS: Record<Section, RegExp> = {
  candles: /candle/i,
  ticker: /ticker/i,
  book: /order book/i,
  funding: /funding/i,
  openInterest: /open[- ]interest/i,
  liquidations: /liquidation/i,
};
const PRICE_ISSUE = 'price differs from the reference venue beyond the cross-venue threshold';

/** A section that came in, but weaker than usual. */
type Weak = 'none' | 'few-candles' | 'empty-book' | 'price-issue' | 'collector-issues';
const WEAK: readonly Weak[] = ['none', 'few-candles', 'empty-book', 'price-issue', 'collector-issues'];

/** A piece a body must name for an affected asset: what it is and how to recognise it. */
interface Piece {
  name: string;
  pattern: RegExp;
}

interface Case {
  name: string;
  snapshot: MarketSnapshot;
  affected: readonly string[];
  missing: readonly Section[];
  weak: Weak;
  /** The bodies of the same universe with nothing missing. */
  baseline: Bodies;
}

interface Bodies {
  free: FreeSnapshots;
  paid: PaidBodies;
}

const bodiesOf = (snapshot: MarketSnapshot): Bodies => {
  const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
  return { free, paid: buildPaidBodies(free, FIXTURE_CLOCK) };
};

const SHAPES: ReadonlyArray<{ name: string; symbols: readonly string[]; affected: readonly string[] }> = [
  { name: 'one asset', symbols: ['BTC'], affected: ['BTC'] },
  { name: 'two of seven', symbols: SEVEN, affected: ['BTC', 'XLM'] },
  { name: 'all seven', symbols: SEVEN, affected: SEVEN },
];

// Same paths as `universe(uptrend)`, so one asset alone reads as it does among the seven.
const completeAsset = (symbol: string): AssetMarket =>
  fixtureAsset(
    symbol,
    uptrend(
      10 + 10 * SEVEN.indexOf(symbol as (typeof SEVEN)[number]),
      1 + SEVEN.indexOf(symbol as (typeof SEVEN)[number]),
    ),
  );

/** The issue the collector records for a section that ended without data (see collectSection). */
const collectorIssue = (symbol: string, section: Section): SourceIssue => ({
  venue: 'okx',
  symbol,
  section,
  message: 'the venue returned no data for this symbol',
});

function degrade(asset: AssetMarket, missing: readonly Section[], weak: Weak): AssetMarket {
  const out: AssetMarket = { ...asset };
  for (const section of missing) out[section] = null;
  if (weak === 'few-candles' && out.candles)
    out.candles = { ...out.candles, value: out.candles.value.slice(-30) };
  if (weak === 'empty-book' && out.book) out.book = { ...out.book, value: { bids: [], asks: [] } };
  return out;
}

function issuesFor(symbol: string, missing: readonly Section[], weak: Weak): SourceIssue[] {
  if (weak === 'collector-issues') return missing.map((section) => collectorIssue(symbol, section));
  if (weak === 'price-issue')
    return [{ venue: 'binance-spot', symbol, section: 'ticker', message: PRICE_ISSUE }];
  return [];
}

/** A weak variant only makes sense when its section came in. */
const applies = (weak: Weak, missing: readonly Section[]): boolean =>
  weak === 'few-candles'
    ? !missing.includes('candles')
    : weak === 'empty-book'
      ? !missing.includes('book')
      : weak === 'price-issue'
        ? !missing.includes('ticker')
        : weak === 'collector-issues'
          ? missing.length > 0
          : true;

function cases(): Case[] {
  const out: Case[] = [];
  for (const shape of SHAPES) {
    const baseline = bodiesOf(fixtureSnapshot(shape.symbols.map(completeAsset)));
    for (let mask = 0; mask < 1 << SECTIONS.length; mask++) {
      const missing = SECTIONS.filter((_, i) => mask & (1 << i));
      for (const weak of WEAK) {
        if (!applies(weak, missing) || (mask === 0 && weak === 'none')) continue;
        const assets = shape.symbols.map((s) =>
          shape.affected.includes(s) ? degrade(completeAsset(s), missing, weak) : completeAsset(s),
        );
        const issues = shape.affected.flatMap((s) => issuesFor(s, missing, weak));
        out.push({
          name: `${shape.name}, missing [${missing.join(', ')}], ${weak}`,
          snapshot: fixtureSnapshot(assets, { issues }),
          affected: shape.affected,
          missing,
          weak,
          baseline,
        });
      }
    }
  }
  return out;
}

/** What a body reads: the sections whose absence it must name, and the weaker readings it must name. */
interface Reads {
  sections: readonly Section[];
  weak: readonly Weak[];
}

const WEAK_PIECES: Partial<Record<Weak, Piece>> = {
  'few-candles': { name: 'too few candles', pattern: WORDS.candles },
  'empty-book': { name: 'empty order book', pattern: WORDS.book },
  'price-issue': { name: 'price issue', pattern: /cross-venue threshold/ },
};

/** What an affected asset lacks or had weaker, among what the body reads. */
function piecesOf(c: Case, reads: Reads): Piece[] {
  const pieces: Piece[] = c.missing
    .filter((s) => reads.sections.includes(s))
    .map((s) => ({ name: `missing ${s}`, pattern: WORDS[s] }));
  const weak = WEAK_PIECES[c.weak];
  if (weak && reads.weak.includes(c.weak)) pieces.push(weak);
  return pieces;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Some line names both the asset and the piece. */
const names = (lines: readonly string[] | null | undefined, symbol: string, piece: Piece): boolean =>
  (lines ?? []).some((l) => new RegExp(`\\b${escape(symbol)}\\b`).test(l) && piece.pattern.test(l));

/** Checks one body of one case; returns the failures as readable lines. */
function check(
  c: Case,
  body: string,
  degraded: boolean,
  limitations: readonly string[] | null | undefined,
  reads: Reads,
  symbols: readonly string[] = c.affected,
): string[] {
  if (!degraded) return [];
  if ((limitations ?? []).length === 0) return [`${c.name}: ${body} is degraded with no limitation`];
  return symbols.flatMap((symbol) =>
    piecesOf(c, reads)
      .filter((piece) => !names(limitations, symbol, piece))
      .map((piece) => `${c.name}: ${body} does not name ${symbol}'s ${piece.name}`),
  );
}

// The brain reads every section; a weaker section shows in its confidence, so each body built on it names it.
const BRAIN: Reads = { sections: SECTIONS, weak: ['few-candles', 'empty-book', 'price-issue'] };
const ASSET: Reads = {
  sections: ['candles', 'ticker', 'book', 'funding', 'openInterest'],
  weak: BRAIN.weak,
};
const REGIME: Reads = { sections: ['candles'], weak: ['few-candles'] };
// Liquidity reads its own sections only; a weaker one of them (a relative volume too few candles cannot give, a data
// issue on the ticker) marks its entry partial.
const LIQUIDITY: Reads = {
  sections: ['candles', 'ticker', 'book'],
  weak: ['few-candles', 'empty-book', 'price-issue'],
};
const DERIVATIVES: Reads = { sections: ['funding', 'openInterest', 'liquidations'], weak: [] };

function failuresOf(c: Case): string[] {
  const { free, paid } = bodiesOf(c.snapshot);
  const base = c.baseline.free;
  const failures: string[] = [];

  // Main brain: any status flag, a partial coin, or a confidence that moved from the complete reading.
  const mb = free.mainBrain;
  const mbDegraded =
    mb.status === 'degraded' ||
    mb.brain.status === 'degraded' ||
    mb.source.degraded ||
    Object.values(mb.coins).some(
      (coin) =>
        coin.data_status !== 'available' || coin.confidence !== base.mainBrain.coins[coin.asset]!.confidence,
    ) ||
    mb.brain.average_confidence !== base.mainBrain.brain.average_confidence;
  failures.push(...check(c, 'main brain', mbDegraded, mb.brain.limitations, BRAIN));

  const pmb = paid.paidMainBrain;
  failures.push(...check(c, 'paid main brain', mbDegraded, pmb.limitations, BRAIN));
  for (const symbol of c.affected) {
    const coin = pmb.coins[symbol]!;
    const baseCoin = c.baseline.paid.paidMainBrain.coins[symbol]!;
    const coinDegraded =
      coin.data_status !== 'available' ||
      coin.confidence !== baseCoin.confidence ||
      (coin.derivatives?.confidence ?? null) !== (baseCoin.derivatives?.confidence ?? null);
    failures.push(
      ...check(c, `paid main brain coin ${symbol}`, coinDegraded, coin.limitations, BRAIN, [symbol]),
    );
  }

  const mr = free.marketRegime;
  const mrDegraded =
    mr.status === 'degraded' || mr.source.degraded || mr.confidence !== base.marketRegime.confidence;
  failures.push(...check(c, 'market regime', mrDegraded, mr.regime.limitations, REGIME));

  const ll = free.liquidityLite;
  // A null status is whole simulated data (not verified, not partial).
  const llDegraded =
    ll.source_details.degraded ||
    Object.values(ll.assets).some((a) => a.status === 'partial' || a.status === 'unavailable');
  failures.push(...check(c, 'liquidity lite', llDegraded, ll.limitations, LIQUIDITY));
  if (piecesOf(c, LIQUIDITY).length > 0 && !ll.source_details.degraded)
    failures.push(`${c.name}: liquidity lite lacks a piece it reads but is not degraded`);

  const d = free.derivatives;
  const dDegraded =
    d.status === 'degraded' ||
    d.source_details.degraded ||
    d.confidence !== base.derivatives.confidence ||
    Object.values(d.assets).some((a) => a.confidence !== base.derivatives.assets[a.asset]!.confidence);
  failures.push(...check(c, 'derivatives', dDegraded, d.limitations, DERIVATIVES));

  for (const symbol of c.affected) {
    const r = free.reasoning[symbol]!;
    const baseR = base.reasoning[symbol]!;
    const rDegraded =
      r.source.degraded ||
      r.reasoning.data_status !== 'available' ||
      r.reasoning.confidence !== baseR.reasoning.confidence;
    failures.push(...check(c, `reasoning ${symbol}`, rDegraded, r.reasoning.limitations, ASSET, [symbol]));
  }
  // An asset that lacks nothing reads exactly as in the complete snapshot.
  for (const [symbol, r] of Object.entries(free.reasoning))
    if (!c.affected.includes(symbol) && r.reasoning.limitations.length > 0)
      failures.push(`${c.name}: reasoning ${symbol} lacks nothing but lists ${r.reasoning.limitations[0]}`);
  return failures;
}

/** Every limitation-like list of the bodies of one run. */
const allLimitations = ({ free, paid }: Bodies): string[] => [
  ...free.mainBrain.brain.limitations,
  ...free.marketRegime.regime.limitations,
  ...(free.liquidityLite.limitations ?? []),
  ...(free.derivatives.limitations ?? []),
  ...Object.values(free.derivatives.assets).flatMap((a) => a.limitations ?? []),
  ...Object.values(free.reasoning).flatMap((r) => r.reasoning.limitations),
  ...paid.paidMainBrain.limitations,
  ...Object.values(paid.paidMainBrain.coins).flatMap((coin) => coin.limitations),
];

describe('a degraded or weaker reading always says what is missing and why', () => {
  const all = cases();

  it('covers every combination of missing sections for one and several assets', () => {
    // 64 combinations per shape, plus the weak variants that apply.
    expect(all.length).toBeGreaterThan(3 * 64 * 3);
  });

  it('names the asset and the missing piece in every degraded body', () => {
    const failures = all.flatMap(failuresOf);
    expect(failures.slice(0, 40), `${failures.length} failures`).toEqual([]);
  });

  it('a complete snapshot has no missing-data limitation and no degraded status', () => {
    for (const shape of SHAPES) {
      const bodies = bodiesOf(fixtureSnapshot(shape.symbols.map(completeAsset)));
      const { free, paid } = bodies;
      expect(free.mainBrain.status, shape.name).toBe('available');
      expect(free.marketRegime.status, shape.name).toBe('available');
      expect(free.derivatives.status, shape.name).toBe('available');
      expect(free.liquidityLite.source_details.degraded, shape.name).toBe(false);
      for (const r of Object.values(free.reasoning))
        expect(r.reasoning.data_status, shape.name).toBe('available');
      expect(paid.paidMainBrain.source.degraded, shape.name).toBe(false);
      const missingWords = new RegExp(
        [...Object.values(WORDS).map((w) => w.source), 'missing', 'unavailable', 'too few', 'no data'].join(
          '|',
        ),
        'i',
      );
      expect(
        allLimitations(bodies).filter((l) => missingWords.test(l)),
        shape.name,
      ).toEqual([]);
    }
  });
});

describe('the reason given is the true one', () => {
  it('candles that are plentiful but unreadable are not called too few', () => {
    const btc = completeAsset('BTC');
    const flat = btc.candles!.value.map((c) => ({ ...c, open: 100, high: 100, low: 100, close: 100 }));
    const free = buildFreeSnapshots(
      fixtureSnapshot([{ ...btc, candles: { ...btc.candles!, value: flat } }]),
      FIXTURE_CLOCK,
    );
    const lines = free.reasoning.BTC!.reasoning.limitations.join(' ');
    expect(lines).not.toMatch(/too few for trend/);
    expect(lines).toMatch(`${flat.length} hourly candles could not be read for trend`);
    expect(free.mainBrain.brain.limitations.join(' ')).toMatch(
      `BTC: the ${flat.length} hourly candles could not be read`,
    );
  });

  it('no ticker and no candles: the limitation does not say the price came from candles', () => {
    const btc = { ...completeAsset('BTC'), ticker: null, candles: null };
    const lines = buildFreeSnapshots(fixtureSnapshot([btc]), FIXTURE_CLOCK).reasoning.BTC!.reasoning
      .limitations;
    expect(lines.join(' ')).not.toMatch(/come from hourly candles/);
    expect(lines).toContain('BTC: no 24-hour ticker; no price or 24-hour change this run.');
  });

  it('the regime says why correlation is left out of a one-asset reading, and why an empty run reads nothing', () => {
    const one = buildFreeSnapshots(fixtureSnapshot([completeAsset('BTC')]), FIXTURE_CLOCK).marketRegime;
    expect(one.regime.correlation.average_pairwise).toBeNull();
    expect(one.regime.limitations.join(' ')).toMatch(/No pairwise correlation this run/);
    const none = buildFreeSnapshots(fixtureSnapshot([]), FIXTURE_CLOCK).marketRegime;
    expect(none.status).toBe('degraded');
    expect(none.regime.limitations).toContain('No assets in this run: there is no market regime to read.');
  });

  it('a main brain degraded only by the track record says so, and the paid body adds no generic line', () => {
    const free = buildFreeSnapshots(
      fixtureSnapshot(SEVEN.map(completeAsset)),
      FIXTURE_CLOCK,
      PERFORMANCE_STORE_UNAVAILABLE,
    );
    expect(free.mainBrain.status).toBe('degraded');
    expect(free.mainBrain.brain.limitations).toEqual([
      'Track record unavailable: the arena store could not be read this run.',
    ]);
    // The simulated-data notice leads, as in the atlas; no generic degraded line is added.
    expect(buildPaidBodies(free, FIXTURE_CLOCK).paidMainBrain.limitations).toEqual([
      free.mainBrain.truth_statement,
      ...free.mainBrain.brain.limitations,
    ]);
  });
});
