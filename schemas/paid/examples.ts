// Small, schema-valid example bodies of the four paid resources: the paid engines' output for a one-asset
// simulated fixture, long texts and lists shortened. They feed the Bazaar discovery extension of the 402 (kept
// small because clients echo it back in PAYMENT-SIGNATURE) and can feed the OpenAPI document, so both show the
// same examples. test/paywall-schemas.test.ts checks that each one passes its schema. BTC's price is set to a level
// BTC has traded at (the fixture's own simulated 14.03 read as a broken value to a developer).
import { DISCLAIMER, EDUCATIONAL_NOTICE, PROJECT, type SourceInfo } from '../common.ts';
import { NO_PERFORMANCE_HISTORY } from '../performance.ts';
import { PAID_CATALOG } from '../catalog.ts';
import type { PaidMarketRegime } from './paid-market-regime.ts';
import type { PaidMainBrain } from './paid-main-brain.ts';
import type { Atlas } from './atlas.ts';
import type { AtlasHumanReport } from './atlas-human-report.ts';

/** The run's provenance and freshness as every paid body states it, with the product's cache hint. */
const exampleSource = (product: keyof typeof PAID_CATALOG): SourceInfo => ({
  mode: 'simulated',
  provider: 'seeded market simulator',
  simulated: true,
  venues: ['binance-spot', 'binance-usdm', 'okx'],
  seed: 42,
  as_of: '2025-01-15T12:00:00.000Z',
  generated_at: '2025-01-15T12:00:00.000Z',
  next_update_due: '2025-01-15T12:01:00.000Z',
  cache_seconds: PAID_CATALOG[product].cacheSeconds,
  degraded: false,
});

export const paidMarketRegimeExample: PaidMarketRegime = {
  success: true,
  project: PROJECT,
  endpoint: 'x402-market-regime',
  type: 'paid_market_regime',
  product_id: 'SVC-X402-001',
  schema_version: '1.3.0',
  payment_status: 'settled',
  market_mode: 'RISK_OFF',
  market_state: 'CAUTION',
  summary:
    'SIMULATED DATA. The evidence describes a risk-off market (risk score 68/100, confidence 39/100). ...',
  confidence: 39,
  risk_score: 68,
  risk_level: 'elevated',
  risk_factors: [
    {
      factor: 'volatility',
      level: 'high',
      note: 'Realised volatility reads extreme (36.6% annualised, percentile 97).',
    },
    {
      factor: 'leverage',
      level: 'low',
      note: '0 of 1 assets with positioning data show crowded positioning or extreme funding.',
    },
    {
      factor: 'liquidity',
      level: 'low',
      note: '0 of 1 assets read thin liquidity.',
    },
    {
      factor: 'breadth',
      level: 'high',
      note: '0 of 1 assets trade above their 50-hour average.',
    },
    {
      factor: 'data_quality',
      level: 'low',
      note: '1 of 1 assets had a price and 1 enough hourly candles for a trend reading; every asset had all of its data.',
    },
  ],
  regime: {
    market_mode: 'RISK_OFF',
    market_state: 'CAUTION',
    risk_score: 68,
    risk_level: 'elevated',
    confidence: 39,
    assets_covered: 1,
    assets_total: 1,
    breadth: {
      assets_above_ema50: 0,
      assets_with_trend_data: 1,
      share_above_ema50: 0,
    },
    trend: {
      median_direction: 'up',
      description: "The typical asset's 20-hour average is above its 50-hour average.",
    },
    volatility: {
      realised_annualised_pct: 36.6,
      percentile: 97,
      level: 'extreme',
    },
    drawdown: {
      median_from_recent_high_pct: -6.36,
      deepest_asset: 'BTC',
      deepest_from_recent_high_pct: -6.36,
      lookback_hours: 168,
    },
    correlation: {
      average_pairwise: null,
      assets_sampled: 1,
      pairs: 0,
      level: null,
    },
    evidence: ['0 of 1 assets trade above their 50-hour exponential average.'],
    limitations: [],
  },
  assets: {
    BTC: {
      asset: 'BTC',
      bias: 'bearish',
      confidence: 9,
      risk_level: 'low',
      derivatives_state: 'new_shorts',
      liquidity_context: 'deep',
      note: 'BTC leans bearish; positioning: new shorts; liquidity: deep.',
      data_status: 'available',
    },
  },
  evidence: ['0 of 1 assets trade above their 50-hour exponential average.'],
  limitations: [
    'SIMULATED DATA: every number here comes from a seeded market simulator (seed 42) imitating ...',
  ],
  source: 'seeded market simulator: simulated data from binance-spot, binance-usdm and okx',
  source_details: exampleSource('paidMarketRegime'),
  source_mode: 'simulated',
  simulated: true,
  updated: '2025-01-15T12:00:00.000Z',
  educational_only: true,
  disclaimer: DISCLAIMER,
};

