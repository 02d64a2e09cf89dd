// The published history: one compact row per generator run and per free resource, in day files, a latest file
// and an index. Columns are declared once here; the row schema, the CSV header and the docs all come from them.
import * as z from 'zod';
import {
  DataMode,
  EARLIER_EDUCATIONAL_NOTICES,
  EDUCATIONAL_NOTICE,
  IsoTimestamp,
  TRACKED_ASSETS,
} from './common.ts';
import { UNPUBLISHED_RUNS_DAYS } from './status.ts';

export type ColumnKind = 'number' | 'string';

export interface HistoryColumn {
  name: string;
  kind: ColumnKind;
  description: string;
}

export interface HistoryResourceSpec {
  /** Folder name under `/api/history/`: the resource's file name without `.php`. */
  id: HistoryResourceId;
  /** The free path whose key values the rows keep. */
  sourcePath: string;
  title: string;
  columns: readonly HistoryColumn[];
}

export const HISTORY_RESOURCE_IDS = [
  'market-regime',
  'main-brain',
  'liquidity-lite',
  'derivatives',
  'human-consensus',
  'statistics',
] as const;
export const HistoryResourceId = z.enum(HISTORY_RESOURCE_IDS);
export type HistoryResourceId = z.infer<typeof HistoryResourceId>;

/** Rows kept in `latest.json`. */
export const LATEST_ROWS = 500;
export const DEFAULT_RETENTION_DAYS = 400;

const num = (name: string, description: string): HistoryColumn => ({ name, kind: 'number', description });
const str = (name: string, description: string): HistoryColumn => ({ name, kind: 'string', description });
const perAsset = (make: (asset: string, lower: string) => HistoryColumn[]): HistoryColumn[] =>
  TRACKED_ASSETS.flatMap((asset) => make(asset, asset.toLowerCase()));

