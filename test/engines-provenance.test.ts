import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import {
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

describe('provenance reaches the published readings', () => {
  it('says in the reasoning body when liquidations are estimated rather than observed', () => {
    const estimated = { longUsd24h: 2e6, shortUsd24h: 1e5, events: 3, estimated: true };
    const observed = buildFreeSnapshots(fixtureSnapshot([fixtureAsset('BTC', uptrend())]), FIXTURE_CLOCK);
    const withEstimate = buildFreeSnapshots(
      fixtureSnapshot([fixtureAsset('BTC', uptrend(), { liquidations: estimated })]),
      FIXTURE_CLOCK,
    );
    const estimateLine = /estimates?, not observed/;
    expect(JSON.stringify(observed.reasoning.BTC)).not.toMatch(estimateLine);
    expect(withEstimate.reasoning.BTC!.reasoning.limitations.some((l) => estimateLine.test(l))).toBe(true);
  });

  it('reports a venue that refused the whole run, without lowering confidence when fallbacks delivered', () => {
    const assets = universe(uptrend);
    const clean = buildFreeSnapshots(fixtureSnapshot(assets, { mode: 'live' }), FIXTURE_CLOCK);
    const refused = buildFreeSnapshots(
      fixtureSnapshot(assets, {
        mode: 'live',
        issues: [{ venue: 'binance-spot', symbol: null, section: 'all', message: 'HTTP 451: unavailable' }],
      }),
      FIXTURE_CLOCK,
    );
    expect(refused.mainBrain.coins.BTC!.confidence).toBe(clean.mainBrain.coins.BTC!.confidence);
    expect(JSON.stringify(refused.reasoning.BTC)).toMatch(/HTTP 451/);
  });

  it('lowers confidence when a section that delivered carries an issue (venues disagreeing on price)', () => {
    const assets = universe(uptrend);
    const clean = buildFreeSnapshots(fixtureSnapshot(assets, { mode: 'live' }), FIXTURE_CLOCK);
    const disputed = buildFreeSnapshots(
      fixtureSnapshot(assets, {
        mode: 'live',
        issues: [
          { venue: 'coinbase', symbol: 'BTC', section: 'ticker', message: 'prices disagree by 2.1 %' },
        ],
      }),
      FIXTURE_CLOCK,
    );
    expect(disputed.mainBrain.coins.BTC!.confidence!).toBeLessThan(clean.mainBrain.coins.BTC!.confidence!);
    expect(disputed.mainBrain.coins.ETH!.confidence).toBe(clean.mainBrain.coins.ETH!.confidence);
  });
});

describe('attribution', () => {
  it('credits CoinGecko in the truth statement when its prices were used, and only then', () => {
    const viaBinance = buildFreeSnapshots(
      fixtureSnapshot(universe(uptrend), { mode: 'live' }),
      FIXTURE_CLOCK,
    );
    const assets = universe(uptrend).map((asset) => ({
      ...asset,
      ticker: asset.ticker && {
        ...asset.ticker,
        provenance: { ...asset.ticker.provenance, venue: 'coingecko' },
      },
    }));
    const viaCoinGecko = buildFreeSnapshots(fixtureSnapshot(assets, { mode: 'live' }), FIXTURE_CLOCK);
    expect(viaBinance.marketRegime.truth_statement).not.toMatch(/CoinGecko/);
    expect(viaCoinGecko.marketRegime.truth_statement).toMatch(/Price data by CoinGecko\./);
    // The simulator imitates CoinGecko's answers: no CoinGecko data was used, so it is not credited.
    const simulated = buildFreeSnapshots(fixtureSnapshot(assets, { mode: 'simulated' }), FIXTURE_CLOCK);
    expect(simulated.marketRegime.truth_statement).toMatch(/^SIMULATED DATA:/);
    expect(simulated.marketRegime.truth_statement).not.toMatch(/Price data by CoinGecko/);
  });
});