export const paidMainBrainExample: PaidMainBrain = {
  success: true,
  project: PROJECT,
  endpoint: 'x402-main-brain',
  type: 'paid_main_brain',
  product_id: 'SVC-X402-003',
  schema_version: '1.3.0',
  payment_status: 'settled',
  summary:
    'SIMULATED DATA. Of 1 assets, 0 lean bullish, 1 bearish, 0 neutral; the sections agree on 0 and ...',
  market_state: {
    market_mode: 'RISK_OFF',
    market_state: 'CAUTION',
    risk_level: 'elevated',
    confidence: 39,
    summary: 'The evidence describes a risk-off market (risk score 68/100, confidence 39/100). ...',
  },
  confidence: 9,
  brain: {
    status: 'available',
    overall_bias: 'bearish',
    assets_tracked: 1,
    assets_with_evidence: 1,
    leaning: {
      bullish: 0,
      bearish: 1,
      neutral: 0,
    },
    average_confidence: 9,
    method: 'Reads hourly trend (20- and 50-hour exponential averages measured in average ...',
    limitations: [],
  },
  market_context: {
    market_mode: 'RISK_OFF',
    risk_score: 68,
    breadth_share_above_ema50: 0,
    volatility_level: 'extreme',
    derivatives_state: 'new_shorts',
    thin_liquidity_assets: [],
    notes: ['0 of 1 assets trade above their 50-hour exponential average.'],
  },
  coins: {
    BTC: {
      asset: 'BTC',
      bias: 'bearish',
      confidence: 9,
      summary:
        'BTC: the evidence leans bearish (confidence 9/100, low); positioning leans bearish too and the order book is neutral.',
      agreement: 'mixed',
      agreement_readings: { brain: 'bearish', derivatives: 'bearish', order_book: 'neutral' },
      risk_level: 'low',
      market: {
        price: 97412.35,
        change_24h: -4.34,
        price_source: 'binance-spot (simulated)',
      },
      liquidity: {
        status: null,
        liquidity_context: 'deep',
        market_structure: 'higher_highs_higher_lows',
        spread_bps: 4,
        depth_usd_1pct: 6000000,
        book_imbalance: 0,
      },
      derivatives: {
        state: 'new_shorts',
        vote: 'bearish',
        confidence: 95,
        funding_rate_8h_pct: 0.01,
        funding_level: 'normal',
        open_interest_change_24h_pct: 5,
        open_interest_reading: 'new_shorts',
      },
      reasoning: {
        prediction: 'BEARISH',
        confidence: 9,
        summary:
          'BTC: the evidence leans bearish (confidence 9/100, low); positioning leans bearish too and the order book is neutral.',
        reason_points: ['The 20-hour average is 0.7 average true ranges above the 50-hour average: the ...'],
      },
      evidence: ['The 20-hour average is 0.7 average true ranges above the 50-hour average: the ...'],
      limitations: [],
      data_status: 'available',
    },
  },
  public_performance: NO_PERFORMANCE_HISTORY,
  evidence: ['0 of 1 assets trade above their 50-hour exponential average.'],
  limitations: [
    'SIMULATED DATA: every number here comes from a seeded market simulator (seed 42) imitating ...',
  ],
  source: exampleSource('paidMainBrain'),
  source_mode: 'simulated',
  updated: '2025-01-15T12:00:00.000Z',
  educational_only: true,
  disclaimer: DISCLAIMER,
};

export const atlasExample: Atlas = {
  success: true,
  project: PROJECT,
  endpoint: 'x402-atlas',
  product_id: 'SVC-X402-002',
  payment_status: 'settled',
  schema_version: '0.1.0',
  intelligence_layer: {
    name: 'atlas',
    description: 'Per-asset join of the market, liquidity, derivatives and reasoning readings of one run.',
    source_mode: 'simulated',
    simulated: true,
    as_of: '2025-01-15T12:00:00.000Z',
    assets: {
      BTC: {
        asset: 'BTC',
        bias: 'bearish',
        confidence: 9,
        price: 97412.35,
        change_24h: -4.34,
        liquidity_context: 'deep',
        derivatives_state: 'new_shorts',
        reasoning_prediction: 'BEARISH',
        agreement: 'mixed',
        risk_level: 'low',
        data_status: 'available',
        sections_available: 4,
      },
    },
  },
  summary: {
    text: 'SIMULATED DATA. The evidence describes a risk-off market (risk score 68/100, confidence 39/100). ...',
    market_mode: 'RISK_OFF',
    market_state: 'CAUTION',
    risk_score: 68,
    breadth: {
      bullish: 0,
      bearish: 1,
      neutral: 0,
      unknown: 0,
    },
    strongest: ['BTC'],
    conflicting: [],
  },
  confidence: {
    overall: 9,
    by_asset: {
      BTC: 9,
    },
    meaning: 'Confidence (0-100) is the strength and agreement of the available evidence, not ...',
  },
  evidence: {
    market: ['0 of 1 assets trade above their 50-hour exponential average.'],
    liquidity: ['BTC: Volume over the last 24 hours is near its usual level.'],
    derivatives: [
      '1 of 1 assets have a positioning reading (funding or a 24-hour open-interest change) this run.',
    ],
    reasoning: [
      'BTC: the evidence leans bearish (confidence 9/100, low); positioning leans bearish too and the order book is neutral.',
    ],
  },
  limitations: [
    'SIMULATED DATA: every number here comes from a seeded market simulator (seed 42) imitating ...',
  ],
  source_details: exampleSource('atlas'),
  updated: '2025-01-15T12:00:00.000Z',
  educational_only: true,
  disclaimer: DISCLAIMER,
};

