// A store with months of arena history must cost each run no more than a fresh one beyond the 30-day window its
// bodies read: the all-time figures come from totals the store's triggers keep (migration 5), and every per-run
// query reads an index, never every vote, call, outcome or lesson. These tests hold the bodies to what the code
// before migration 5 published from the same store (its hashes below were taken with that code), the totals to
// what counting every row says, an upgraded store to a store that always had the totals, and each per-run query
// plan to an index.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataMode } from '../schemas/common.ts';
import { ROUND_MS, roundByIndex } from '../generator/engines/arena/rounds.ts';
import { brainCallFor, insertVote, recordBrainCall, ensureRound } from '../generator/state/repo.ts';
import { addSyntheticCrowd, recordRoundCall, settleRound } from '../generator/state/settle.ts';
import { readArenaView } from '../generator/state/view.ts';
import { openArenaStore, type ArenaStore } from '../generator/state/store.ts';
import { callsFor, DROP_SCHEMA_5, MINUTE, pricesAll, step, tempStorePath } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
const track = (s: ArenaStore) => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

/** A deterministic stream of numbers in [0, 1), so that a failure replays. */
const sequence = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

// A fortnight more than the 30-day window the bodies read: enough history outside it, and a short test.
const DAYS = 45;
/** 2026-03-20T12:10Z: the as-of of the runs the tests compare, inside an hour's entry window. */
const AS_OF = Date.UTC(2026, 2, 20, 12, 10);
const SALT = 'year-cost-test-salt';
const MODES: DataMode[] = ['simulated', 'live', 'replay'];

/**
 * Fills `db` with DAYS of hourly rounds before AS_OF, as months of mixed runs leave them: calls of every mode (and
 * of none, as a store from before data modes), replayed and not, resolved and voided, synthetic crowds, people's
 * votes (some cast before the round had a call, some in rounds never called), lessons.
 */
const seedMonths = (db: Database.Database): void => {
  const random = sequence(11);
  const last = roundByIndex(Math.floor(AS_OF / ROUND_MS) - 1).index;
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('voter_salt', ?)").run(SALT);
  db.transaction(() => {
    for (let index = last - DAYS * 24; index <= last; index++) {
      const round = roundByIndex(index);
      const roll = random();
      const people = Math.floor(random() * 4);
      const humanVote = (k: number) =>
        insertVote(db, {
          roundId: round.id,
          voterHash: `person-${(index * 7 + k) % 40}`,
          prediction: (['BULLISH', 'BEARISH', 'NEUTRAL'] as const)[(index + k) % 3]!,
          at: round.start + 5 * MINUTE + k,
          source: 'human',
          replayed: false,
        });
      ensureRound(db, round);
      // Votes before the call: the round has none yet when they come.
      if (roll < 0.3) for (let k = 0; k < people; k++) humanVote(k);
      if (roll > 0.95) continue; // never called: its votes count in every mode
      const mode: DataMode | null =
        roll < 0.55
          ? 'simulated'
          : roll < 0.7
            ? 'live'
            : roll < 0.8
              ? 'replay'
              : roll < 0.87
                ? null
                : 'simulated';
      const replayed = mode === 'simulated' && random() < 0.5;
      const bias = (['bullish', 'bearish', 'neutral', null] as const)[Math.floor(random() * 4)]!;
      const price = 100 + Math.floor(random() * 20);
      if (mode === null) {
        recordBrainCall(db, {
          roundId: round.id,
          asset: round.asset,
          prediction: 'BULLISH',
          confidence: 55,
          startPrice: price,
          recordedAt: round.start,
          replayed: false,
          dataMode: null,
        });
      } else {
        recordRoundCall(
          db,
          round,
          { asset: round.asset, bias, confidence: 60, price },
          price,
          round.start,
          replayed,
          mode,
        );
      }
      if (mode === 'simulated' || mode === null)
        addSyntheticCrowd(db, SALT, 42, round, round.end - 1, replayed);
      if (roll >= 0.3) for (let k = 0; k < people; k++) humanVote(k);
      const call = brainCallFor(db, round.id)!;
      const voided = random() < 0.08;
      settleRound(db, {
        round,
        call,
        endPrice: price * (0.98 + random() * 0.04),
        resolvedAt: round.end + Math.floor(random() * 3) * MINUTE,
        replayed,
        ...(voided ? { voidReason: 'the first run after the round end came 1000 s late' } : {}),
      });
    }
  })();
};

