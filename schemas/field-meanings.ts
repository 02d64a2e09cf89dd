// What each published field means, for the fields whose zod schema carries no `.describe()` of its own: one
// place, read when the JSON Schemas are emitted, so that OpenAPI, /schemas/, the docs pages and llms.txt all say
// the same thing. A field's own `.describe()` wins. Keys are a field name or, where one name means different
// things in different places, "parent.name" (the enclosing property; an array's items and a map's values count
// as the array or map) or "name:type" (the field's JSON type, null aside: a count is an "integer", a share a
// "number"). A name that no meaning fits everywhere (`level`, `kind`) has no bare key, so that a new field of
// that name shows up undescribed rather than misdescribed. Nothing here is a trading instruction, and each
// reading says so.

import { MEAN_OVER_ALL_ASSETS_RULE, PRICE_MEANING } from './common.ts';
import {
  DOMINANT_SIDE_RULE,
  OI_FLAT_WORDS,
  OI_PRICE_FLAT_WORDS,
  OPEN_INTEREST_READING_RULE,
} from './derivatives.ts';
import { LIQUIDITY_CONTEXT_MEANING } from './liquidity-lite.ts';

const NOT_ADVICE = 'A description of evidence, not an instruction to buy, sell or wait.';

const LIQUIDITY_STATUS =
  'whether the liquidity reading came in whole, judged on what it reads (order book, hourly candles, 24-hour ' +
  'ticker): `verified` (live data only: all three came in, the order book readable, relative volume and Amihud ' +
  'readable, and no data issue of the asset on them), `partial` (one of them missing, weaker or with a data issue ' +
  'of the asset; see the limitations), `unavailable` (no candles, ticker or order book: no reading); null when the ' +
  'data came in whole but is simulated or replayed, so nothing was observed live to verify. Gaps in other sections ' +
  '(derivatives) show in `data_status`, not here';
const OUTCOME_SHARE = (side: string) => `probability or share of the ${side} outcome, 0-1`;

