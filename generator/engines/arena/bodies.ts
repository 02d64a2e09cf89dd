// The four arena response bodies, built purely from a read model of the store and the run's clock.
import type {
  HumanConsensusResponse,
  SharedIntelligenceResponse,
  SimulatedCrowd,
  VoteSources,
} from '../../../schemas/arena.ts';
import {
  EDUCATIONAL_NOTICE,
  PROJECT,
  TRACKED_ASSETS,
  type ArenaReading,
  type DataMode,
} from '../../../schemas/common.ts';
import { FREE_CATALOG } from '../../../schemas/catalog.ts';
import type { StatisticsResponse } from '../../../schemas/statistics.ts';
import type { TeacherLessonsResponse } from '../../../schemas/teacher-lessons.ts';
import { iso, isoOrNull } from '../clock.ts';
import { crowdCallStatus, humanConsensus, NO_VOTES } from './consensus.ts';
import {
  currentLessonLabels,
  SMALL_CROWD_RULE,
  SMALL_CROWD_VOTES,
  smallCrowd,
  votesText,
} from './lessons.ts';
import {
  COMBINED_TIE_RULE,
  REFERENCE_PRICE_RULE,
  RULES_URL,
  TIE_RULE,
  VOTE_RULE,
  votesCloseAt,
} from './rules.ts';
import { combinedCallStatus, leanOf, publicPerformanceFrom, teacherBrain } from './metrics.ts';
import { ENTRY_WINDOW_MINUTES, ROUND_MINUTES, roundInfo, SCHEDULE_ALIGNMENT } from './rounds.ts';
import {
  averageProbs,
  brainProbs,
  crowdProbs,
  NEUTRAL_BAND,
  OUTCOME_RULE,
  round4,
  type ClassProbs,
} from './scoring.ts';
import {
  biasOfPrediction,
  predictionOfBias,
  type ArenaView,
  type VotesLeftOut,
  type VoteTally,
} from './types.ts';

export const LATEST_LESSONS = 20;
const ARENA_RESOURCES = [
  FREE_CATALOG.humanConsensus,
  FREE_CATALOG.teacherLessons,
  FREE_CATALOG.statistics,
  FREE_CATALOG.sharedIntelligence,
];

export interface ArenaBodies {
  humanConsensus: HumanConsensusResponse;
  teacherLessons: TeacherLessonsResponse;
  statistics: StatisticsResponse;
  sharedIntelligence: SharedIntelligenceResponse;
}

/** Which rounds every figure built from rounds covers; the same words in every arena body. */
const MODE_SCOPE_NOTE =
  'Rounds, calls, outcomes and lessons count only when the brain call was recorded in the data mode of this run ' +
  '(mode; provenance.data_mode per lesson): a simulated round is never shown as a live or replay record. Rounds ' +
  'recorded before the store kept data modes, and whose mode the run log cannot tell, count as simulated. ' +
  'teacher_brain.metrics.other_mode_rounds counts the resolved rounds of the window left out.';

const leftOutNote = (v: ArenaView): string => {
  const modes = v.leftOut.modes.map((m) => m ?? 'unknown').join(', ');
  return (
    `Rounds recorded in another data mode are in the store (${modes}): ${v.leftOut.rounds} resolved in the ` +
    `window. They are left out of every figure of this ${v.mode} file.`
  );
};

/** How the run counts read: the file's own run, and the runs that never said how they ended. */
const runsNote = (unfinished: number): string =>
  'api_ecosystem.generator_runs counts this run as ok (this file is served only once its run published all its ' +
  `files); generator_runs.failed includes ${unfinished} ${unfinished === 1 ? 'run' : 'runs'} that never finished ` +
  `(stopped, e.g. killed, before recording whether ${unfinished === 1 ? 'its' : 'their'} files were published; ` +
  'counted by the next run).';

/** The ok runs an older emi logged as ok once their arena step ran, whether or not their files were published. */
const okBeforeOutcomesNote = (n: number): string =>
  `${n} of the ok generator ${n === 1 ? 'run was' : 'runs were'} logged before this store recorded whether a run's ` +
  'files were published (store schema 3): an older emi logged a run ok once its arena step ran, so a run stopped ' +
  'before its files switched in may be among them.';

