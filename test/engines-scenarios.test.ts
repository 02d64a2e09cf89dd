import { describe, expect, it } from 'vitest';
import { analyzeAsset, buildFreeSnapshots } from '../generator/engines/index.ts';
import {
  crash,
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  reversal,
  SEVEN,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

const build = (snapshot: ReturnType<typeof fixtureSnapshot>) => buildFreeSnapshots(snapshot, FIXTURE_CLOCK);

describe('a strong broad uptrend', () => {
  const free = build(fixtureSnapshot(universe(uptrend)));

  it('reads bullish with high confidence for every asset', () => {
    for (const coin of Object.values(free.mainBrain.coins)) {
      expect(coin.bias).toBe('bullish');
      expect(coin.confidence).toBeGreaterThanOrEqual(70);
    }
    expect(free.mainBrain.brain.overall_bias).toBe('bullish');
    expect(free.reasoning.BTC!.reasoning.prediction).toBe('BULLISH');
  });

  it('reads RISK_ON with a low risk score', () => {
    expect(free.marketRegime.market_mode).toBe('RISK_ON');
    expect(free.marketRegime.regime.risk_score).toBeLessThan(40);
    expect(free.marketRegime.regime.breadth.share_above_ema50).toBe(1);
    expect(free.marketRegime.market_state).toBe('OPPORTUNITY');
    expect(free.marketRegime.status).toBe('available');
  });

  it('reads new longs in positioning and rising swing structure', () => {
    expect(free.derivatives.assets.BTC!.state).toBe('new_longs');
    expect(free.liquidityLite.assets.BTC!.market_structure).toBe('higher_highs_higher_lows');
    // Complete, but simulated: nothing was observed live, so nothing is verified.
    expect(free.liquidityLite.assets.BTC!.status).toBeNull();
  });
});

describe('a crash', () => {
  const free = build(fixtureSnapshot(universe(crash, { openInterestChange: -0.12 })));

  it('reads RISK_OFF with a high risk score and CAUTION', () => {
    expect(free.marketRegime.market_mode).toBe('RISK_OFF');
    expect(free.marketRegime.regime.risk_score).toBeGreaterThanOrEqual(75);
    expect(free.marketRegime.regime.risk_level).toBe('high');
    expect(free.marketRegime.market_state).toBe('CAUTION');
    expect(free.marketRegime.regime.breadth.assets_above_ema50).toBe(0);
    expect(free.marketRegime.regime.drawdown.median_from_recent_high_pct).toBeLessThan(-10);
  });

  it('reads bearish per asset and deleveraging in positioning', () => {
    for (const coin of Object.values(free.mainBrain.coins)) expect(coin.bias).toBe('bearish');
    expect(free.derivatives.overall_state).toBe('deleveraging');
  });
});

describe('missing and mixed evidence', () => {
  const full = analyzeAsset(fixtureAsset('BTC', uptrend()), [], 'simulated');

  it('missing derivatives data lowers confidence and adds a limitation', () => {
    const bare = analyzeAsset(
      fixtureAsset('BTC', uptrend(), { fundingRate: null, openInterestChange: null, liquidations: null }),
      [],
      'simulated',
    );
    expect(bare.bias).toBe('bullish');
    expect(bare.confidence!).toBeLessThan(full.confidence!);
    expect(bare.limitations.join(' ')).toMatch(/no derivatives data/);
    expect(full.limitations).toEqual([]);
  });

  it('a missing section shows up in every body', () => {
    const free = build(fixtureSnapshot(universe(uptrend, { fundingRate: null, openInterestChange: null })));
    expect(free.derivatives.status).toBe('degraded');
    expect(free.derivatives.assets.ETH!.state).toBe('unavailable');
    expect(free.derivatives.assets.ETH!.confidence).toBeNull();
    expect(free.derivatives.limitations!.join(' ')).toMatch(/No funding for BTC/);
    expect(free.mainBrain.status).toBe('degraded');
    expect(free.reasoning.ETH!.reasoning.limitations.join(' ')).toMatch(/derivatives/);
  });

  it('mixed signals lower confidence', () => {
    const mixed = analyzeAsset(
      fixtureAsset('BTC', reversal(), { openInterestChange: 0.08 }),
      [],
      'simulated',
    );
    expect(mixed.confidence!).toBeLessThan(35);
    expect(mixed.confidence!).toBeLessThan(full.confidence! / 2);
    // The summary makes no claim about agreement beyond the readings it names (see engines-consistency).
    expect(mixed.summary).toMatch(/confidence \d+\/100, low\); positioning /);
  });

  it('a collection issue lowers confidence and becomes a limitation', () => {
    const issue = { venue: 'binance-usdm', symbol: 'BTC', section: 'funding' as const, message: 'HTTP 451' };
    const flagged = analyzeAsset(fixtureAsset('BTC', uptrend()), [issue], 'simulated');
    expect(flagged.confidence!).toBeLessThan(full.confidence!);
    expect(flagged.limitations.join(' ')).toContain('HTTP 451');
    const other = analyzeAsset(fixtureAsset('ETH', uptrend()), [issue], 'simulated');
    expect(other.limitations).toEqual([]);
  });

  it('no candles anywhere gives UNKNOWN, not a guess', () => {
    const free = build(
      fixtureSnapshot(
        SEVEN.map((s) =>
          fixtureAsset(s, uptrend(), {
            candles: false,
            fundingRate: null,
            openInterestChange: null,
            book: false,
          }),
        ),
      ),
    );
    expect(free.marketRegime.market_mode).toBe('UNKNOWN');
    expect(free.marketRegime.market_state).toBe('UNKNOWN'); // no reading, not the WAIT of a weak one
    expect(free.marketRegime.confidence).toBe(0);
    expect(free.marketRegime.regime.risk_score).toBeNull();
    expect(free.marketRegime.status).toBe('degraded');
    expect(free.mainBrain.coins.BTC!.bias).toBeNull();
    expect(free.mainBrain.coins.BTC!.confidence).toBeNull();
    expect(free.mainBrain.coins.BTC!.price).not.toBeNull(); // the ticker still gives a price
    expect(free.mainBrain.coins.BTC!.data_status).toBe('partial'); // a price, but no evidence to read
    expect(free.reasoning.BTC!.reasoning.prediction).toBe('NONE');
    expect(free.reasoning.BTC!.reasoning.confidence).toBeNull();
  });

  it('estimated liquidations are labelled as estimates', () => {
    const free = build(
      fixtureSnapshot(
        universe(uptrend, {
          liquidations: { longUsd24h: 5e6, shortUsd24h: 1e6, events: 40, estimated: true },
        }),
      ),
    );
    const btc = free.derivatives.assets.BTC!;
    expect(btc.liquidations!.estimated).toBe(true);
    // An estimate observes no liquidation order: no count is published as if it had.
    expect(btc.liquidations!.events).toBeNull();
    // Nor a dominant side: the estimate counts voluntary closes too, so it cannot say which side was liquidated.
    expect(btc.liquidations!.dominant_side).toBeNull();
    expect(btc.evidence!.join(' ')).toMatch(/estimated/);
    expect(free.derivatives.limitations!.join(' ')).toMatch(/estimates/);
  });

  it('crowded longs are read from extreme funding', () => {
    const crowded = analyzeAsset(fixtureAsset('BTC', uptrend(), { fundingRate: 0.0012 }), [], 'simulated');
    expect(crowded.derivatives.state).toBe('crowded_longs');
    expect(crowded.derivatives.funding!.level).toBe('extreme_high');
    // Crowding is read against the crowd, so positioning no longer backs the uptrend.
    expect(full.derivatives.vote).toBe('bullish');
    expect(crowded.derivatives.vote).not.toBe('bullish');
    expect(crowded.reasonPoints.join(' ')).toMatch(/crowded long/);
  });
});