/** Meanings by "parent.field" (checked first) or "field:type" (next), where a bare name would be ambiguous. */
export const FIELD_MEANINGS_IN: Readonly<Record<string, string>> = {
  'volatility.level':
    'where current volatility ranks against recent history: `calm` (30th percentile or lower), `normal`, ' +
    '`elevated` (70th or higher), `extreme` (90th or higher); null without enough history',
  'correlation.level':
    'band of `average_pairwise`: `low` (under 0.3), `moderate` (0.3 to under 0.6), `high` (0.6 or more: the ' +
    'assets move together); null without data',
  'risk_factors.level':
    'how much risk the factor reads, by the rule of its `factor`: `volatility` follows the volatility ' +
    'level (calm low, normal moderate, elevated elevated, extreme high); `breadth` the share above the ' +
    '50-hour average (0.6 or more low, 0.4 or more moderate, 0.2 or more elevated, less high; given only when ' +
    'the assets without a trend reading could not change it); `leverage` ' +
    'and `liquidity` count the assets with crowded positioning or an extreme funding level, or with thin ' +
    'liquidity (0 low, 1 moderate, 2-3 elevated, 4 or more high); `data_quality` is `high` when half the ' +
    'assets or more had no data, `elevated` when any had none or lacked a trend reading, `moderate` when ' +
    'any was partial or the market regime rests on partial evidence (a short history, a part it could not ' +
    'read), `low` only when nothing was missing. The note gives the figures behind it; a level, ' +
    'never a weight',
  'assets.status': LIQUIDITY_STATUS,
  'liquidity.status': LIQUIDITY_STATUS,
  'teacher_brain.status': 'whether there are enough resolved rounds for the figures to mean anything',
  'teacher_brain.metrics':
    'the teacher’s figures over the resolved rounds of the window: hit rates, agreement, calibration, base rates',
  'status:integer': 'the HTTP status code of this answer',
  'generator_runs.ok': 'runs whose files were published',
  'recent.kind': '`brain_call_recorded`, `round_resolved` or `round_voided` (no price to resolve with)',
  'charts.kind': 'how the chart is drawn: `bar` or `stacked-bar`',
  'columns.kind': 'type of the column’s values: `number` or `string`; a missing value is null in either',
  'rows.agreement':
    'whether the asset’s directional readings (brain, derivatives, order book) lean the same way: `aligned`, ' +
    '`mixed` (neutral beside one direction), `conflicting` (one bullish, one bearish) or `insufficient` ' +
    '(fewer than two readings)',
  'liquidations.events':
    'liquidation orders the venue reported in 24 hours; null when the figures are estimated (an estimate observes none)',
  'events:object': 'the arena’s recent events (brain calls recorded, rounds resolved or voided) with a note',
  'price:object': 'the round asset’s price: now, at the round start and the change since, with the data mode',
  'resource:object': 'the resource being sold',
  'confidence:object':
    'confidence overall and per asset, 0-100 each: how strong, consistent and complete the evidence is; not a ' +
    'probability that a reading is right',
  'evidence:object': 'plain-language statements of what the evidence shows, grouped by section',
  'summary:object':
    'plain-language summary of the body with the market-wide readings; educational, not advice',
  'evidence.market': 'the market regime’s evidence in plain words (`regime.evidence` of the market regime)',
  'evidence.liquidity': 'each asset’s liquidity notes, prefixed with its symbol',
  'evidence.derivatives':
    'the derivatives body’s evidence in plain words (funding, open interest, liquidations)',
  'evidence.reasoning': 'each asset’s reasoning summary',
  'bullish:number': OUTCOME_SHARE('bullish (up)'),
  'bearish:number': OUTCOME_SHARE('bearish (down)'),
  'neutral:number': OUTCOME_SHARE('neutral (flat)'),
  'hit_rate.value':
    'share of resolved calls that were right, 0-1 (0.5 is a coin toss); null when none resolved',
  'hit_rate.n': 'number of resolved calls the rate is computed from; small n means a wide interval',
  'agreement_rate.value': 'share of rounds where the brain and the crowd called the same side, 0-1',
  'agreement_rate.n': 'number of rounds with both a brain call and a crowd consensus',
  'upsell.message': 'where a paid resource gives more detail on the same subject; informational',
  'brain_snapshot.source':
    '`recorded_for_round`: the call the brain recorded when this round opened; `latest_run`: the most recent ' +
    'run’s reading (no call recorded for the round yet); `unavailable`: no reading exists',
  'price.as_of': 'market time of the price shown (UTC, ISO 8601)',
  'resource.url': 'the absolute URL being sold; the payment is bound to it',
  'sections.id': 'stable identifier of the report section',
  'columns.key': 'the field of each row that this column shows',
  'columns.label': 'the column heading for people',
  'generator_runs.failed':
    'runs that published nothing and left the previous files in place: failed, ended without a price (no source ' +
    'delivered one), or never finished (killed)',
  'endpoints.path': 'URL path of the endpoint on this site',
  'arena_resources.path': 'URL path of the arena endpoint on this site',
  'publisher.contact_url': 'how to reach the publisher who resold this report (https or mailto)',
  'publisher.terms_url': 'the publisher’s own terms for this resale',
  'publisher.pay_to': 'the Algorand address the buyer paid: the publisher’s own, never the operator’s',
  'publisher.price_usd': 'the price the buyer paid the publisher, in USD (USDC)',
  'resources.source_path': 'the free endpoint whose values this history keeps',
  'resources.first_date': 'the first UTC day with a history file (YYYY-MM-DD); null when none yet',
  'resources.last_date': 'the last UTC day with a history file (YYYY-MM-DD); null when none yet',
  'resources.latest_json': 'URL path of the latest rows as JSON',
  'resources.latest_csv': 'URL path of the latest rows as CSV',
  'resources.day_csv': 'URL path pattern of one day’s rows as CSV',
};