export const HISTORY_RESOURCES: Record<HistoryResourceId, HistoryResourceSpec> = {
  'market-regime': {
    id: 'market-regime',
    sourcePath: '/api/market-regime.php',
    title: 'Market regime',
    columns: [
      str('market_mode', 'market_mode of the run (RISK_ON, RISK_OFF, NEUTRAL or UNKNOWN)'),
      str('market_state', 'market_state of the run: a description of the evidence, not an instruction'),
      num('confidence', 'confidence of the regime reading, 0-100 (how strongly the evidence agrees)'),
      num('risk_score', 'regime risk score, 0-100 (higher: more signs of stress); null without evidence'),
      str('risk_level', 'risk level named from the risk score; null without evidence'),
    ],
  },
  'main-brain': {
    id: 'main-brain',
    sourcePath: '/api/main-brain.php',
    title: 'Main brain',
    columns: perAsset((asset, a) => [
      num(`${a}_price`, `${asset} last price in USD; null when no venue answered`),
      str(`${a}_bias`, `${asset} educational bias (bullish, bearish, neutral); null without evidence`),
      num(`${a}_confidence`, `${asset} confidence of the reading, 0-100; null without evidence`),
    ]),
  },
  'liquidity-lite': {
    id: 'liquidity-lite',
    sourcePath: '/api/liquidity-lite.php',
    title: 'Liquidity lite',
    columns: perAsset((asset, a) => [
      str(
        `${a}_liquidity_context`,
        `${asset} liquidity context (deep, moderate or thin, from the order book; without one only a wide spread ` +
          'reads thin, see liquidity-lite); null without a label or without data',
      ),
      num(`${a}_spread_bps`, `${asset} bid-ask spread in basis points; null without data`),
      num(`${a}_relative_volume`, `${asset} 24 h volume over its usual level (1 = usual); null without data`),
      num(`${a}_book_imbalance`, `${asset} order-book imbalance within 1 %, -1 to 1; null without data`),
    ]),
  },
  derivatives: {
    id: 'derivatives',
    sourcePath: '/api/derivatives.php',
    title: 'Derivatives',
    columns: [
      str('overall_state', 'market-wide positioning state of the run'),
      str('overall_vote', 'market-wide positioning lean (bullish, bearish, neutral)'),
      num(
        'confidence',
        'market-wide positioning confidence, 0-100: the mean over all tracked assets, an asset without a ' +
          'positioning reading counting as 0 (rows written before this rule averaged the assets with a reading ' +
          'only, scaled by the share voting with the overall vote)',
      ),
      ...perAsset((asset, a) => [
        str(`${a}_state`, `${asset} positioning state; null without derivatives data`),
        num(`${a}_funding_rate_8h_pct`, `${asset} funding rate per 8 hours, percent; null without data`),
        num(`${a}_open_interest_change_24h_pct`, `${asset} open-interest change over 24 h, percent`),
      ]),
    ],
  },
  'human-consensus': {
    id: 'human-consensus',
    sourcePath: '/api/human-consensus.php',
    title: 'Human consensus',
    columns: [
      str('round_id', 'arena round the votes belong to'),
      str('asset', 'asset of the round'),
      str('consensus', 'crowd consensus (BULLISH, BEARISH, NEUTRAL or NONE)'),
      num('votes_total', 'votes by people counted in the round so far (synthetic votes never count here)'),
      num('human_votes', 'votes cast by people'),
      num('synthetic_votes', 'synthetic votes (labelled as such in the arena files)'),
      num('bullish_percent', 'share of bullish votes, percent'),
      num('bearish_percent', 'share of bearish votes, percent'),
      num('neutral_percent', 'share of neutral votes, percent'),
    ],
  },
  statistics: {
    id: 'statistics',
    sourcePath: '/api/statistics.php',
    title: 'Statistics (arena track record)',
    columns: [
      str('teacher_status', 'status of the teacher brain scores (no_history while the sample is too small)'),
      num('resolved_rounds', 'arena rounds resolved in the scoring window'),
      num('brain_n', 'resolved rounds with a brain call'),
      num('brain_hit_rate', 'share of brain calls that matched the outcome, 0-1; null without calls'),
      num('brain_hit_rate_low', 'lower end of the 95 % Wilson interval of the brain hit rate, 0-1'),
      num('brain_hit_rate_high', 'upper end of the 95 % Wilson interval of the brain hit rate, 0-1'),
      num('brain_brier_score', 'Brier score of the brain, 0-2 (lower is better); null without calls'),
      num('crowd_n', 'resolved rounds with a crowd consensus'),
      num('crowd_hit_rate', 'share of crowd consensus calls that matched the outcome, 0-1'),
      num('crowd_hit_rate_low', 'lower end of the 95 % Wilson interval of the crowd hit rate, 0-1'),
      num('crowd_hit_rate_high', 'upper end of the 95 % Wilson interval of the crowd hit rate, 0-1'),
      num('crowd_brier_score', 'Brier score of the crowd, 0-2 (lower is better)'),
      num('agreement_rate', 'share of rounds where brain and crowd agreed, 0-1'),
      num('agreement_n', 'rounds with both a brain call and a crowd consensus'),
    ],
  },
};

const SOURCE_STATUS_MEANING =
  'the status of this resource’s own body in the run: `degraded` when that body was published degraded (a section ' +
  'missing or weaker, a collection issue; its limitations said which), otherwise `ok`. The arena resources ' +
  '(human-consensus, statistics) read the vote store, not market venues: always `ok`';

export const SourceStatus = z.enum(['ok', 'degraded']).describe(SOURCE_STATUS_MEANING);

/** The columns every row has before the resource's own. */
export const BASE_COLUMNS: readonly HistoryColumn[] = [
  str('run_at', 'generation time of the run (ISO 8601, UTC)'),
  str('data_mode', 'data mode of the run: live, replay or simulated (simulated rows are not market data)'),
  str('source_status', SOURCE_STATUS_MEANING),
];

export type HistoryValue = number | string | null;
export interface HistoryRow {
  run_at: string;
  data_mode: DataMode;
  source_status: z.infer<typeof SourceStatus>;
  [column: string]: HistoryValue;
}