describe('funding says what kind of rate it is', () => {
  it('publishes a predicted rate as predicted, and a settled-only rate with a limitation', () => {
    const predicted = build(fixtureSnapshot(universe(uptrend))).derivatives;
    expect(predicted.assets.BTC!.funding!.rate_kind).toBe('predicted');
    expect(predicted.assets.BTC!.evidence!.join(' ')).toMatch(
      /^Funding predicted for the period now running is /,
    );
    expect(JSON.stringify(predicted.limitations)).not.toMatch(/settled rate/);

    const snapshot = fixtureSnapshot(universe(uptrend));
    const btc = snapshot.assets.find((asset) => asset.symbol === 'BTC')!;
    btc.funding = { ...btc.funding!, value: { ...btc.funding!.value, rateKind: 'settled' } };
    const settled = build(snapshot).derivatives;
    expect(settled.assets.BTC!.funding!.rate_kind).toBe('settled');
    expect(settled.assets.BTC!.evidence!.join(' ')).toMatch(/^The last settled funding rate is /);
    expect(settled.assets.BTC!.limitations!.join(' ')).toMatch(
      /last settled rate; the venue gave no prediction for the period now running/,
    );
    expect(settled.assets.ETH!.funding!.rate_kind).toBe('predicted');
    expect(settled.status).toBe('degraded');
  });
});

describe('no advice wording', () => {
  it('never tells anyone to buy or sell', () => {
    for (const path of [uptrend, crash, reversal]) {
      const text = JSON.stringify(build(fixtureSnapshot(universe(path))));
      // The disclaimers name buying and selling only to deny them; strip those before looking.
      const withoutNotices = text.replace(/recommendation to buy, sell or hold/g, '');
      expect(withoutNotices).not.toMatch(/\b(buy|sell|go long|go short)\b/i);
    }
  });
});