/** Meanings by field name. */
export const FIELD_MEANINGS: Readonly<Record<string, string>> = {
  // History (api/history/)
  retention_days: 'how many days of history files are kept; older day files are removed',
  latest_rows: 'how many rows each latest file holds at most',
  max_rows: 'the most rows this file holds; older rows are in the day files',
  cache_note: 'how long hosts may cache each kind of history file, and why',
  resources: 'one entry per resource whose values are kept in history',
  date: 'the UTC day (YYYY-MM-DD) this file covers; final once a later day has a file',
  // Envelope
  success: 'true when the body carries the resource; error bodies say false',
  ok: 'legacy alias of `success`: true when the body carries the resource',
  project: 'name of the publishing project',
  endpoint: 'name of this endpoint, e.g. "market-regime"',
  name: 'human-readable name of the resource or item',
  version: 'API version of the catalogue, e.g. "v1.3"',
  schema_version: 'semantic version of this body’s schema; a major change may remove or rename fields',
  access: '`free_public` for free endpoints; paid ones say how they are sold',
  status:
    '`available`: every section had data; `degraded`: some section lacked data or came in weaker, and `limitations` says which',
  purpose: 'what this resource is for, in one sentence',
  product_id: 'catalogue product identifier, e.g. "SVC-API-002"',
  tier: 'commercial tier of the resource: free or paid',
  agent_guidance: 'when an automated client should and should not use this resource',
  recommended_for: 'kinds of readers or agents this resource suits',
  when_to_use: 'situations where this resource helps',
  when_not_to_use: 'situations where this resource is the wrong tool (e.g. as a trading signal)',
  next_step: 'which resource to read next for more context',
  usage_characteristics: 'technical facts a client needs: format, caching, authentication, payment',
  machine_readable: 'always true: the body is meant for programs as well as people',
  stable_schema: 'true when fields are only added within a major schema version, never removed or renamed',
  cache_seconds: 'how long, in seconds, a cache may keep this body (0: never)',
  authentication: '`none`: no account, key or token is needed',
  payment_required: 'true when the resource is sold over x402; false for free resources',
  response_format: 'media type of the body',
  mode: '`simulated`: seeded simulator, no real observation; `live`: public venues; `replay`: recorded venue answers played back',
  source_mode: 'same as `source.mode`: `simulated`, `live` or `replay`',
  data_mode: 'where the price came from: `simulated`, `live` or `replay` (as `source.mode`)',
  summary: 'plain-language summary of the body; educational, not advice',
  provides: 'what this resource does provide',
  does_not_provide: 'what this resource does not provide (e.g. trading signals, price targets)',
  openapi_json: 'path of the OpenAPI 3.1 document (JSON)',
  openapi_yaml: 'path of the OpenAPI 3.1 document (YAML)',
  llms_txt: 'path of the llms.txt summary for language-model agents',
  protocol: 'payment protocol of the paid resources: x402 version 2',
  description: 'plain-language description',
  endpoints: 'related endpoints with their paths',
  path: 'URL path on this site (relative to the site’s base URL)',
  truth_statement: 'what the numbers are and how they were produced, stated plainly',
  disclaimer: 'educational notice: not financial, investment or trading advice',
  educational_only: 'always true: the content is educational only',
  not_financial_advice: 'always true: nothing here is financial advice',
  legacy_endpoint: 'the older path this resource replaces, if any; null when none',
  engine: 'name of the engine that computed the body; null when not stated',
  engine_version: 'version of the engine that computed the body; null when not stated',
  provider: 'who produced the numbers, e.g. "seeded market simulator"; null when not stated',
  generated_at: 'when the generator produced this body (UTC, ISO 8601)',
  updated_at: 'when this body was last updated (UTC, ISO 8601); same moment as `generated_at`',
  updated_utc: 'when this body was last updated (UTC, ISO 8601)',
  updated: 'when the paid file was generated (UTC, ISO 8601); paid files are pre-generated by each run',
  simulated: 'true when no number in the body is a real market observation',
  payment_status: '`settled`: this body was delivered after the payment settled on the network',
  // Market readings
  market_mode:
    'the market-wide risk backdrop read from the evidence: `RISK_ON` (risk score under 40: evidence of a ' +
    'market taking risk), `RISK_OFF` (60 or more: evidence of stress), `NEUTRAL` (in between: mixed evidence), ' +
    `\`UNKNOWN\` (no candle evidence at all). A label for the evidence, not a forecast. ${NOT_ADVICE}`,
  market_state:
    'a short reading of the evidence: `CAUTION` (risk-off, or volatility at/above its 90th percentile: ' +
    'conditions are stressed), `OPPORTUNITY` (risk-on with confidence 50 or more: evidence is broad and ' +
    'consistent), `WAIT` (neither: the evidence is mixed or weak), `UNKNOWN` (no candle evidence at all, as ' +
    '`market_mode` UNKNOWN: no reading). None of them is a trading call. ' +
    NOT_ADVICE,
  confidence:
    '0-100: how strong, consistent and complete the evidence behind the reading is (capped at 95). Not a ' +
    'probability that the reading is right and not certainty; it falls when signals disagree or data is missing',
  risk_score:
    '0-100: how much the evidence points to a risk-off market (higher is riskier); null when there is no ' +
    'evidence. Not a probability of loss and not a rating of any asset',
  risk_level:
    '`low` (<25), `moderate` (25-50), `elevated` (50-75), `high` (75+) bands of `risk_score`; null when no score',
  assets_covered: 'assets with enough data to enter the reading',
  assets_total: 'assets tracked',
  assets_above_ema50: 'assets whose price is above their 50-hour exponential moving average',
  assets_with_trend_data: 'assets with enough candles to compute that average',
  share_above_ema50: 'share of assets above their 50-hour average, 0-1; null without trend data',
  breadth_share_above_ema50: 'share of assets above their 50-hour average, 0-1; null without trend data',
  median_direction: 'direction of the typical asset’s trend: `up`, `down` or `flat`; null without data',
  volatility_level: 'volatility band: `calm`, `normal`, `elevated`, `extreme`; null without data',
  deepest_asset: 'asset furthest below its recent high; null without data',
  deepest_from_recent_high_pct: 'how far that asset is below its recent high, in percent (0 or negative)',
  lookback_hours: 'window, in hours, used to find the recent high',
  average_pairwise:
    'average pairwise correlation of hourly returns, -1 to 1 (1: move together); null without data',
  assets_sampled: 'assets used for the correlation (at most 30)',
  pairs: 'asset pairs the correlation averages over',
  limitations: 'what is missing or uncertain in this body, in plain words; empty when nothing is',
  notes: 'plain-language notes about the context',
  coins: 'one entry per tracked asset, keyed by symbol',
  assets: 'one entry per tracked asset, keyed by symbol',
  asset: 'asset symbol, e.g. "BTC"',
  data_status:
    'how much market data this asset had this run: `available` (every section came in clean), `partial` (some ' +
    'section was missing or had a collection issue; see the limitations), `unavailable` (no price and no ' +
    'evidence from any venue: every reading of the entry is null, and a limitation says so). An asset that is ' +
    '`unavailable` has no reading at all; it is not neutral',
  price_source: 'where the price came from (venue or simulator); null when no price',
  price: PRICE_MEANING,
  assets_tracked: 'assets the brain reads',
  assets_with_evidence: 'assets with enough data for a reading',
  leaning: 'how many assets the evidence leans bullish, bearish or neutral on',
  bullish: 'count leaning or voting bullish (up)',
  bearish: 'count leaning or voting bearish (down)',
  neutral: 'count leaning or voting neutral (no side)',
  unknown: 'count with no data to lean either way',
  none: 'count with no call (no data)',
  average_confidence: `mean confidence, 0-100: ${MEAN_OVER_ALL_ASSETS_RULE}`,
  market_context: 'market-wide backdrop for the per-asset readings',
  resolved_rounds: 'arena rounds resolved in the window',
  window_days:
    'length of the track-record window, in days: rounds that ended after as_of minus this many days and at or ' +
    'before as_of',
  hit_rate:
    'share of resolved calls that were right with its n and 95 % Wilson interval; null when none resolved',
  value: 'the measured value',
  n: 'number of observations behind the value',
  wilson_low: 'lower bound of the 95 % Wilson score interval, 0-1',
  wilson_high: 'upper bound of the 95 % Wilson score interval, 0-1',
  note: 'plain-language note on how to read the figures',
  asset_count: 'assets in this body; null when not stated',
  assets_verified:
    'assets whose `status` is `verified`: live data that came in whole (0 for simulated or replayed data); null ' +
    'when not stated',
  assets_failed: 'assets whose data was missing or failed the checks; null when not stated',
  liquidity_context: LIQUIDITY_CONTEXT_MEANING,
  liquidity: 'liquidity of the asset (spread, depth, structure); null without data',
  metrics: 'the measured figures behind the reading; null without data',
  upsell: 'a pointer to a paid resource with more detail; informational, null when none',
  message: 'plain-language message',
  overall_state: 'market-wide positioning state over all assets (same values as `state`); null without data',
  overall_vote:
    'how the derivatives evidence leans overall: `bullish`, `bearish` or `neutral`; a reading of positioning, ' +
    'not a call',
  vote: 'how this evidence leans: `bullish`, `bearish` or `neutral`; null without data. Not a trading call',
  state:
    'positioning read from funding and open interest: `crowded_longs`/`crowded_shorts` (one side pays a lot to ' +
    'hold), `new_longs`/`new_shorts` (open interest rising with price up/down), `short_covering` (falling open ' +
    'interest with price up), `deleveraging` (falling open interest with price down), `balanced` (the readings ' +
    `that came in show no side: funding not crowded, open interest flat (a 24-hour change inside ${OI_FLAT_WORDS}), ` +
    `moving while the price's 24-hour change stayed inside ${OI_PRICE_FLAT_WORDS} (too flat to name a side), or ` +
    'without a 24-hour comparison), ' +
    '`unavailable` (no positioning reading: no funding and no 24-hour open-interest change; any figure that came ' +
    'in is still shown, and `vote` and `confidence` are null); null when the asset had no data at all ' +
    '(`data_status` `unavailable`). A description, not a signal',
  derivatives_state: 'positioning state of the asset (see `state` in derivatives); null without data',
  funding: 'perpetual funding of the asset; null without data',
  venue_interval_hours: 'how often, in hours, the venue settles funding',
  rate_kind:
    '`predicted`: the funding rate the venue states for the period still running (it can change until the period ' +
    'settles); `settled`: the last rate actually charged',
  open_interest: 'open interest of the perpetual contract; null without data',
  value_usd: 'open interest in US dollars',
  change_24h_pct: 'change over 24 hours, in percent; null without a 24-hour-old value',
  price_change_24h_pct: 'price change over the same 24 hours, in percent; null without data',
  liquidations: 'forced closures of leveraged positions over 24 hours; null without data',
  long_usd_24h:
    'long positions liquidated in 24 hours, in US dollars; when estimated, an upper bound from open-interest drops',
  short_usd_24h:
    'short positions liquidated in 24 hours, in US dollars; when estimated, an upper bound from open-interest drops',
  dominant_side: DOMINANT_SIDE_RULE,
  evidence: 'plain-language statements of what the evidence shows; null without data',
  related_endpoints: 'other endpoints on the same subject; null when none',
  explore: 'what else can be queried; null when nothing',
  supported_assets: 'asset symbols this endpoint covers',
  upgrade_path: 'the paid resource that extends this one; informational, null when none',
  // Arena
  type: 'kind of body, e.g. "human_consensus"',
  round: 'the arena round: its id, start, end and status',
  human_consensus: 'the crowd’s votes in the round: counts, shares and consensus',
  total: 'total votes counted',
  bullish_percent: 'share of votes for up, in percent (0-100)',
  bearish_percent: 'share of votes for down, in percent (0-100)',
  vote_sources: 'where the votes came from (people, imported files, simulated voters), counted',
  developer_note: 'a note for developers integrating this endpoint',
  educational_notice: 'educational notice: not advice, sparse votes are never a guarantee',
  teacher_brain: 'what resolved rounds teach: hit rates of the brain, the crowd and both, and calibration',
  role: 'what this component does, in one sentence',
  brain: 'figures for the main brain’s calls',
  crowd: 'figures for the crowd’s consensus',
  combined:
    'figures for the combined forecast (brain and human crowd probabilities averaged) over every resolved round; ' +
    'its hit rate counts only the rounds where it made a call (a tie at the top is no call)',
  agreement_rate: 'how often brain and crowd called the same side, with n; null without such rounds',
  agreement_n: 'rounds where both the brain and the crowd made a call',
  calibration: 'observed hit rate per confidence band',
  confidence_from: 'lower edge of the confidence band (0-100)',
  confidence_to: 'upper edge of the confidence band (0-100)',
  observed_hit_rate: 'share of calls in the band that were right, 0-1; null when none resolved',
  outcome_base_rate:
    'how often each outcome (up, down, flat) happened, smoothed as (count + 1) / (n + 3) so that no outcome reads ' +
    'as impossible: the rate a guess would get',
  outcome_rule: 'how a round’s outcome is decided from its start and end price',
  score_definitions: 'how the hit rates are computed',
  round_id: 'identifier of the arena round (its start time)',
  pattern_type:
    'what the round shows: `aligned_correct`/`aligned_wrong` (brain and crowd agreed and were right/wrong), ' +
    '`brain_beat_crowd`, `crowd_beat_brain`, `split_both_wrong` (both called, neither with the outcome, not the ' +
    'same side), `brain_only_no_crowd` (the brain called; no human votes or a tie), `crowd_only_no_brain` (the ' +
    'crowd called; the brain had no call, NONE), `neither_called` (no brain call and no crowd call)',
  provenance: 'where the figures of this record come from (replayed, simulated voters, people)',
  human_votes: 'votes cast by people (not simulated voters)',
  privacy_note: 'what is and is not kept about voters',
  main_brain: 'figures about the main brain’s calls',
  calls_by_prediction: 'calls counted by side',
  latest_call: 'the most recent call; null when none',
  prediction:
    'the side the evidence leaned to for the round: `BULLISH` (up), `BEARISH` (down), `NEUTRAL` (flat), ' +
    '`NONE` (no data). A recorded reading, not a trading call',
  brain_prediction: 'the brain’s call for the round: `BULLISH`, `BEARISH`, `NEUTRAL` or `NONE` (no call)',
  crowd_consensus: 'the crowd’s majority: `BULLISH`, `BEARISH`, `NEUTRAL` or `NONE` (no votes or a tie)',
  reasoning_prediction:
    'the side the reasoning leans to: `BULLISH`, `BEARISH` or `NEUTRAL`; null without data',
  recorded_at: 'when the call was recorded (UTC, ISO 8601)',
  replayed: 'true when the record was produced by a backfill replay, not live',
  core_learning: 'the learning loop: lessons drawn from resolved rounds',
  lessons_total: 'lessons recorded',
  last_lesson_at: 'when the last lesson was recorded; null when none',
  arena: 'the hourly arena: schedule, current round and votes',
  schedule: 'how rounds are timed',
  round_minutes: 'length of one round, in minutes',
  alignment: 'how rounds align to the clock, e.g. "top of the hour, UTC"',
  current_round: 'the round open now',
  rounds_with_votes:
    'rounds with at least one vote from any source: people and, in simulated mode and backfill, the seeded ' +
    'synthetic crowd (simulated voters, not people). Not a measure of human participation: see ' +
    '`rounds_with_human_votes`. Votes of another data mode are left out (`vote_sources.other_mode_votes`)',
  votes_total:
    'votes from every source over all rounds, synthetic included (simulated files only); `vote_sources` splits ' +
    'them into human and synthetic. Votes of another data mode are left out (`vote_sources.other_mode_votes`)',
  api_ecosystem: 'facts about the API itself: resources, runs, storage',
  arena_resources: 'the arena endpoints with their cache hints',
  generator_runs: 'generator runs recorded, failed and the last ones',
  last_run_at: 'when the last run finished; null before the first',
  last_successful_run_at: 'when the last successful run finished; null before the first',
  store_schema_version: 'version of the local state store’s schema',
  brain_snapshot: 'the brain’s reading used for the round',
  bias: 'the side the evidence leans to: `bullish`, `bearish` or `neutral`; null without data. Not a trading call',
  human_layer: 'the crowd’s votes for the round',
  combined_intelligence: 'the brain’s call and the crowd’s consensus side by side',
  agreement: '`agree`, `disagree`, `no_crowd` (no human votes or a tie) or `no_brain_call`',
  at: 'when the event happened (UTC, ISO 8601)',
  detail: 'plain-language detail',
  change_since_round_start_percent: 'price change since the round opened, in percent; null without data',
  as_of: 'market time the figures describe (UTC, ISO 8601)',
  system_integrity: 'how the records were produced: runs, failures, simulated or replayed records',
  runs_recorded: 'generator runs on record',
  runs_failed:
    'generator runs that published nothing (failed, ended without a price, or never finished), as statistics ' +
    'generator_runs.failed counts them',
  synthetic_votes_present: 'true when some votes come from simulated voters, not people',
  replayed_records_present: 'true when some records come from a backfill replay',
  // Paid
  factor:
    'the risk factor: `volatility` or `breadth` (two of the risk score’s parts, as levels), or `leverage`, ' +
    '`liquidity` or `data_quality` (context read beside the score, not part of the score)',
  market: 'market figures of the asset',
  market_structure:
    'swing structure of recent candles: `higher_highs_higher_lows` (rising), `lower_highs_lower_lows` ' +
    '(falling), `range`; null without data',
  spread_bps: 'bid-ask spread in basis points (1 bp = 0.01 %); null without data',
  book_imbalance: 'order-book imbalance, -1 (all asks) to 1 (all bids); null without data',
  derivatives: 'derivatives figures of the asset; null without data',
  funding_rate_8h_pct: 'perpetual funding rate per 8 hours, in percent; null without data',
  open_interest_change_24h_pct: 'open interest change over 24 hours, in percent; null without data',
  open_interest_reading: OPEN_INTEREST_READING_RULE,
  reasoning: 'the reasoning for the asset; null without data',
  reason_points: 'plain-language points behind the reading',
  intelligence_layer: 'agreement, confidence and evidence across every section, per asset',
  text: 'plain-language text',
  breadth: 'how many assets lean each way',
  overall: `confidence across the market, 0-100: ${MEAN_OVER_ALL_ASSETS_RULE}`,
  by_asset: 'value per asset symbol',
  meaning: 'what the figure means and does not mean',
  title: 'title for people',
  headline: 'one-sentence headline for people; not advice',
  sections: 'report sections in reading order',
  id: 'stable identifier',
  heading: 'section heading',
  paragraphs: 'paragraphs of plain text',
  asset_table: 'a table of the assets for people',
  columns: 'the table’s columns in order',
  key: 'field name',
  label: 'label for people',
  rows: 'one row per asset',
  charts: 'chart series, ready to draw',
  unit: 'unit of the values, e.g. "%" or "USD"',
  series: 'data series of the chart',
  points: 'the points of the series',
  x: 'the x value (label or UTC time)',
  y: 'the y value in the chart’s unit; null for a gap',
  disclaimers: 'educational notices for the report',
  // x402
  ecosystem: 'payment ecosystem, e.g. "Algorand"',
  x402Version: 'x402 protocol version: 2',
  resource: 'which free resource the history rows come from (its folder under /api/history/)',
  url: 'absolute URL',
  mimeType: 'media type of the resource once paid',
  serviceName: 'name of the selling service',
  tags: 'keywords describing the resource',
  accepts: 'payment options; pay exactly one',
  scheme: '`exact`: pay exactly `amount`',
  network: 'CAIP-2 network id (Algorand mainnet: "algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=")',
  payTo: 'Algorand address that receives the payment',
  maxTimeoutSeconds: 'seconds the signed payment stays valid for settlement',
  what_this_is: 'what the paid resource is',
  what_this_is_not: 'what the paid resource is not (e.g. advice, a signal)',
  related_pages: 'pages with the payment terms and docs',
  retry_after_seconds: 'seconds to wait before retrying (503); null otherwise',
};

