// One source issue is one line wherever an asset's limitations are listed or merged (the asset's reasoning, the
// paid main brain's coin, the paid market regime, the atlas and its human report): a funding rate no other venue
// confirmed used to appear twice in XRP's limitations, once as "XRP: Data issue at bybit (funding): ..." from its
// positioning reading and once as "Data issue at bybit (funding, XRP): ..." from the asset's issue list.
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import type { MarketSnapshot, SourceIssue } from '../generator/market/types.ts';
import { FIXTURE_CLOCK, fixtureSnapshot, universe, uptrend } from './helpers/market-fixtures.ts';

/** The issue of the audited live run: bybit's XRP funding, the other funding venues down. */
const UNCONFIRMED_FUNDING: SourceIssue = {
  venue: 'bybit',
  symbol: 'XRP',
  section: 'funding',
  message:
    'funding +0.0154 % per 8 h not cross-checked: no other venue gave a current funding rate ' +
    '(binance-usdm: HTTP 503; okx: HTTP 503; hyperliquid: connection refused)',
};
/** An issue on a section that did not come in: its own missing-section note names the gap too. */
const LIQUIDATIONS_DOWN: SourceIssue = {
  venue: 'okx',
  symbol: 'XRP',
  section: 'liquidations',
  message: 'HTTP 503: service unavailable',
};
/** An issue on a section that came in, outside positioning: venues disagreeing on the price. */
const PRICE_DIFFERS: SourceIssue = {
  venue: 'binance-spot',
  symbol: 'XRP',
  section: 'ticker',
  message: 'price differs from the reference venue beyond the cross-venue threshold',
};

const liveRun = (issues: SourceIssue[]): MarketSnapshot => {
  const assets = universe(uptrend, { mode: 'live' });
  const xrp = assets.find((a) => a.symbol === 'XRP')!;
  if (issues.includes(LIQUIDATIONS_DOWN)) xrp.liquidations = null;
  return fixtureSnapshot(assets, { mode: 'live', issues });
};

const bodiesOf = (snapshot: MarketSnapshot) => {
  const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
  return { free, paid: buildPaidBodies(free, FIXTURE_CLOCK) };
};

/** Every list an asset's limitations reach, by name. */
const limitationLists = (snapshot: MarketSnapshot): Array<[string, readonly string[]]> => {
  const { free, paid } = bodiesOf(snapshot);
  return [
    ['reasoning XRP', free.reasoning.XRP!.reasoning.limitations],
    ['main brain', free.mainBrain.brain.limitations],
    ['derivatives XRP', free.derivatives.assets.XRP!.limitations ?? []],
    ['paid main brain XRP', paid.paidMainBrain.coins.XRP!.limitations],
    ['paid market regime', paid.paidMarketRegime.limitations],
    ['atlas', paid.atlas.limitations],
    ['atlas human report', paid.atlasHumanReport.limitations],
  ];
};

const reasoningOf = (snapshot: MarketSnapshot): readonly string[] =>
  bodiesOf(snapshot).free.reasoning.XRP!.reasoning.limitations;

const linesOf = (lines: readonly string[], issue: SourceIssue) =>
  lines.filter((line) => line.includes(issue.message));

describe('one source issue, one line', () => {
  it('an unconfirmed funding rate is one line in every list that names it', () => {
    for (const [name, lines] of limitationLists(liveRun([UNCONFIRMED_FUNDING])))
      expect(linesOf(lines, UNCONFIRMED_FUNDING), name).toHaveLength(1);
  });

  it('keeps the wording that groups by asset, with the venue, section and message', () => {
    expect(linesOf(reasoningOf(liveRun([UNCONFIRMED_FUNDING])), UNCONFIRMED_FUNDING)).toEqual([
      `XRP: Data issue at bybit (funding): ${UNCONFIRMED_FUNDING.message}`,
    ]);
  });

  it('each of several issues of one asset is one line, and no line names its asset twice', () => {
    const issues = [UNCONFIRMED_FUNDING, LIQUIDATIONS_DOWN, PRICE_DIFFERS];
    for (const [name, lines] of limitationLists(liveRun(issues))) {
      for (const issue of issues)
        expect(linesOf(lines, issue).length, `${name}: ${issue.section}`).toBeLessThanOrEqual(1);
      for (const line of lines)
        expect(line.match(/\bXRP\b/g)?.length ?? 0, `${name}: ${line}`).toBeLessThan(2);
    }
    const reasoning = reasoningOf(liveRun(issues));
    for (const issue of issues) expect(linesOf(reasoning, issue), issue.section).toHaveLength(1);
  });

  it('a record repeated in the run is still one issue: one line, one confidence penalty', () => {
    const once = bodiesOf(liveRun([UNCONFIRMED_FUNDING]));
    const twice = bodiesOf(liveRun([UNCONFIRMED_FUNDING, { ...UNCONFIRMED_FUNDING }]));
    for (const [name, lines] of limitationLists(liveRun([UNCONFIRMED_FUNDING, { ...UNCONFIRMED_FUNDING }])))
      expect(linesOf(lines, UNCONFIRMED_FUNDING), name).toHaveLength(1);
    expect(once.free.mainBrain.coins.XRP!.confidence).toBeGreaterThan(0);
    expect(once.free.derivatives.assets.XRP!.confidence).toBeGreaterThan(0);
    expect(twice.free.mainBrain.coins.XRP!.confidence).toBe(once.free.mainBrain.coins.XRP!.confidence);
    expect(twice.free.derivatives.assets.XRP!.confidence).toBe(once.free.derivatives.assets.XRP!.confidence);
  });
});