export const atlasHumanReportExample: AtlasHumanReport = {
  success: true,
  project: PROJECT,
  endpoint: 'x402-atlas-human-report',
  type: 'atlas_human_report',
  payment_status: 'settled',
  schema_version: '0.1.0',
  title: 'Market atlas: an educational report',
  headline: 'A risk-off market: 0 of 1 assets lean bullish, 1 bearish (simulated data)',
  data_notice: 'Simulated data: every number comes from a seeded market simulator (seed 42), not ...',
  source_mode: 'simulated',
  simulated: true,
  sections: [
    {
      id: 'overview',
      heading: 'The market as a whole',
      paragraphs: ['The evidence describes a risk-off market (risk score 68/100, confidence 39/100). ...'],
    },
    {
      id: 'assets',
      heading: 'Asset by asset',
      paragraphs: ['The evidence is strongest for BTC.'],
    },
    {
      id: 'positioning',
      heading: 'Derivatives positioning',
      paragraphs: ['Positioning across 1 assets reads new shorts; the evidence leans bearish for 1 ...'],
    },
    {
      id: 'liquidity',
      heading: 'Liquidity',
      paragraphs: ['No tracked asset reads thin liquidity.'],
    },
    {
      id: 'how-to-read',
      heading: 'How to read this report',
      paragraphs: ['Confidence (0-100) is the strength and agreement of the available evidence, not ...'],
    },
  ],
  asset_table: {
    columns: [
      {
        key: 'asset',
        label: 'Asset',
      },
      {
        key: 'price',
        label: 'Price (USD)',
      },
      {
        key: 'change_24h',
        label: '24h change (%)',
      },
      {
        key: 'bias',
        label: 'Evidence leans',
      },
      {
        key: 'confidence',
        label: 'Confidence (0-100)',
      },
      {
        key: 'liquidity',
        label: 'Liquidity',
      },
      {
        key: 'positioning',
        label: 'Positioning',
      },
      {
        key: 'agreement',
        label: 'Readings agree?',
      },
      {
        key: 'note',
        label: 'In short',
      },
    ],
    rows: [
      {
        asset: 'BTC',
        price: 97412.35,
        change_24h: -4.34,
        bias: 'bearish',
        confidence: 9,
        liquidity: 'deep',
        positioning: 'new shorts',
        agreement: 'mixed',
        note: 'BTC: the evidence leans bearish (confidence 9/100, low); positioning leans bearish too and the order book is neutral.',
        data_status: 'available',
      },
    ],
  },
  charts: [
    {
      id: 'change-24h',
      title: 'Price change over 24 hours',
      kind: 'bar',
      unit: '%',
      series: [
        {
          label: '24h change',
          points: [
            {
              x: 'BTC',
              y: -4.34,
            },
          ],
        },
      ],
    },
    {
      id: 'confidence',
      title: 'Confidence of the evidence',
      kind: 'bar',
      unit: '0-100',
      series: [
        {
          label: 'confidence',
          points: [
            {
              x: 'BTC',
              y: 9,
            },
          ],
        },
      ],
    },
    {
      id: 'breadth',
      title: 'How the assets lean',
      kind: 'stacked-bar',
      unit: 'assets',
      series: [
        {
          label: 'bullish',
          points: [
            {
              x: 'assets',
              y: 0,
            },
          ],
        },
        {
          label: 'neutral',
          points: [
            {
              x: 'assets',
              y: 0,
            },
          ],
        },
        {
          label: 'bearish',
          points: [
            {
              x: 'assets',
              y: 1,
            },
          ],
        },
      ],
    },
  ],
  limitations: [
    'SIMULATED DATA: every number here comes from a seeded market simulator (seed 42) imitating ...',
  ],
  disclaimers: [
    DISCLAIMER,
    EDUCATIONAL_NOTICE,
    'Simulated data: every number comes from a seeded market simulator (seed 42), not ...',
  ],
  source_details: exampleSource('atlasHumanReport'),
  updated: '2025-01-15T12:00:00.000Z',
  educational_only: true,
  disclaimer: DISCLAIMER,
};

/** Keyed by the registry's paid resource ids (`PAID_RESOURCES[].id`). */
export const PAID_EXAMPLES: Readonly<Record<string, unknown>> = {
  paidMarketRegime: paidMarketRegimeExample,
  paidMainBrain: paidMainBrainExample,
  atlas: atlasExample,
  atlasHumanReport: atlasHumanReportExample,
};