/**
 * The meaning of `field` inside `parent` (the parent property's name, or "" at the top level), whose JSON type is
 * `type` (null aside).
 */
export const meaningOf = (parent: string, field: string, type?: string): string | undefined =>
  FIELD_MEANINGS_IN[`${parent}.${field}`] ??
  (type === undefined ? undefined : FIELD_MEANINGS_IN[`${field}:${type}`]) ??
  FIELD_MEANINGS[field];

/**
 * Plain words for enum values, appended to a field's description for each value it does not already name.
 * Readings describe evidence; none of them is an instruction.
 */
export const VALUE_MEANINGS: Readonly<Record<string, string>> = {
  BULLISH: 'leans up',
  BEARISH: 'leans down',
  NEUTRAL: 'no side',
  NONE: 'no call or no data',
  bullish: 'the evidence leans up',
  bearish: 'the evidence leans down',
  neutral: 'the evidence leans neither way',
  mixed: 'the evidence points both ways',
  balanced: 'neither side dominates',
  unavailable: 'no data',
  active: 'enough resolved rounds to report',
  no_history: 'no resolved round yet',
  insufficient_sample: 'too few resolved rounds to read anything into',
  verified: 'observed live and whole',
  partial: 'some figures are missing',
  order_book: 'spread measured from the order book',
  ticker: 'spread taken from the best bid and ask of the ticker',
  low: 'low',
  moderate: 'moderate',
  elevated: 'above usual',
  high: 'high',
  extreme_high: 'at the top of its history',
  extreme_low: 'at the bottom of its history',
  flat: 'little change',
  range: 'no rising or falling swing structure',
  higher_highs_higher_lows: 'rising swings',
  lower_highs_lower_lows: 'falling swings',
  crowded_longs: 'longs pay a lot to hold their positions',
  crowded_shorts: 'shorts pay a lot to hold their positions',
  new_longs: 'open interest up with price up',
  new_shorts: 'open interest up with price down',
  short_covering: 'open interest down with price up',
  deleveraging: 'open interest down with price down',
  new_positions: 'open interest up with price flat',
  closing_positions: 'open interest down with price flat',
  bar: 'bar chart',
  'stacked-bar': 'stacked bar chart',
  line: 'line chart',
  'market-regime': 'the market regime endpoint',
  'main-brain': 'the main brain endpoint',
  'liquidity-lite': 'the liquidity lite endpoint',
  derivatives: 'the derivatives endpoint',
  'human-consensus': 'the human consensus endpoint',
  statistics: 'the statistics endpoint',
  number: 'a numeric column',
  string: 'a text column',
};

/** "Values: `a` (meaning); `b` (meaning)." for the values a description does not name yet; "" when none. */
export function valuesSentence(description: string, values: readonly unknown[]): string {
  const missing = values.filter((v) => typeof v === 'string' && !description.includes(v)) as string[];
  const explained = missing.filter((v) => VALUE_MEANINGS[v] !== undefined);
  if (explained.length === 0) return '';
  return ` Values: ${explained.map((v) => `\`${v}\` (${VALUE_MEANINGS[v]})`).join('; ')}.`;
}