const seededStore = (): ArenaStore => {
  const store = track(openArenaStore(tempStorePath()));
  seedMonths(store.db);
  return store;
};

/** The four bodies of a run at AS_OF, as JSON with the store's schema version left out (it is the migration's). */
const bodiesJson = (store: ArenaStore, mode: DataMode): string =>
  JSON.stringify(
    step(store, AS_OF, { mode, seed: 42, brainCalls: callsFor('bearish', 70, 110), prices: pricesAll(110) }),
  ).replace(/"store_schema_version":\d+/g, '"store_schema_version":"N"');

const sha = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * Taken with the code before migration 5 (schema 4, every figure counted from the rows); taken again when
 * OUTCOME_RULE came to say that the return is compared with the band exactly: that text, in five places, is all
 * that differs from the bodies of the code before (it was eb0dc7069f9778a1, a5c734b21c4a395e, b15c1e4df4421ac7);
 * and again when `educational_notice` came to state the specification's whole scope and the teacher lessons and
 * statistics to link the rules (`rules_url`, and "Rules: /docs/arena-rules/" ending the lessons' developer_note):
 * those, compared field by field with the bodies before, are all that differs (it was 8f8a48dd83ae0e49,
 * 2dc6016979bfd912, a396cac6c17c3b70); and again when score_definitions came to say that a brain call at
 * confidence 0 is no call for the hit rate: that text, in three places, is all that differs (it was
 * 1320d41383a4ec33, 5dd2dbac384aae2e, 68f4dc1626df6c78; these months hold no call at confidence 0).
 */
const BODIES_BEFORE: Record<DataMode, string> = {
  simulated: '7f7ccd3dfdd895b2',
  live: '517a68aafe06f057',
  replay: 'c15d4ff39cbac40c',
};

/** What counting every row says: the queries readArenaView and modeVotes ran before migration 5. */
const counted = (db: Database.Database, mode: DataMode) => {
  const own =
    mode === 'simulated' ? "(p.data_mode IS 'simulated' OR p.data_mode IS NULL)" : `p.data_mode IS '${mode}'`;
  const n = (sql: string, ...args: unknown[]) =>
    (db.prepare(sql).get(...args) as { n: number | null }).n ?? 0;
  const calls = `FROM brain_predictions p WHERE ${own}`;
  const outcomes = `FROM outcomes o JOIN brain_predictions p USING (round_id) WHERE ${own}`;
  const lessons = `FROM lessons l JOIN brain_predictions p USING (round_id) WHERE ${own}`;
  const ownVote = `((${own} OR p.round_id IS NULL) AND (v.source = 'human' OR ${mode === 'simulated' ? 1 : 0}))`;
  const votes = 'FROM votes v LEFT JOIN brain_predictions p ON p.round_id = v.round_id';
  const voteMode =
    mode === 'simulated'
      ? 'p.data_mode'
      : "CASE WHEN v.source = 'synthetic' THEN 'simulated' ELSE p.data_mode END";
  const left = db
    .prepare(
      `SELECT ${voteMode} AS m, COUNT(*) AS votes ${votes} WHERE NOT ${ownVote} GROUP BY m ORDER BY m IS NULL, m`,
    )
    .all() as Array<{ m: string | null; votes: number }>;
  const vote = (where: string) => n(`SELECT COUNT(*) AS n ${votes} WHERE ${ownVote} AND ${where}`);
  return {
    recordedCalls: n(`SELECT COUNT(*) AS n ${calls}`),
    replayedCalls: n(`SELECT COUNT(*) AS n ${calls} AND p.replayed = 1`),
    callsByPrediction: {
      bullish: n(`SELECT COUNT(*) AS n ${calls} AND p.prediction = 'BULLISH'`),
      bearish: n(`SELECT COUNT(*) AS n ${calls} AND p.prediction = 'BEARISH'`),
      neutral: n(`SELECT COUNT(*) AS n ${calls} AND p.prediction = 'NEUTRAL'`),
      none: n(`SELECT COUNT(*) AS n ${calls} AND p.prediction = 'NONE'`),
    },
    latestRoundId: (
      db.prepare(`SELECT round_id ${calls} ORDER BY recorded_at_ms DESC LIMIT 1`).get() as
        { round_id: string } | undefined
    )?.round_id,
    lessons: n(`SELECT COUNT(*) AS n ${lessons}`),
    lessonsReplayed: n(`SELECT COUNT(*) AS n ${lessons} AND l.replayed = 1`),
    lastLessonAt: (db.prepare(`SELECT MAX(l.created_at_ms) AS n ${lessons}`).get() as { n: number | null }).n,
    outcomes: {
      bullish: n(`SELECT COUNT(*) AS n ${outcomes} AND o.status = 'resolved' AND o.outcome = 'BULLISH'`),
      bearish: n(`SELECT COUNT(*) AS n ${outcomes} AND o.status = 'resolved' AND o.outcome = 'BEARISH'`),
      neutral: n(`SELECT COUNT(*) AS n ${outcomes} AND o.status = 'resolved' AND o.outcome = 'NEUTRAL'`),
    },
    voided: n(`SELECT COUNT(*) AS n ${outcomes} AND o.status = 'voided'`),
    roundsWithVotes: n(`SELECT COUNT(DISTINCT v.round_id) AS n ${votes} WHERE ${ownVote}`),
    roundsWithHumanVotes: n(
      `SELECT COUNT(DISTINCT v.round_id) AS n ${votes} WHERE ${ownVote} AND v.source = 'human'`,
    ),
    votes: {
      counts: {
        bullish: vote("v.source = 'human' AND v.prediction = 'BULLISH'"),
        bearish: vote("v.source = 'human' AND v.prediction = 'BEARISH'"),
        neutral: vote("v.source = 'human' AND v.prediction = 'NEUTRAL'"),
      },
      simulated: {
        bullish: vote("v.source = 'synthetic' AND v.prediction = 'BULLISH'"),
        bearish: vote("v.source = 'synthetic' AND v.prediction = 'BEARISH'"),
        neutral: vote("v.source = 'synthetic' AND v.prediction = 'NEUTRAL'"),
      },
      human: vote("v.source = 'human'"),
      synthetic: vote("v.source = 'synthetic'"),
      replayed: vote('v.replayed = 1'),
    },
    distinctHumanVoters: n(
      `SELECT COUNT(DISTINCT v.voter_hash) AS n ${votes} WHERE ${ownVote} AND v.source = 'human'`,
    ),
    votesLeftOut: { votes: left.reduce((a, r) => a + r.votes, 0), modes: left.map((r) => r.m) },
  };
};

const viewTotals = (store: ArenaStore, mode: DataMode) => {
  const { latestCall, ...totals } = readArenaView(store, {
    mode,
    clock: { asOf: AS_OF, generatedAt: AS_OF, nextUpdateDue: AS_OF + MINUTE },
    brainCalls: [],
    prices: {},
  }).totals;
  return { ...totals, latestRoundId: latestCall?.roundId };
};

/** Turns a store this code made into what an emi of schema 4 left: none of migration 5's tables, triggers, indexes. */
const rewindToSchema4 = (db: Database.Database): void => {
  db.exec(`${DROP_SCHEMA_5} DELETE FROM schema_migrations WHERE version > 4;`);
};

const copyStore = (store: ArenaStore): ArenaStore => {
  const file = tempStorePath();
  fs.mkdirSync(file.replace(/[^/]+$/, ''), { recursive: true });
  store.db.prepare('VACUUM INTO ?').run(file);
  return track(openArenaStore(file));
};

describe('a store with months of arena history', () => {
  it('publishes the bodies the code before the totals published, in every mode', () => {
    const base = seededStore();
    const hashes = Object.fromEntries(MODES.map((mode) => [mode, sha(bodiesJson(copyStore(base), mode))]));
    expect(hashes).toEqual(BODIES_BEFORE);
  });

  it('counts what counting every row counts, in every mode, after more runs of each', () => {
    const store = seededStore();
    for (const mode of MODES) expect(viewTotals(store, mode)).toEqual(counted(store.db, mode));
    // Runs of each mode after the seeded months: calls, crowds, votes of people before and after a call.
    let at = AS_OF;
    for (let k = 0; k < 12; k++, at += 20 * MINUTE) {
      const mode = MODES[k % 3]!;
      insertVote(store.db, {
        roundId: ensureAndId(store.db, at + ROUND_MS),
        voterHash: `late-${k}`,
        prediction: 'BEARISH',
        at,
        source: 'human',
        replayed: false,
      });
      step(store, at, { mode, seed: 42 });
      for (const m of MODES) expect(viewTotals(store, m)).toEqual(counted(store.db, m));
    }
  });

  it('after an upgrade from schema 4, publishes what a store that always had the totals publishes', () => {
    const always = seededStore();
    const file = tempStorePath();
    const older = openArenaStore(file);
    rewindToSchema4(older.db);
    seedMonths(older.db); // written without the triggers, as an emi of schema 4 writes
    older.close();
    const upgraded = track(openArenaStore(file));
    expect(
      (upgraded.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v,
    ).toBe(5);
    for (const mode of MODES) expect(viewTotals(upgraded, mode)).toEqual(counted(upgraded.db, mode));
    for (const mode of MODES)
      expect(bodiesJson(copyStore(upgraded), mode)).toBe(bodiesJson(copyStore(always), mode));
  });

  it('reads every per-run query through an index, never a whole table of history', () => {
    const store = seededStore();
    const plans = new Map<string, string>();
    const prepare = store.db.prepare.bind(store.db);
    // Records the plan of every statement a run executes, with the parameters it ran with.
    store.db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      for (const name of ['run', 'get', 'all'] as const) {
        const call = statement[name].bind(statement) as (...args: unknown[]) => unknown;
        (statement as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
          if (!/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(sql)) {
            const plan = prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>;
            plans.set(sql.replace(/\s+/g, ' ').trim(), plan.map((p) => p.detail).join(' | '));
          }
          return call(...args);
        };
      }
      return statement;
    }) as typeof store.db.prepare;
    for (const [k, mode] of MODES.entries()) step(store, AS_OF + k * MINUTE, { mode, seed: 42 });
    expect(plans.size).toBeGreaterThan(10);
    const fullScans = [...plans].filter(([, plan]) =>
      plan
        .split(' | ')
        // The distinct people are counted from their own votes (an index of human votes only, never the synthetic).
        .some(
          (d) =>
            /^SCAN (\w+ AS )?\w+\b/.test(d) &&
            !/USING COVERING INDEX votes_human$/.test(d) &&
            /^SCAN (votes|rounds|brain_predictions|lessons|outcomes|v|r|p|l|o)\b/.test(d),
        ),
    );
    expect(fullScans).toEqual([]);
  });
});

function ensureAndId(db: Database.Database, at: number): string {
  const round = roundByIndex(Math.floor(at / ROUND_MS));
  ensureRound(db, round);
  return round.id;
}