/** Which votes the counts of a file take (ownVoteSql in generator/state/repo.ts), as MODE_SCOPE_NOTE for rounds. */
const VOTE_SCOPE_NOTE =
  "Votes count with their round, in the data mode of the round's brain call (a person's vote in a round no run " +
  'has called yet counts in every mode); synthetic votes, the seeded crowd of the simulated market, count in ' +
  'simulated mode only. arena.vote_sources.other_mode_votes counts the votes left out, and its synthetic_label ' +
  'names their modes.';

const NO_VOTES_LEFT_OUT: VotesLeftOut = { votes: 0, modes: [] };

/** Why votes are left out of the counts over all rounds (statistics), as VOTE_SCOPE_NOTE says. */
const VOTES_LEFT_OUT_RULE =
  "synthetic votes count in simulated mode only, and a vote counts with the data mode of its round's brain call";

/** Why votes are left out of the open round: people's votes there are all shown, whoever recorded its call. */
const ROUND_VOTES_LEFT_OUT_RULE =
  "synthetic votes count in simulated mode only (people's votes in the open round are all shown)";

/** One sentence naming the votes of other modes and why they are left out, or '' when there are none. */
const votesLeftOutSentence = (left: VotesLeftOut, mode: DataMode, rule = VOTES_LEFT_OUT_RULE): string =>
  left.votes === 0
    ? ''
    : `${votesText(left.votes)} of another data mode (${left.modes.map((m) => m ?? 'unknown').join(', ')}) ` +
      `${left.votes === 1 ? 'is' : 'are'} left out of the counts of this ${mode} file (other_mode_votes): ${rule}.`;

const PRIVACY_NOTE =
  'Voter ids are stored only as salted HMAC-SHA256 hashes and are never published; every resource shows counts only.';

export const voteSources = (
  t: VoteTally,
  mode: DataMode,
  leftOut: VotesLeftOut = NO_VOTES_LEFT_OUT,
  rule = VOTES_LEFT_OUT_RULE,
): VoteSources => {
  const total = t.human + t.synthetic;
  const counted =
    total === 0
      ? `No votes ${leftOut.votes === 0 ? '' : 'counted '}yet.`
      : `${t.human} human and ${t.synthetic} synthetic votes` +
        (t.replayed > 0 ? ` (${t.replayed} from a backfill replay)` : '') +
        (t.synthetic > 0 ? '. Synthetic votes come from the seeded simulated crowd, not from people.' : '.');
  const label = leftOut.votes === 0 ? counted : `${counted} ${votesLeftOutSentence(leftOut, mode, rule)}`;
  return {
    human_votes: t.human,
    synthetic_votes: t.synthetic,
    replayed_votes: t.replayed,
    other_mode_votes: leftOut.votes,
    synthetic_label: label,
  };
};

/**
 * The open round's votes as a run of `mode` shows them: people's always, the synthetic crowd's in simulated mode
 * only (it is part of the simulated market; outside it, it is counted apart as votes of another mode).
 */
export const roundVotesShown = (t: VoteTally, mode: DataMode): { tally: VoteTally; leftOut: VotesLeftOut } =>
  mode === 'simulated' || t.synthetic === 0
    ? { tally: t, leftOut: NO_VOTES_LEFT_OUT }
    : {
        // Replayed votes are the backfill's synthetic crowd, so none is left once it is taken out.
        tally: { ...t, simulated: NO_VOTES, synthetic: 0, replayed: 0 },
        leftOut: { votes: t.synthetic, modes: ['simulated'] },
      };

/** The synthetic crowd beside the human one; null when it cast no vote in the round (always outside simulated mode). */
export const simulatedCrowd = (t: VoteTally): SimulatedCrowd =>
  t.synthetic === 0
    ? null
    : {
        label: 'simulated',
        consensus: humanConsensus(t.simulated),
        note:
          'Votes of the seeded simulated crowd that fills the arena in simulated mode. They are not people and are ' +
          'never counted in human_consensus.',
      };

export const humanStatus = (t: VoteTally): string => {
  const status = crowdCallStatus(t.counts);
  if (status === 'no_votes') return 'No human votes yet in this round.';
  const votes = votesText(t.human, 'human ');
  if (status === 'tie') return `${votes}, tied at the top: the crowd makes no call.`;
  if (smallCrowd(t.human)) {
    return `${votes}: a small sample (fewer than ${SMALL_CROWD_VOTES} votes), weak evidence of what the crowd thinks.`;
  }
  return `${votes}.`;
};

