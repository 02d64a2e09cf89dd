// One lesson per resolved round: brain and crowd scored against what the price actually did.
import type { ArenaPrediction, ArenaReading, TrackedAsset } from '../../../schemas/common.ts';
import type { TeacherLesson } from '../../../schemas/teacher-lessons.ts';
import { iso } from '../clock.ts';
import { consensusOf, crowdCallStatus, type VoteCounts } from './consensus.ts';
import {
  averageProbs,
  brainProbs,
  crowdProbs,
  NEUTRAL_BAND,
  rankedProbabilityScore,
  returnPercentText,
  round4,
} from './scoring.ts';

export interface ResolvedRound {
  roundId: string;
  asset: TrackedAsset;
  brainCall: ArenaReading;
  brainConfidence: number | null;
  counts: VoteCounts; // human votes that counted in the round; synthetic votes never enter the crowd
  humanVotes: number;
  syntheticVotes: number;
  outcome: ArenaPrediction;
  returnFraction: number;
  resolvedAt: number; // ms
  replayed: boolean;
}

/**
 * A crowd consensus from fewer human votes than this is a small sample: it is flagged where it is read (human_status
 * of the open round, the lesson summary) and still counted and scored like any other (the most votes wins).
 */
export const SMALL_CROWD_VOTES = 10;

export const SMALL_CROWD_RULE =
  `A consensus of fewer than ${SMALL_CROWD_VOTES} human votes is a small sample, weak evidence of what the crowd ` +
  'thinks: human_status and the lesson summary say so. It is still counted and scored like any other consensus ' +
  '(the most votes wins).';

/** Whether a consensus that made a call rests on a small sample (see SMALL_CROWD_VOTES). */
export const smallCrowd = (votes: number): boolean => votes < SMALL_CROWD_VOTES;

/** "1 vote", "2 votes". */
export const votesText = (n: number, kind = ''): string => `${n} ${kind}${n === 1 ? 'vote' : 'votes'}`;

type Pattern = TeacherLesson['pattern_type'];
type Labels = Pick<TeacherLesson, 'pattern_type' | 'agreement'>;

/**
 * A lesson's `pattern_type` and `agreement` from the two calls and the outcome, as their descriptions say: a side
 * that made no call (`NONE`: the brain without a reading, a crowd without votes or tied) is compared with nothing,
 * so it neither agrees nor is beaten, and the verdict in the summary ("made no call") names the same pattern.
 */
const labelsOf = (brain: ArenaReading, crowd: ArenaReading, outcome: ArenaPrediction): Labels => {
  const brainCalled = brain !== 'NONE';
  const crowdCalled = crowd !== 'NONE';
  const agree = brainCalled && crowdCalled && brain === crowd;
  const pattern = ((): Pattern => {
    if (!brainCalled) return crowdCalled ? 'crowd_only_no_brain' : 'neither_called';
    if (!crowdCalled) return 'brain_only_no_crowd';
    const brainCorrect = brain === outcome;
    if (agree) return brainCorrect ? 'aligned_correct' : 'aligned_wrong';
    if (brainCorrect) return 'brain_beat_crowd';
    return crowd === outcome ? 'crowd_beat_brain' : 'split_both_wrong';
  })();
  return { pattern_type: pattern, agreement: agree ? 1 : 0 };
};

/**
 * A stored lesson with the labels of the current rule: lessons are kept as written, and those written before a
 * brain without a call had patterns of its own (it was `split_both_wrong` or `crowd_beat_brain`) are published right.
 */
export const currentLessonLabels = (lesson: TeacherLesson): TeacherLesson => ({
  ...lesson,
  ...labelsOf(lesson.brain_prediction, lesson.human_consensus, lesson.actual_outcome),
});

export const buildLesson = (r: ResolvedRound): TeacherLesson => {
  const crowd = consensusOf(r.counts);
  const votes = r.counts.bullish + r.counts.bearish + r.counts.neutral;
  const brainCorrect = r.brainCall === r.outcome;
  const crowdCorrect = crowd === r.outcome;
  const labels = labelsOf(r.brainCall, crowd, r.outcome);
  const pBrain = brainProbs(r.brainCall, r.brainConfidence);
  const pCrowd = crowdProbs(r.counts);
  const status = crowdCallStatus(r.counts);
  const synthetic = r.syntheticVotes > 0 ? ` (${votesText(r.syntheticVotes, 'synthetic ')} kept apart)` : '';
  const sample =
    status === 'called' && smallCrowd(votes) ? `, a small sample: fewer than ${SMALL_CROWD_VOTES}` : '';
  const crowdText =
    status === 'no_votes'
      ? `no human votes${synthetic}`
      : `human crowd ${status === 'tie' ? 'tied: no call' : crowd} (${votesText(votes)}${sample})${synthetic}`;
  const crowdVerdict =
    status === 'no_votes' ? 'absent' : status === 'tie' ? 'made no call' : crowdCorrect ? 'right' : 'wrong';
  // No call is not a wrong call: brain hit rates leave such rounds out, and the text must not call them misses.
  const brainVerdict = r.brainCall === 'NONE' ? 'made no call' : brainCorrect ? 'right' : 'wrong';
  const verdict = `Brain ${brainVerdict}, crowd ${crowdVerdict}.`;
  return {
    lesson_id: `L-${r.roundId}`,
    round_id: r.roundId,
    asset: r.asset,
    brain_prediction: r.brainCall,
    human_consensus: crowd,
    actual_outcome: r.outcome,
    pattern_type: labels.pattern_type,
    summary:
      `${r.replayed ? '[replayed] ' : ''}${r.asset} round ${r.roundId}: brain called ${r.brainCall}, ${crowdText}; ` +
      `price moved ${returnPercentText(r.returnFraction, r.outcome)} (neutral band ±${NEUTRAL_BAND * 100}%) so the outcome was ` +
      `${r.outcome}. ${verdict}`,
    created_at: iso(r.resolvedAt),
    brain_correct: brainCorrect ? 1 : 0,
    crowd_correct: crowdCorrect ? 1 : 0,
    agreement: labels.agreement,
    shared_intelligence_score: round4(1 - rankedProbabilityScore(averageProbs(pBrain, pCrowd), r.outcome)),
    learning_score: round4(
      rankedProbabilityScore(pBrain, r.outcome) - rankedProbabilityScore(pCrowd, r.outcome),
    ),
    provenance: { replayed: r.replayed, human_votes: r.humanVotes, synthetic_votes: r.syntheticVotes },
  };
};
