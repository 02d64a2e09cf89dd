// One arena step of a generator run: record the open round's brain call, let the synthetic crowd vote
// (simulated mode), resolve ended rounds into outcomes and lessons, and build the four validated bodies.
// Everything happens in one IMMEDIATE transaction: a failure anywhere leaves the store as it was, and the next
// run redoes the work (the bodies are always rebuilt from the store, so nothing is lost between runs).
import type { Database } from 'better-sqlite3';
import { HumanConsensusResponse, SharedIntelligenceResponse } from '../../schemas/arena.ts';
import type { DataMode } from '../../schemas/common.ts';
import { StatisticsResponse } from '../../schemas/statistics.ts';
import { TeacherLessonsResponse } from '../../schemas/teacher-lessons.ts';
import { buildArenaBodies, type ArenaBodies } from '../engines/arena/bodies.ts';
import { ownsRound } from '../engines/arena/data-mode.ts';
import {
  ENTRY_WINDOW_MINUTES,
  RESOLVE_WINDOW_MINUTES,
  roundAt,
  roundByIndex,
  type Round,
} from '../engines/arena/rounds.ts';
import { votesCloseAt } from '../engines/arena/rules.ts';
import type { BrainCall, RecordedCall } from '../engines/arena/types.ts';
import { iso, type RunClock } from '../engines/clock.ts';
import { brainCallFor, fillStartPrice, logRun, steppedRunBetween, unresolvedEndedRounds } from './repo.ts';
import { activeRun, newestSteppedRunAt, runDetail } from './run-log.ts';
import { addSyntheticCrowd, recordRoundCall, settleRound } from './settle.ts';
import { voterSalt, type ArenaStore } from './store.ts';
import { readArenaView } from './view.ts';

export interface ArenaStepInput {
  store: ArenaStore;
  /** Market time of the run (ms); normally clock.asOf. */
  asOf: number;
  mode: DataMode;
  /** Seed of the synthetic crowd; used in simulated mode only (null counts as 0). */
  seed: number | null;
  brainCalls: BrainCall[];
  /** Price per asset seen by this run. */
  prices: Record<string, number | null>;
  /**
   * Per asset, the venue's own time of its price in `prices` (a ticker's time, a candle's close: assetPrice). A
   * price from before a round's start is not its reference price, one from before its end not its end price: the
   * round waits for a later run within the entry or resolve window, and is voided when none brings one. Omitted:
   * every price counts as one of the run's as-of (a caller whose prices are all quotes of that time).
   */
  priceTimes?: Record<string, number | null>;
  /**
   * Per asset, the first candle open at or after the open round's start (see REFERENCE_PRICE_RULE); the
   * round's reference price. Missing: the run's own price stands in when it is from at or after the start.
   */
  referencePrices?: Record<string, number | null>;
  clock: RunClock;
  /**
   * Set when the run could not read a vote store that is set up (endpoint-votes.ts). An ended round whose votes may
   * be waiting there (it closed to votes after `readThrough`, the time through which the store was last read whole;
   * null: never read) is not resolved by this run: it waits, within its resolve window, for a run that reads them,
   * and past the window it is voided (VOTES_NOT_READ), never scored without them.
   */
  unreadVotes?: { readThrough: number | null };
  /** Written to the run log; default the owner of the run lock held on the store (withRunLock). */
  owner?: string;
  /** Where the step says that it recorded nothing (a clock behind the newest run); default stderr. */
  notice?: (line: string) => void;
  /** Test seam: runs inside the transaction after every write, before the bodies are built and committed. */
  onBeforeCommit?: () => void;
}

const MINUTE_MS = 60_000;

export const NO_START_PRICE = `no price from at or after the round start came within ${ENTRY_WINDOW_MINUTES} minutes of it`;
export const NO_END_PRICE = `no price from at or after the round end came within ${RESOLVE_WINDOW_MINUTES} minutes of it`;
export const VOTES_NOT_READ =
  `its votes could not be read within ${RESOLVE_WINDOW_MINUTES} minutes of its end (the vote store was ` +
  'unreachable or unreadable): not scored without them';

/** Rounds held for votes a run could not read: the reason a round voided past its resolve window is given. */
const AWAITS_VOTES_KEY = 'round_awaits_votes:';