const probsObject = (p: ClassProbs) => ({
  bearish: round4(p[0]),
  neutral: round4(p[1]),
  bullish: round4(p[2]),
});

const brainSnapshot = (v: ArenaView): SharedIntelligenceResponse['brain_snapshot'] => {
  const asset = v.round.asset;
  if (v.recordedCall) {
    const c = v.recordedCall;
    return {
      asset,
      prediction: c.prediction,
      bias: biasOfPrediction(c.prediction),
      confidence: c.confidence,
      price_at_call: c.startPrice,
      recorded_at: iso(c.recordedAt),
      source: 'recorded_for_round',
    };
  }
  if (v.runCall) {
    const c = v.runCall;
    return {
      asset,
      prediction: predictionOfBias(c.bias),
      bias: c.bias,
      confidence: c.confidence,
      price_at_call: c.price,
      recorded_at: null,
      source: 'latest_run',
    };
  }
  return {
    asset,
    prediction: 'NONE',
    bias: null,
    confidence: null,
    price_at_call: null,
    recorded_at: null,
    source: 'unavailable',
  };
};

const agreementOf = (brain: ArenaReading, crowd: ArenaReading) =>
  brain === 'NONE' ? 'no_brain_call' : crowd === 'NONE' ? 'no_crowd' : brain === crowd ? 'agree' : 'disagree';

/** What the four arena bodies share: the open round, the votes shown for it, the track record and the times. */
interface BodyContext {
  v: ArenaView;
  info: ReturnType<typeof roundInfo>;
  shown: ReturnType<typeof roundVotesShown>;
  consensus: ReturnType<typeof humanConsensus>;
  sources: ReturnType<typeof voteSources>;
  scope: { mode: ArenaView['mode']; leftOut: ArenaView['leftOut'] };
  teacher: ReturnType<typeof teacherBrain>;
  envelope: { success: true; project: typeof PROJECT; mode: ArenaView['mode'] };
  updatedUtc: string;
  nextUpdateDue: string;
}

function humanConsensusBody(c: BodyContext): HumanConsensusResponse {
  const { v, shown } = c;
  return {
    ...c.envelope,
    type: 'human_consensus',
    asset: v.round.asset,
    round: c.info,
    human_consensus: c.consensus,
    human_status: humanStatus(shown.tally),
    simulated_crowd: simulatedCrowd(shown.tally),
    vote_sources: c.sources,
    rules_url: RULES_URL,
    developer_note:
      `Consensus of the human votes that count in the open round. ${SCHEDULE_ALIGNMENT} ${VOTE_RULE} ${TIE_RULE} ` +
      'Percentages use fair largest remainders (equal counts, equal shares). disagreement_score is normalised ' +
      'entropy (0 unanimous, 1 evenly split). Consensus can be sparse and carries no guarantee of correctness. ' +
      `${SMALL_CROWD_RULE} Synthetic votes of the simulated market appear only under simulated_crowd, and only in ` +
      'simulated mode: simulated_crowd is null outside simulated mode, where vote_sources.other_mode_votes counts ' +
      `them apart. Rules: ${RULES_URL}`,
    educational_notice: EDUCATIONAL_NOTICE,
    updated_utc: c.updatedUtc,
    next_update_due: c.nextUpdateDue,
  };
}

function teacherLessonsBody(c: BodyContext): TeacherLessonsResponse {
  return {
    ...c.envelope,
    type: 'teacher_lessons',
    teacher_brain: c.teacher,
    // Stored lessons keep the labels they were written with; published, they follow the current rule.
    latest_lessons: c.v.lessons.slice(0, LATEST_LESSONS).map(currentLessonLabels),
    rules_url: RULES_URL,
    developer_note:
      'One lesson per resolved arena round: the brain call recorded at the round start and the crowd consensus ' +
      'scored against the price move over the round. Definitions are in teacher_brain.metrics (outcome_rule, ' +
      'score_definitions). Lessons with provenance.replayed come from a backfill replay of the simulated market. ' +
      `${MODE_SCOPE_NOTE} ${SMALL_CROWD_RULE} Rules: ${RULES_URL} Historical learning context, not a live signal.`,
    privacy_note: PRIVACY_NOTE,
    educational_notice: EDUCATIONAL_NOTICE,
    updated_utc: c.updatedUtc,
    next_update_due: c.nextUpdateDue,
  };
}

