// The arena's track record page: brain versus crowd over time, read from the published statistics history
// (api/history/statistics/latest.json), with the sample size and the 95 % Wilson interval of every hit rate.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HistoryLatestFile } from '../../schemas/history.ts';
import type { HistoryValue } from '../../schemas/history.ts';
import { MIN_SAMPLE } from '../engines/arena/metrics.ts';
import { lineChartSvg } from './charts.ts';
import { MIN_CHART_RUNS } from './history.ts';

export interface TrackRecordSide {
  label: string;
  n: number | null;
  hitRate: string;
  interval: string;
  brier: string;
}

export interface TrackRecordView {
  runs: number;
  minRuns: number;
  collecting: boolean;
  simulatedRuns: number;
  latestAt: string | null;
  teacherStatus: string | null;
  sides: TrackRecordSide[];
  /** A whole sentence: how often brain and crowd agreed, or why that cannot be said yet. */
  agreement: string;
  chart: string | null;
}

const num = (value: HistoryValue | undefined): number | null => (typeof value === 'number' ? value : null);
const percent = (value: number | null) => (value === null ? 'n/a' : `${(value * 100).toFixed(1)} %`);

const roundsText = (n: number): string => `${n} round${n === 1 ? '' : 's'}`;

/** What a table cell shows for a figure: its value, "withheld" below the minimum sample (README), or n/a. */
const cell = (value: string | null, n: number | null): string =>
  value ?? (n !== null && n > 0 && n < MIN_SAMPLE ? `withheld (n < ${MIN_SAMPLE})` : 'n/a');

/**
 * The agreement sentence: a rate needs rounds in which both the brain called and the crowd made a call, and is
 * withheld (null) below MIN_SAMPLE of them, which is not the same as having none.
 */
export function agreementSentence(rate: number | null, rounds: number | null): string {
  if (!rounds) {
    return 'Brain and crowd cannot be compared yet: no round in the scoring window has both a brain call and a crowd consensus.';
  }
  if (rate === null) {
    return (
      `Brain and crowd both made a call in only ${roundsText(rounds)} so far; the agreement rate is withheld ` +
      `below ${MIN_SAMPLE} rounds.`
    );
  }
  return `Brain and crowd agreed in ${percent(rate)} of ${roundsText(rounds)}.`;
}

async function statisticsRows(publishedDir: string): Promise<Array<Record<string, HistoryValue>>> {
  try {
    const file = HistoryLatestFile.safeParse(
      JSON.parse(await readFile(join(publishedDir, 'api/history/statistics/latest.json'), 'utf8')),
    );
    return file.success ? file.data.rows : [];
  } catch {
    return [];
  }
}

function side(
  row: Record<string, HistoryValue> | undefined,
  prefix: 'brain' | 'crowd',
  label: string,
): TrackRecordSide {
  const n = num(row?.[`${prefix}_n`]);
  const rate = num(row?.[`${prefix}_hit_rate`]);
  const low = num(row?.[`${prefix}_hit_rate_low`]);
  const high = num(row?.[`${prefix}_hit_rate_high`]);
  const brier = num(row?.[`${prefix}_brier_score`]);
  return {
    label,
    n,
    hitRate: cell(rate === null ? null : percent(rate), n),
    interval: cell(low === null || high === null ? null : `${percent(low)} to ${percent(high)}`, n),
    brier: cell(brier === null ? null : brier.toFixed(3), n),
  };
}

export async function buildTrackRecordView(publishedDir: string): Promise<TrackRecordView> {
  const rows = await statisticsRows(publishedDir);
  const latest = rows.at(-1);
  const times = rows.map((row) => String(row.run_at));
  const asPercent = (key: string) =>
    rows.map((row) => (num(row[key]) === null ? null : (num(row[key]) ?? 0) * 100));
  return {
    runs: rows.length,
    minRuns: MIN_CHART_RUNS,
    collecting: rows.length < MIN_CHART_RUNS,
    simulatedRuns: rows.filter((row) => row.data_mode === 'simulated').length,
    latestAt: typeof latest?.run_at === 'string' ? latest.run_at : null,
    teacherStatus: typeof latest?.teacher_status === 'string' ? latest.teacher_status : null,
    sides: [side(latest, 'brain', 'Main brain'), side(latest, 'crowd', 'Crowd consensus')],
    agreement: agreementSentence(num(latest?.agreement_rate), num(latest?.agreement_n)),
    chart:
      rows.length < MIN_CHART_RUNS
        ? null
        : lineChartSvg({
            title: 'Hit rate of the brain and of the crowd over the scoring window',
            times,
            yDomain: [0, 100],
            yLabel: 'hit rate, %',
            series: [
              { label: 'Main brain', color: '#0072B2', values: asPercent('brain_hit_rate') },
              { label: 'Brain, 95 % low', color: '#56B4E9', values: asPercent('brain_hit_rate_low') },
              { label: 'Crowd', color: '#E69F00', values: asPercent('crowd_hit_rate') },
              { label: 'Crowd, 95 % low', color: '#F0C080', values: asPercent('crowd_hit_rate_low') },
            ],
          }),
  };
}