const awaitsVotes = (db: Database, roundId: string): boolean =>
  db.prepare('SELECT 1 FROM meta WHERE key = ?').get(AWAITS_VOTES_KEY + roundId) !== undefined;

const setAwaitsVotes = (db: Database, roundId: string, awaits: boolean, at: number): void => {
  if (awaits) {
    db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(
      AWAITS_VOTES_KEY + roundId,
      String(at),
    );
  } else {
    db.prepare('DELETE FROM meta WHERE key = ?').run(AWAITS_VOTES_KEY + roundId);
  }
};

/**
 * Why this run may not score an ended round, or null. A round is scored only with prices of the mode its call was
 * recorded in: a simulated start price against a live end price would be neither record.
 */
const voidReasonFor = (
  db: Database,
  call: RecordedCall,
  mode: DataMode,
  end: number,
  asOf: number,
  awaitedVotes: boolean,
): string | null => {
  if (!ownsRound(call.dataMode, mode)) {
    const recorded = call.dataMode ?? 'an unknown (recorded before the store kept data modes)';
    return `its brain call was recorded in ${recorded} mode and the first run after the round end ran in ${mode} mode`;
  }
  // Compared in ms, as the entry window is: 15 min 30 s late is "more than 15 minutes late" (voided).
  const lateMs = asOf - end;
  if (lateMs > RESOLVE_WINDOW_MINUTES * MINUTE_MS) {
    // The last run of the window held it for votes it could not read.
    if (awaitedVotes) return VOTES_NOT_READ;
    // Runs came in time but none had a price from at or after the end: they waited, and the window is over.
    return steppedRunBetween(db, end, end + RESOLVE_WINDOW_MINUTES * MINUTE_MS)
      ? NO_END_PRICE
      : `the first run after the round end came ${Math.floor(lateMs / 1000)} s late`;
  }
  if (call.startPrice === null || call.startPrice <= 0) return NO_START_PRICE;
  return null;
};

const validated = (b: ArenaBodies): ArenaBodies => ({
  humanConsensus: HumanConsensusResponse.parse(b.humanConsensus),
  teacherLessons: TeacherLessonsResponse.parse(b.teacherLessons),
  statistics: StatisticsResponse.parse(b.statistics),
  sharedIntelligence: SharedIntelligenceResponse.parse(b.sharedIntelligence),
});