function statisticsBody(c: BodyContext): StatisticsResponse {
  const { v, scope, teacher } = c;
  const t = v.totals;
  return {
    ...c.envelope,
    type: 'statistics',
    main_brain: {
      public_performance: publicPerformanceFrom(v.window, scope),
      recorded_calls: t.recordedCalls,
      replayed_calls: t.replayedCalls,
      calls_by_prediction: t.callsByPrediction,
      latest_call: t.latestCall && {
        round_id: t.latestCall.roundId,
        asset: t.latestCall.asset,
        prediction: t.latestCall.prediction,
        confidence: t.latestCall.confidence,
        recorded_at: iso(t.latestCall.recordedAt),
        replayed: t.latestCall.replayed,
      },
    },
    core_learning: {
      lessons_total: t.lessons,
      lessons_replayed: t.lessonsReplayed,
      last_lesson_at: isoOrNull(t.lastLessonAt),
      outcome_distribution: t.outcomes,
      voided_rounds: t.voided,
      outcome_rule: OUTCOME_RULE,
    },
    arena: {
      schedule: {
        round_minutes: ROUND_MINUTES,
        alignment: SCHEDULE_ALIGNMENT,
        rotation: [...TRACKED_ASSETS],
      },
      current_round: c.info,
      rounds_with_votes: t.roundsWithVotes,
      rounds_with_human_votes: t.roundsWithHumanVotes,
      votes_total: t.votes.human + t.votes.synthetic,
      vote_sources: voteSources(t.votes, v.mode, t.votesLeftOut),
      distinct_human_voters: t.distinctHumanVoters,
    },
    teacher_brain: teacher,
    api_ecosystem: {
      arena_resources: ARENA_RESOURCES.map((r) => ({ path: r.path, cache_seconds: r.cacheSeconds })),
      generator_runs: {
        total: v.runs.total,
        ok: v.runs.ok,
        failed: v.runs.failed,
        last_run_at: isoOrNull(v.runs.lastRunAt),
        last_successful_run_at: isoOrNull(v.runs.lastOkAt),
      },
      store_schema_version: v.schemaVersion,
    },
    rules_url: RULES_URL,
    developer_note:
      'Counts and track records read from the arena store when this file was generated; nothing here is estimated. ' +
      `${runsNote(v.runs.unfinished)} ` +
      (v.runs.okBeforeOutcomes > 0 ? `${okBeforeOutcomesNote(v.runs.okBeforeOutcomes)} ` : '') +
      'Every rate carries its n and is withheld below teacher_brain.metrics.min_sample rounds. Replayed (backfill) ' +
      'and synthetic records are counted separately: arena.rounds_with_votes and arena.votes_total include the ' +
      'synthetic crowd of simulated mode, arena.rounds_with_human_votes and arena.vote_sources.human_votes count ' +
      `people only. ${MODE_SCOPE_NOTE} ${VOTE_SCOPE_NOTE} A tied combined forecast is no call and stays out of ` +
      `the combined hit rate (teacher_brain.metrics.combined_no_call_rounds). Rules: ${RULES_URL} Not a market ` +
      'signal.',
    educational_notice: EDUCATIONAL_NOTICE,
    updated_utc: c.updatedUtc,
    next_update_due: c.nextUpdateDue,
  };
}

