// What the home page shows: the current snapshot (regime and one row per coin, from the published files) and
// the pictures of recent runs (from the run history). Templates only print what this module prepares.
import { groupThousands } from '../../schemas/common.ts';
import { MainBrainResponse } from '../../schemas/main-brain.ts';
import { MarketRegimeResponse } from '../../schemas/market-regime.ts';
import { bandChartSvg, lineChartSvg, PALETTE, sparklineSvg } from './charts.ts';
import { MIN_CHART_RUNS } from './history.ts';
import type { HistoryRun } from './history.ts';

export interface CoinRow {
  asset: string;
  bias: string;
  confidence: string;
  price: string;
  change: string;
  changeClass: 'up' | 'down' | 'flat';
  priceTrend: string | null;
  confidenceTrend: string | null;
}

export interface LegendItem {
  label: string;
  color: string;
}

export interface HomeView {
  snapshot: null | {
    simulated: boolean;
    mode: string;
    provider: string;
    generatedAt: string;
    nextUpdateDue: string;
    marketMode: string;
    marketState: string;
    confidence: number;
    riskScore: number | null;
    riskLevel: string | null;
    summary: string;
    evidence: string[];
    limitations: string[];
  };
  coins: CoinRow[];
  charts: {
    runs: number;
    /** Runs a trend needs; under it the charts are not drawn and the page says "collecting, N of M runs". */
    minRuns: number;
    collecting: boolean;
    prices: string | null;
    priceLegend: LegendItem[];
    confidence: string | null;
    confidenceLegend: LegendItem[];
    regime: string | null;
    regimeLegend: LegendItem[];
    simulatedRuns: number;
  };
}

const REGIME_COLORS: Record<string, string> = {
  RISK_ON: '#009E73',
  RISK_OFF: '#D55E00',
  NEUTRAL: '#9E9E9E',
  UNKNOWN: '#DDDDDD',
  OPPORTUNITY: '#56B4E9',
  WAIT: '#E69F00',
  CAUTION: '#CC79A7',
};
const regimeColor = (value: string) => REGIME_COLORS[value] ?? '#BBBBBB';

/**
 * US dollars with thousands separators, as en-US prints them (groupThousands: no ICU). Prices are positive, so
 * `toFixed` rounds as Intl does (half away from zero, on the exact value).
 */
export function formatPrice(price: number | null): string {
  if (price === null) return 'n/a';
  const digits = price >= 1000 ? 0 : price >= 1 ? 2 : 4;
  const [whole = '', fraction] = price.toFixed(digits).split('.');
  return `$${groupThousands(whole)}${fraction === undefined ? '' : `.${fraction}`}`;
}

export function formatChange(change: number | null): { text: string; cls: CoinRow['changeClass'] } {
  if (change === null) return { text: 'n/a', cls: 'flat' };
  const text = `${change > 0 ? '+' : ''}${change.toFixed(2)}%`;
  return { text, cls: change > 0.005 ? 'up' : change < -0.005 ? 'down' : 'flat' };
}

/** Percent change of each value from the first known value of the window: coins compare on one axis. */
function relativeToFirst(values: ReadonlyArray<number | null>): Array<number | null> {
  const first = values.find((v): v is number => v !== null && v > 0);
  return values.map((v) => (v === null || first === undefined ? null : (v / first - 1) * 100));
}

function coinSeries(runs: readonly HistoryRun[], asset: string, key: 'price' | 'confidence') {
  return runs.map((run) => run.coins[asset]?.[key] ?? null);
}

export function buildHomeView(
  marketRegimeBody: unknown,
  mainBrainBody: unknown,
  runs: readonly HistoryRun[],
): HomeView {
  const regime = MarketRegimeResponse.safeParse(marketRegimeBody);
  const brain = MainBrainResponse.safeParse(mainBrainBody);
  const r = regime.success ? regime.data : null;
  // Every chart, sparklines included, places its runs at these times.
  const times = runs.map((run) => run.generated_at);

  const assets = brain.success
    ? Object.keys(brain.data.coins)
    : [...new Set(runs.flatMap((run) => Object.keys(run.coins)))];
  const coins: CoinRow[] = brain.success
    ? Object.values(brain.data.coins).map((coin) => {
        const change = formatChange(coin.change_24h);
        return {
          asset: coin.asset,
          bias: coin.bias ?? 'no evidence',
          confidence: coin.confidence === null ? 'n/a' : String(Math.round(coin.confidence)),
          price: formatPrice(coin.price),
          change: change.text,
          changeClass: change.cls,
          priceTrend: sparklineSvg(
            coinSeries(runs, coin.asset, 'price'),
            `${coin.asset} price over recent runs`,
            { times },
          ),
          confidenceTrend: sparklineSvg(
            coinSeries(runs, coin.asset, 'confidence'),
            `${coin.asset} confidence over recent runs`,
            { color: '#E69F00', times },
          ),
        };
      })
    : [];

  const priceSeries = assets.map((asset, i) => ({
    label: asset,
    color: PALETTE[i % PALETTE.length] ?? '#000',
    values: relativeToFirst(coinSeries(runs, asset, 'price')),
  }));
  const confidenceSeries = [
    { label: 'Market confidence', color: '#0072B2', values: runs.map((run) => run.confidence) },
    { label: 'Risk score', color: '#D55E00', values: runs.map((run) => run.risk_score) },
  ];
  const regimeValues = [...new Set(runs.flatMap((run) => [run.market_mode, run.market_state]))];

  return {
    snapshot: r && {
      simulated: r.source.simulated,
      mode: r.source.mode,
      provider: r.source.provider,
      generatedAt: r.source.generated_at,
      nextUpdateDue: r.source.next_update_due,
      marketMode: r.market_mode,
      marketState: r.market_state,
      confidence: r.confidence,
      riskScore: r.regime.risk_score,
      riskLevel: r.regime.risk_level,
      summary: r.summary,
      evidence: r.regime.evidence,
      limitations: r.regime.limitations,
    },
    coins,
    charts: {
      runs: runs.length,
      minRuns: MIN_CHART_RUNS,
      collecting: runs.length < MIN_CHART_RUNS,
      simulatedRuns: runs.filter((run) => run.mode === 'simulated').length,
      prices: lineChartSvg({
        title: 'Price change since the first run shown',
        times,
        series: priceSeries,
        yLabel: 'change, %',
        formatY: (v) => `${v > 0 ? '+' : ''}${v.toFixed(1)}%`,
      }),
      priceLegend: priceSeries.map(({ label, color }) => ({ label, color })),
      confidence: lineChartSvg({
        title: 'Market confidence and risk score',
        times,
        series: confidenceSeries,
        yLabel: 'score, 0-100',
        yDomain: [0, 100],
      }),
      confidenceLegend: confidenceSeries.map(({ label, color }) => ({ label, color })),
      regime: bandChartSvg(
        'Market mode and market state over recent runs',
        times,
        [
          { label: 'market mode', values: runs.map((run) => run.market_mode) },
          { label: 'market state', values: runs.map((run) => run.market_state) },
        ],
        regimeColor,
      ),
      regimeLegend: regimeValues.map((label) => ({ label, color: regimeColor(label) })),
    },
  };
}