export const runArenaStep = (input: ArenaStepInput): ArenaBodies => {
  const { store, asOf, mode } = input;
  const db = store.db;
  const simulated = mode === 'simulated';
  const salt = simulated ? voterSalt(store) : '';
  const seed = input.seed ?? 0;
  const callFor = (asset: string) => input.brainCalls.find((c) => c.asset === asset);
  const priceOf = (asset: string) => input.prices[asset] ?? callFor(asset)?.price ?? null;
  const priceTimeOf = (asset: string) => (input.priceTimes ? (input.priceTimes[asset] ?? null) : asOf);
  /** This run's price of `asset` when the venue's time of it is at or after `notBefore`, else null. */
  const priceFrom = (asset: string, notBefore: number): number | null => {
    const price = priceOf(asset);
    const at = priceTimeOf(asset);
    return price !== null && at !== null && at >= notBefore ? price : null;
  };
  // Under the run lock the step's run-log row stays pending until the lock settles it, once publishing ended (see
  // run-log.ts); without it (nothing the store knows of publishes) the row says ok at once.
  const run = activeRun(store);
  const owner = input.owner ?? run?.owner ?? 'arena-step';
  let logged: number | null = null;
  /** The newest run's time when it is after this run's (the step then records nothing). */
  let newestAhead: number | null = null;
  // A round with no call yet, or one recorded in this run's mode: the synthetic crowd votes only in those.
  const ownsOrFree = (roundId: string) => {
    const call = brainCallFor(db, roundId);
    return call === null || ownsRound(call.dataMode, mode);
  };
  /** Whether votes for `round` may be in a vote store this run could not read. */
  const votesMayWait = (round: Round): boolean => {
    const unread = input.unreadVotes;
    return unread !== undefined && (unread.readThrough === null || unread.readThrough < votesCloseAt(round));
  };

  /** Records the open round's call and crowd and resolves the rounds that ended: what a run of its time does. */
  const recordAndResolve = (): void => {
    const round = roundAt(asOf);
    if (asOf - round.start <= ENTRY_WINDOW_MINUTES * MINUTE_MS) {
      const reference = input.referencePrices?.[round.asset] ?? priceFrom(round.asset, round.start);
      recordRoundCall(db, round, callFor(round.asset), reference, asOf, false, mode);
      // A call recorded without a reference price (the run had no price from at or after the start, e.g. a
      // candle close of an earlier hour) gets the first one a later run of the entry window brings.
      if (reference !== null) fillStartPrice(db, round.id, reference, mode);
    }
    if (simulated && ownsOrFree(round.id)) addSyntheticCrowd(db, salt, seed, round, asOf, false);

    for (const { roundIndex, call } of unresolvedEndedRounds(db, asOf)) {
      const ended = roundByIndex(roundIndex);
      const voidReason = voidReasonFor(db, call, mode, ended.end, asOf, awaitsVotes(db, ended.id));
      if (voidReason === null) {
        // Inside the resolve window: a round whose votes may be waiting unread is not resolved without them.
        const waits = votesMayWait(ended);
        setAwaitsVotes(db, ended.id, waits, asOf);
        if (waits) continue;
      }
      const endPrice = priceFrom(ended.asset, ended.end);
      // No price from at or after the end in this run (an older candle close, no price at all): a later run of the
      // resolve window may bring one; past the window voidReasonFor says so.
      if (voidReason === null && endPrice === null) continue;
      // The crowd of an ended round votes in full before it is frozen into the outcome.
      if (simulated && ownsRound(call.dataMode, mode) && !call.replayed) {
        addSyntheticCrowd(db, salt, seed, ended, ended.end - 1, false);
      }
      settleRound(db, {
        round: ended,
        call,
        // Past the resolve window this run's price is not the round's end price, whatever its time.
        endPrice: voidReason === NO_END_PRICE || voidReason === VOTES_NOT_READ ? null : endPrice,
        resolvedAt: asOf,
        replayed: call.replayed,
        ...(voidReason === null ? {} : { voidReason }),
      });
      setAwaitsVotes(db, ended.id, false, asOf);
    }
  };

  const step = db.transaction((): ArenaBodies => {
    // A run dated before the newest one (a clock stepped back; `emi generate` refuses an --as-of like that, see
    // pastAsOfProblem) would record calls and outcomes after the fact, in rounds a later run already went past: it
    // records nothing, and its row says so (arena_step 0), so it never stands for a run of its time either.
    const newest = newestSteppedRunAt(db);
    const behind = newest !== null && asOf < newest;
    newestAhead = behind ? newest : null;
    if (!behind) recordAndResolve();
    const status = run ? 'pending' : 'ok';
    const id = logRun(db, {
      owner,
      mode,
      asOf,
      finishedAt: input.clock.generatedAt,
      status,
      detail: null,
      arenaStep: !behind,
    });
    input.onBeforeCommit?.();
    // The statistics count this run as ok: its files, these among them, are only ever served if it publishes.
    const bodies = validated(buildArenaBodies(readArenaView(store, { ...input, thisRun: id })));
    logged = run ? id : null;
    return bodies;
  });

  try {
    const bodies = step.immediate();
    if (logged !== null) run?.pending.push(logged);
    if (newestAhead !== null) {
      (input.notice ?? ((line) => console.error(`emi: ${line}`)))(
        `this run's time ${iso(asOf)} is before the newest run on record (${iso(newestAhead)}): it recorded no ` +
          'brain call, vote or outcome (a clock set back, or an earlier --as-of ahead of the clock on this --state; ' +
          'runs record again once the clock passes that time); its arena files show the store as it is',
      );
    }
    return bodies;
  } catch (error) {
    const detail = runDetail(error);
    try {
      const record = { owner, mode, asOf, finishedAt: input.clock.generatedAt, detail };
      logRun(db, { ...record, status: 'failed', arenaStep: false });
    } catch {
      // A store that cannot take even this row (a full disk): the step's own error says more.
    }
    throw error;
  }
};