function sharedIntelligenceBody(c: BodyContext): SharedIntelligenceResponse {
  const { v, shown, consensus, teacher } = c;
  const t = v.totals;
  const snapshot = brainSnapshot(v);
  const pBrain = brainProbs(snapshot.prediction, snapshot.confidence);
  const pCrowd = crowdProbs(shown.tally.counts);
  const pCombined = averageProbs(pBrain, pCrowd);
  const startPrice = v.recordedCall?.startPrice ?? null;
  const change =
    startPrice !== null && startPrice > 0 && v.currentPrice !== null
      ? round4((v.currentPrice / startPrice - 1) * 100)
      : null;
  const notes = [
    'Each round resolves exactly once (one outcome row per round, written inside a transaction).',
    ...(t.votes.synthetic > 0
      ? ['Synthetic votes are present: they come from the seeded simulated crowd.']
      : []),
    ...(t.replayedCalls > 0
      ? ['Replayed rounds are present: they come from a backfill of the simulated market.']
      : []),
    ...(v.leftOut.rounds > 0 ? [leftOutNote(v)] : []),
    ...(t.votesLeftOut.votes > 0 ? [votesLeftOutSentence(t.votesLeftOut, v.mode)] : []),
    ...(v.runs.okBeforeOutcomes > 0 ? [okBeforeOutcomesNote(v.runs.okBeforeOutcomes)] : []),
    ...(v.runs.unfinished > 0
      ? [
          `${v.runs.unfinished} generator ${v.runs.unfinished === 1 ? 'run' : 'runs'} never finished (stopped ` +
            `before recording whether ${v.runs.unfinished === 1 ? 'its' : 'their'} files were published): ` +
            'counted in system_integrity.runs_failed.',
        ]
      : []),
  ];
  return {
    ...c.envelope,
    type: 'shared_intelligence',
    asset: v.round.asset,
    round: {
      ...c.info,
      status: 'open',
      votes_close_at: iso(votesCloseAt(v.round)),
      brain_call_recorded: v.recordedCall !== null,
      entry_window_minutes: ENTRY_WINDOW_MINUTES,
      resolution_rule: `${OUTCOME_RULE} ${REFERENCE_PRICE_RULE}`,
    },
    my_prediction: null,
    brain_snapshot: snapshot,
    human_layer: consensus,
    simulated_crowd: simulatedCrowd(shown.tally),
    vote_sources: c.sources,
    rules_url: RULES_URL,
    combined_intelligence: {
      brain_prediction: snapshot.prediction,
      crowd_consensus: consensus.consensus,
      agreement: agreementOf(snapshot.prediction, consensus.consensus),
      brain_probabilities: probsObject(pBrain),
      crowd_probabilities: probsObject(pCrowd),
      combined_probabilities: probsObject(pCombined),
      combined_lean: leanOf(pCombined),
      combined_call_status: combinedCallStatus(pCombined),
      note:
        'An equal-weight blend of the brain call and the smoothed crowd shares, shown for learning; it is scored ' +
        `after the round as shared_intelligence_score. ${COMBINED_TIE_RULE} Not a recommendation.`,
    },
    teacher_brain: teacher,
    events: {
      recent: v.events,
      note: 'Recent arena records from the store, newest first. No push delivery: read this file again.',
    },
    price: {
      asset: v.round.asset,
      current: v.currentPrice,
      at_round_start: startPrice,
      change_since_round_start_percent: change,
      neutral_band_percent: NEUTRAL_BAND * 100,
      data_mode: v.mode,
      as_of: iso(v.clock.asOf),
    },
    system_integrity: {
      store_schema_version: v.schemaVersion,
      runs_recorded: v.runs.total,
      runs_failed: v.runs.failed,
      last_successful_run_at: isoOrNull(v.runs.lastOkAt),
      single_writer_lock: true,
      synthetic_votes_present: t.votes.synthetic > 0,
      replayed_records_present: t.replayedCalls > 0,
      notes,
    },
    educational_notice: EDUCATIONAL_NOTICE,
    updated_utc: c.updatedUtc,
    next_update_due: c.nextUpdateDue,
  };
}

export const buildArenaBodies = (v: ArenaView): ArenaBodies => {
  const shown = roundVotesShown(v.roundTally, v.mode);
  const scope = { mode: v.mode, leftOut: v.leftOut };
  const c: BodyContext = {
    v,
    info: roundInfo(v.round, v.clock.asOf),
    shown,
    consensus: humanConsensus(shown.tally.counts),
    sources: voteSources(shown.tally, v.mode, shown.leftOut, ROUND_VOTES_LEFT_OUT_RULE),
    scope,
    teacher: teacherBrain(v.window, v.voidedInWindow, scope),
    envelope: { success: true, project: PROJECT, mode: v.mode },
    updatedUtc: iso(v.clock.generatedAt),
    nextUpdateDue: iso(v.clock.nextUpdateDue),
  };
  return {
    humanConsensus: humanConsensusBody(c),
    teacherLessons: teacherLessonsBody(c),
    statistics: statisticsBody(c),
    sharedIntelligence: sharedIntelligenceBody(c),
  };
};