/** The row schema of one resource: the base columns, then each declared column (nullable). */
export function historyRowSchema(spec: HistoryResourceSpec) {
  const shape: Record<string, z.ZodType> = {
    run_at: IsoTimestamp.describe(BASE_COLUMNS[0]?.description ?? ''),
    data_mode: DataMode.describe(BASE_COLUMNS[1]?.description ?? ''),
    source_status: SourceStatus,
  };
  for (const column of spec.columns) {
    const base = column.kind === 'number' ? z.number().finite() : z.string();
    shape[column.name] = base.nullable().describe(column.description);
  }
  return z.object(shape);
}

const fileFields = {
  resource: HistoryResourceId,
  source_path: z.string().describe('the free path whose key values these rows keep'),
  educational_notice: z.literal(EDUCATIONAL_NOTICE),
  columns: z.array(z.string()).describe('column order (the CSV twin uses the same order)'),
};

/**
 * The rows of a day or latest file. Each row is one run, never one asset: a per-asset value is a column of its own
 * (`btc_price`), so the generic meaning of `rows` (schemas/field-meanings.ts) does not fit.
 */
const historyRows = (which: string) =>
  z
    .array(z.record(z.string(), z.union([z.number(), z.string(), z.null()])))
    .describe(
      `${which}; keyed by the names in \`columns\` (null where the run had no value), each row as the ` +
        'resource’s row schema at /schemas/history-<resource>-row.json describes it. A run that published nothing ' +
        `has no row: /status.json \`unpublished_runs\` lists such runs of the last ${UNPUBLISHED_RUNS_DAYS} days, so a ` +
        'gap it does not cover had no run',
    );

/** `/api/history/<resource>/<YYYY-MM-DD>.json`: one UTC day, append-only until the day is over. */
export const HistoryDayFile = z.object({
  ...fileFields,
  educational_notice: z
    .enum([EDUCATIONAL_NOTICE, ...EARLIER_EDUCATIONAL_NOTICES])
    .describe(
      `the notice of the day the file was written (a finished day keeps the one it had): "${EDUCATIONAL_NOTICE}", ` +
        `or, in a day written by an earlier release, "${EARLIER_EDUCATIONAL_NOTICES.join('" or "')}"`,
    ),
  date: z.iso.date(),
  rows: historyRows('one row per run of this UTC day, oldest first'),
});
export type HistoryDayFile = z.infer<typeof HistoryDayFile>;

/** `/api/history/<resource>/latest.json`: the last rows across days, oldest first. */
export const HistoryLatestFile = z.object({
  ...fileFields,
  max_rows: z.number().int().positive(),
  rows: historyRows('one row per run, the last `max_rows` runs across days, oldest first'),
});
export type HistoryLatestFile = z.infer<typeof HistoryLatestFile>;

export const HistoryIndexEntry = z.object({
  resource: HistoryResourceId,
  title: z.string(),
  source_path: z.string(),
  columns: z.array(
    z.object({ name: z.string(), kind: z.enum(['number', 'string']), description: z.string() }),
  ),
  first_date: z.iso.date().nullable(),
  last_date: z.iso.date().nullable(),
  days: z.array(z.iso.date()).describe('every day file that exists, oldest first'),
  latest_json: z.string(),
  latest_csv: z.string(),
  day_json: z.string().describe('path template of a day file; replace {date} with YYYY-MM-DD'),
  day_csv: z.string(),
  row_schema: z.string().describe('the JSON Schema of one row'),
});

/** `/api/history/index.json`: what exists. */
export const HistoryIndexFile = z.object({
  educational_notice: z.literal(EDUCATIONAL_NOTICE),
  updated_utc: IsoTimestamp,
  retention_days: z.number().int().positive(),
  latest_rows: z.number().int().positive(),
  cache_note: z.string(),
  resources: z.array(HistoryIndexEntry),
});
export type HistoryIndexFile = z.infer<typeof HistoryIndexFile>;

export const historyDir = (id: HistoryResourceId) => `api/history/${id}`;
export const HISTORY_INDEX_FILE = 'api/history/index.json';
