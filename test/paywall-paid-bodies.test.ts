// The paid bodies: built by the pure paid engines from the free bodies of one run, valid against their schemas,
// deterministic, honestly labelled, and carrying no internal weights. Also the examples and the discovery schema.
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { agreementOf } from '../generator/engines/paid/join.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { bazaarExtension } from '../paywall-worker/discovery.ts';
import {
  crash,
  FIXTURE_CLOCK,
  fixtureSnapshot,
  reversal,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';

const scenarios = {
  uptrend: () => fixtureSnapshot(universe(uptrend)),
  crash: () => fixtureSnapshot(universe(crash)),
  reversal: () => fixtureSnapshot(universe(reversal)),
  'no derivatives or book': () =>
    fixtureSnapshot(
      universe(reversal, { fundingRate: null, openInterestChange: null, liquidations: null, book: false }),
    ),
  live: () => fixtureSnapshot(universe(uptrend, { mode: 'live' }), { mode: 'live' }),
};

const paidOf = (snapshot: ReturnType<typeof fixtureSnapshot>) =>
  buildPaidBodies(buildFreeSnapshots(snapshot, FIXTURE_CLOCK), FIXTURE_CLOCK) as unknown as Record<
    string,
    unknown
  >;

describe('paid engines', () => {
  it.each(Object.entries(scenarios))('builds four schema-valid bodies: %s', (_, make) => {
    const paid = paidOf(make());
    for (const resource of PAID_RESOURCES) {
      const result = resource.schema.safeParse(paid[resource.id]);
      expect(result.success, `${resource.id}: ${result.error?.message}`).toBe(true);
      expect((paid[resource.id] as { payment_status: string }).payment_status).toBe('settled');
    }
  });

  it('is deterministic: same run, same bytes', () => {
    expect(JSON.stringify(paidOf(scenarios.reversal()))).toBe(JSON.stringify(paidOf(scenarios.reversal())));
  });

  it('labels simulated data as simulated, and live data as live', () => {
    const simulated = buildPaidBodies(buildFreeSnapshots(scenarios.uptrend(), FIXTURE_CLOCK), FIXTURE_CLOCK);
    expect(simulated.paidMarketRegime.simulated).toBe(true);
    expect(simulated.paidMarketRegime.source).toMatch(/simulated/);
    expect(simulated.atlas.intelligence_layer.simulated).toBe(true);
    expect(simulated.atlasHumanReport.data_notice).toMatch(/^Simulated data/);
    expect(simulated.atlasHumanReport.headline).toMatch(/simulated data/);
    expect(simulated.paidMainBrain.source.simulated).toBe(true);

    const live = buildPaidBodies(buildFreeSnapshots(scenarios.live(), FIXTURE_CLOCK), FIXTURE_CLOCK);
    expect(live.paidMarketRegime.simulated).toBe(false);
    expect(live.atlasHumanReport.simulated).toBe(false);
    expect(live.atlasHumanReport.data_notice).toMatch(/^Live data/);
  });

  it('reads a broad uptrend as risk-on, aligned and low risk', () => {
    const paid = buildPaidBodies(buildFreeSnapshots(scenarios.uptrend(), FIXTURE_CLOCK), FIXTURE_CLOCK);
    expect(paid.paidMarketRegime.market_mode).toBe('RISK_ON');
    expect(paid.atlas.summary.breadth.bullish).toBe(7);
    expect(paid.paidMarketRegime.risk_factors.find((f) => f.factor === 'breadth')?.level).toBe('low');
    expect(Object.values(paid.paidMainBrain.coins).every((c) => c.agreement !== 'conflicting')).toBe(true);
    expect(paid.atlasHumanReport.asset_table.rows).toHaveLength(7);
    expect(paid.atlasHumanReport.charts.map((c) => c.id)).toEqual(['change-24h', 'confidence', 'breadth']);
  });

  it('says what is missing when derivatives and books are unavailable', () => {
    const paid = buildPaidBodies(
      buildFreeSnapshots(scenarios['no derivatives or book'](), FIXTURE_CLOCK),
      FIXTURE_CLOCK,
    );
    expect(paid.paidMarketRegime.risk_factors.map((f) => f.factor)).not.toContain('leverage');
    expect(paid.paidMarketRegime.limitations.join(' ')).toMatch(/leverage is missing/);
    const btc = paid.paidMainBrain.coins.BTC!;
    expect(btc.limitations.join(' ')).toMatch(/No derivatives positioning/);
    expect(paid.atlas.intelligence_layer.assets.BTC!.sections_available).toBeLessThan(4);
  });

  it('publishes levels, never weights or raw scores', () => {
    const text = JSON.stringify(paidOf(scenarios.reversal()));
    expect(text).not.toMatch(/"weights?"|"signs"|"raw_score"|"factor_weight"/);
  });

  it('reads agreement between the readings', () => {
    expect(agreementOf(['bullish', 'bullish', null])).toBe('aligned');
    expect(agreementOf(['neutral', 'neutral'])).toBe('aligned');
    expect(agreementOf(['bullish', 'bearish'])).toBe('conflicting');
    expect(agreementOf(['bullish', 'neutral'])).toBe('mixed');
    expect(agreementOf(['bullish', null, null])).toBe('insufficient');
  });
});

describe('examples and discovery', () => {
  it.each(PAID_RESOURCES.map((r) => [r.id, r] as const))(
    'the %s example passes its schema',
    (id, resource) => {
      const result = resource.schema.safeParse(PAID_EXAMPLES[id]);
      expect(result.success, result.error?.message).toBe(true);
    },
  );

  it.each(PAID_RESOURCES.map((r) => [r.id, r] as const))(
    'the %s discovery info passes its own JSON Schema',
    (id, resource) => {
      const extension = bazaarExtension(resource.schema, PAID_EXAMPLES[id]);
      const validate = new Ajv2020({ strict: false }).compile(extension.schema);
      expect(validate(extension.info), JSON.stringify(validate.errors)).toBe(true);
      // and a body missing a required field does not
      const broken = { ...extension.info, output: { type: 'json', example: { success: true } } };
      expect(validate(broken)).toBe(false);
    },
  );
});
