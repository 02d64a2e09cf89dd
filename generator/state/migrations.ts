// Versioned schema of the arena store. Append new migrations; never edit one that has shipped. A new migration should
// leave the store usable by the release before it where it can (a new NOT NULL column with a DEFAULT): after an
// upgrade the old release may still run until restarted (it refuses a newer store, store.ts, but only from the
// release that added that check).
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** From this version on the run log says how each run ended (ok only once its files were published). */
export const RUN_OUTCOMES_VERSION = 3;

/**
 * Kept in `meta` when a store is migrated to RUN_OUTCOMES_VERSION (store.ts migrate, in the same transaction): the
 * highest run-log id then, so that the rows an older emi wrote can be told from the rest (their times are the runs'
 * as-of clocks, which need not grow). Absent from stores migrated before this was kept: there nobody can tell.
 */
export const RUN_OUTCOMES_FROM_KEY = 'run_log_rows_before_outcomes';

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'arena core: rounds, votes, brain predictions, outcomes, lessons, run log, lock',
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

      CREATE TABLE rounds (
        round_id TEXT PRIMARY KEY,
        round_index INTEGER NOT NULL UNIQUE,
        asset TEXT NOT NULL,
        start_ms INTEGER NOT NULL,
        end_ms INTEGER NOT NULL
      );

      -- voter_hash is an HMAC of the voter id with the store's salt; the id itself is never stored.
      CREATE TABLE votes (
        id INTEGER PRIMARY KEY,
        round_id TEXT NOT NULL REFERENCES rounds(round_id),
        voter_hash TEXT NOT NULL,
        prediction TEXT NOT NULL CHECK (prediction IN ('BULLISH', 'BEARISH', 'NEUTRAL')),
        voted_at_ms INTEGER NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('human', 'synthetic')),
        replayed INTEGER NOT NULL DEFAULT 0 CHECK (replayed IN (0, 1)),
        UNIQUE (round_id, voter_hash)
      );

      -- One call per round, recorded by the first run inside the entry window (or by a backfill replay).
      CREATE TABLE brain_predictions (
        round_id TEXT PRIMARY KEY REFERENCES rounds(round_id),
        asset TEXT NOT NULL,
        prediction TEXT NOT NULL CHECK (prediction IN ('BULLISH', 'BEARISH', 'NEUTRAL', 'NONE')),
        confidence REAL,
        start_price REAL,
        recorded_at_ms INTEGER NOT NULL,
        replayed INTEGER NOT NULL DEFAULT 0 CHECK (replayed IN (0, 1))
      );

      -- Exactly one row per round with a brain call; the crowd counts are frozen here at resolution.
      CREATE TABLE outcomes (
        round_id TEXT PRIMARY KEY REFERENCES brain_predictions(round_id),
        status TEXT NOT NULL CHECK (status IN ('resolved', 'voided')),
        outcome TEXT CHECK (outcome IN ('BULLISH', 'BEARISH', 'NEUTRAL')),
        end_price REAL,
        return_fraction REAL,
        neutral_band REAL NOT NULL,
        void_reason TEXT,
        crowd_bullish INTEGER NOT NULL,
        crowd_bearish INTEGER NOT NULL,
        crowd_neutral INTEGER NOT NULL,
        human_votes INTEGER NOT NULL,
        synthetic_votes INTEGER NOT NULL,
        resolved_at_ms INTEGER NOT NULL,
        replayed INTEGER NOT NULL DEFAULT 0 CHECK (replayed IN (0, 1)),
        CHECK ((status = 'resolved') = (outcome IS NOT NULL))
      );

      CREATE TABLE lessons (
        lesson_id TEXT PRIMARY KEY,
        round_id TEXT NOT NULL UNIQUE REFERENCES outcomes(round_id),
        asset TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        replayed INTEGER NOT NULL CHECK (replayed IN (0, 1)),
        body TEXT NOT NULL
      );
      CREATE INDEX lessons_by_time ON lessons (created_at_ms);

      CREATE TABLE run_log (
        id INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        mode TEXT NOT NULL,
        as_of_ms INTEGER NOT NULL,
        finished_at_ms INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        detail TEXT
      );

      CREATE TABLE run_lock (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        owner TEXT NOT NULL,
        acquired_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'data mode of each brain call (simulated, replay, live), inferred for older calls where the run log allows',
    // NULL: unknown (recorded before this migration, and the run log cannot tell). Such a round counts as simulated
    // only, never as a live or replay record (see ownModeSql in repo.ts).
    sql: `
      ALTER TABLE brain_predictions ADD COLUMN data_mode TEXT
        CHECK (data_mode IS NULL OR data_mode IN ('simulated', 'replay', 'live'));

      -- A backfill has only ever replayed the simulated market.
      UPDATE brain_predictions SET data_mode = 'simulated' WHERE replayed = 1;

      -- A run's call is written in the same transaction as its 'ok' run-log row, at the run's as-of time: take that
      -- run's mode when exactly one mode ran at that time.
      UPDATE brain_predictions SET data_mode = (
        SELECT MIN(r.mode) FROM run_log r
        WHERE r.as_of_ms = brain_predictions.recorded_at_ms AND r.status = 'ok')
      WHERE replayed = 0 AND (
        SELECT COUNT(DISTINCT r.mode) FROM run_log r
        WHERE r.as_of_ms = brain_predictions.recorded_at_ms AND r.status = 'ok'
          AND r.mode IN ('simulated', 'replay', 'live')) = 1
        AND NOT EXISTS (
          SELECT 1 FROM run_log r
          WHERE r.as_of_ms = brain_predictions.recorded_at_ms AND r.status = 'ok'
            AND r.mode NOT IN ('simulated', 'replay', 'live'));
    `,
  },
  {
    version: 3,
    name: 'run log says how each run ended: pending while it publishes, then ok, failed or unfinished',
    // A run's row is written 'pending' with its arena step and settled to 'ok' or 'failed' once its files are
    // published or not (run-log.ts); one never settled (its process was killed) is marked 'unfinished' by the next
    // run. arena_step: whether the run's arena step committed (its calls, votes and outcomes are in the store),
    // whatever became of its files. Rows written before this migration stay as they were recorded: 'ok' then meant
    // that the arena step committed, not that the files were published.
    sql: `
      CREATE TABLE run_log_v3 (
        id INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        mode TEXT NOT NULL,
        as_of_ms INTEGER NOT NULL,
        finished_at_ms INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'ok', 'failed', 'unfinished')),
        detail TEXT,
        arena_step INTEGER NOT NULL CHECK (arena_step IN (0, 1))
      );
      INSERT INTO run_log_v3 (id, owner, mode, as_of_ms, finished_at_ms, status, detail, arena_step)
        SELECT id, owner, mode, as_of_ms, finished_at_ms, status, detail, status = 'ok' FROM run_log;
      DROP TABLE run_log;
      ALTER TABLE run_log_v3 RENAME TO run_log;
      CREATE INDEX run_log_pending ON run_log (status) WHERE status = 'pending';
    `,
  },
  {
    version: 4,
    name: 'run-log totals kept by triggers, and the late-round lookup indexed, so a year of runs costs no scan',
    // A year of runs a minute apart is half a million rows: counting them every run cost 70 to 90 ms of each cycle
    // by then. The totals move with every insert and status change (whoever writes), the last finish time only up.
    sql: `
      CREATE TABLE run_totals (
        status TEXT PRIMARY KEY,
        runs INTEGER NOT NULL,
        last_finished_at_ms INTEGER
      );
      INSERT INTO run_totals (status, runs, last_finished_at_ms)
        SELECT status, COUNT(*), MAX(finished_at_ms) FROM run_log GROUP BY status;

      CREATE TRIGGER run_totals_insert AFTER INSERT ON run_log BEGIN
        INSERT INTO run_totals (status, runs, last_finished_at_ms) VALUES (NEW.status, 1, NEW.finished_at_ms)
          ON CONFLICT (status) DO UPDATE SET runs = runs + 1,
            last_finished_at_ms = MAX(COALESCE(last_finished_at_ms, excluded.last_finished_at_ms),
                                      excluded.last_finished_at_ms);
      END;
      CREATE TRIGGER run_totals_status AFTER UPDATE OF status ON run_log WHEN OLD.status IS NOT NEW.status BEGIN
        UPDATE run_totals SET runs = runs - 1 WHERE status = OLD.status;
        INSERT INTO run_totals (status, runs, last_finished_at_ms) VALUES (NEW.status, 1, NEW.finished_at_ms)
          ON CONFLICT (status) DO UPDATE SET runs = runs + 1,
            last_finished_at_ms = MAX(COALESCE(last_finished_at_ms, excluded.last_finished_at_ms),
                                      excluded.last_finished_at_ms);
      END;
      CREATE TRIGGER run_totals_delete AFTER DELETE ON run_log BEGIN
        UPDATE run_totals SET runs = runs - 1 WHERE status = OLD.status;
      END;

      CREATE INDEX run_log_stepped ON run_log (as_of_ms) WHERE arena_step = 1;
    `,
  },
  {
    version: 5,
    name: 'arena totals kept by triggers, and the per-run reads indexed, so a year of rounds and votes costs no scan',
    // A year of rounds is 8 640 calls, outcomes and lessons and some 137 000 synthetic votes: counting them all
    // every run cost some 280 ms of each run by then. Rows of these tables are only ever inserted (INSERT OR IGNORE,
    // repo.ts), and a call's data mode is written with it, so the totals move on insert only. Mode keys: the call's
    // data mode, 'unknown' for a call recorded before the store kept modes, 'uncalled' for a vote in a round no run
    // has called yet (it moves to the call's mode when one is recorded).
    sql: `
      CREATE TABLE call_totals (
        data_mode TEXT NOT NULL, prediction TEXT NOT NULL, replayed INTEGER NOT NULL, calls INTEGER NOT NULL,
        PRIMARY KEY (data_mode, prediction, replayed)
      );
      INSERT INTO call_totals SELECT COALESCE(data_mode, 'unknown'), prediction, replayed, COUNT(*)
        FROM brain_predictions GROUP BY 1, 2, 3;
      CREATE TRIGGER call_totals_insert AFTER INSERT ON brain_predictions BEGIN
        INSERT INTO call_totals VALUES (COALESCE(NEW.data_mode, 'unknown'), NEW.prediction, NEW.replayed, 1)
          ON CONFLICT DO UPDATE SET calls = calls + 1;
      END;

      -- The mode of each outcome's and lesson's call beside its time, so that the newest of one mode are an index
      -- range (the mode lives on the call).
      CREATE TABLE outcome_times (
        round_id TEXT PRIMARY KEY, call_mode TEXT NOT NULL, resolved_at_ms INTEGER NOT NULL
      );
      INSERT INTO outcome_times
        SELECT o.round_id, COALESCE(p.data_mode, 'unknown'), o.resolved_at_ms
        FROM outcomes o JOIN brain_predictions p USING (round_id);
      CREATE TRIGGER outcome_times_insert AFTER INSERT ON outcomes BEGIN
        INSERT OR IGNORE INTO outcome_times
          SELECT NEW.round_id, COALESCE(p.data_mode, 'unknown'), NEW.resolved_at_ms
          FROM brain_predictions p WHERE p.round_id = NEW.round_id;
      END;
      CREATE INDEX outcome_times_by_mode ON outcome_times (call_mode, resolved_at_ms);
      CREATE TABLE lesson_times (
        lesson_id TEXT PRIMARY KEY, call_mode TEXT NOT NULL, created_at_ms INTEGER NOT NULL
      );
      INSERT INTO lesson_times
        SELECT l.lesson_id, COALESCE(p.data_mode, 'unknown'), l.created_at_ms
        FROM lessons l JOIN brain_predictions p USING (round_id);
      CREATE TRIGGER lesson_times_insert AFTER INSERT ON lessons BEGIN
        INSERT OR IGNORE INTO lesson_times
          SELECT NEW.lesson_id, COALESCE(p.data_mode, 'unknown'), NEW.created_at_ms
          FROM brain_predictions p WHERE p.round_id = NEW.round_id;
      END;
      CREATE INDEX lesson_times_by_mode ON lesson_times (call_mode, created_at_ms, lesson_id);
      CREATE INDEX brain_predictions_by_mode_time ON brain_predictions (COALESCE(data_mode, 'unknown'), recorded_at_ms);
      CREATE INDEX rounds_by_end ON rounds (end_ms);

      CREATE TABLE outcome_totals (
        data_mode TEXT NOT NULL, status TEXT NOT NULL, outcome TEXT NOT NULL, rounds INTEGER NOT NULL,
        PRIMARY KEY (data_mode, status, outcome)
      );
      INSERT INTO outcome_totals SELECT COALESCE(p.data_mode, 'unknown'), o.status, COALESCE(o.outcome, ''), COUNT(*)
        FROM outcomes o JOIN brain_predictions p USING (round_id) GROUP BY 1, 2, 3;
      CREATE TRIGGER outcome_totals_insert AFTER INSERT ON outcomes BEGIN
        INSERT INTO outcome_totals VALUES (
          (SELECT COALESCE(p.data_mode, 'unknown') FROM brain_predictions p WHERE p.round_id = NEW.round_id),
          NEW.status, COALESCE(NEW.outcome, ''), 1)
          ON CONFLICT DO UPDATE SET rounds = rounds + 1;
      END;

      CREATE TABLE lesson_totals (
        data_mode TEXT NOT NULL, replayed INTEGER NOT NULL, lessons INTEGER NOT NULL, last_created_at_ms INTEGER,
        PRIMARY KEY (data_mode, replayed)
      );
      INSERT INTO lesson_totals SELECT COALESCE(p.data_mode, 'unknown'), l.replayed, COUNT(*), MAX(l.created_at_ms)
        FROM lessons l JOIN brain_predictions p USING (round_id) GROUP BY 1, 2;
      CREATE TRIGGER lesson_totals_insert AFTER INSERT ON lessons BEGIN
        INSERT INTO lesson_totals VALUES (
          (SELECT COALESCE(p.data_mode, 'unknown') FROM brain_predictions p WHERE p.round_id = NEW.round_id),
          NEW.replayed, 1, NEW.created_at_ms)
          ON CONFLICT DO UPDATE SET lessons = lessons + 1,
            last_created_at_ms = MAX(COALESCE(last_created_at_ms, excluded.last_created_at_ms),
                                     excluded.last_created_at_ms);
      END;

      -- Calls without an outcome yet: the rounds a run may have to resolve or void.
      CREATE TABLE open_calls (round_id TEXT PRIMARY KEY);
      INSERT INTO open_calls SELECT p.round_id FROM brain_predictions p
        WHERE NOT EXISTS (SELECT 1 FROM outcomes o WHERE o.round_id = p.round_id);
      CREATE TRIGGER open_calls_insert AFTER INSERT ON brain_predictions BEGIN
        INSERT OR IGNORE INTO open_calls VALUES (NEW.round_id);
      END;
      CREATE TRIGGER open_calls_settled AFTER INSERT ON outcomes BEGIN
        DELETE FROM open_calls WHERE round_id = NEW.round_id;
      END;

      -- Votes by the mode of their round's call, source, reading and replay flag; rounds with votes (any source,
      -- and from people) by the same mode.
      CREATE TABLE vote_totals (
        call_mode TEXT NOT NULL, source TEXT NOT NULL, prediction TEXT NOT NULL, replayed INTEGER NOT NULL,
        votes INTEGER NOT NULL,
        PRIMARY KEY (call_mode, source, prediction, replayed)
      );
      INSERT INTO vote_totals
        SELECT COALESCE((SELECT COALESCE(p.data_mode, 'unknown') FROM brain_predictions p WHERE p.round_id = v.round_id),
                        'uncalled'),
               source, prediction, replayed, COUNT(*)
        FROM votes v GROUP BY 1, 2, 3, 4;
      CREATE TABLE vote_round_totals (
        call_mode TEXT NOT NULL, voters TEXT NOT NULL CHECK (voters IN ('any', 'human')), rounds INTEGER NOT NULL,
        PRIMARY KEY (call_mode, voters)
      );
      INSERT INTO vote_round_totals
        SELECT COALESCE(p.data_mode, CASE WHEN p.round_id IS NULL THEN 'uncalled' ELSE 'unknown' END), 'any',
               COUNT(DISTINCT v.round_id)
        FROM votes v LEFT JOIN brain_predictions p ON p.round_id = v.round_id GROUP BY 1;
      INSERT INTO vote_round_totals
        SELECT COALESCE(p.data_mode, CASE WHEN p.round_id IS NULL THEN 'uncalled' ELSE 'unknown' END), 'human',
               COUNT(DISTINCT v.round_id)
        FROM votes v LEFT JOIN brain_predictions p ON p.round_id = v.round_id WHERE v.source = 'human' GROUP BY 1;
      CREATE TRIGGER vote_totals_insert AFTER INSERT ON votes BEGIN
        INSERT INTO vote_totals VALUES (
          COALESCE((SELECT COALESCE(p.data_mode, 'unknown') FROM brain_predictions p WHERE p.round_id = NEW.round_id),
                   'uncalled'),
          NEW.source, NEW.prediction, NEW.replayed, 1)
          ON CONFLICT DO UPDATE SET votes = votes + 1;
        INSERT INTO vote_round_totals
          SELECT COALESCE((SELECT COALESCE(p.data_mode, 'unknown') FROM brain_predictions p
                           WHERE p.round_id = NEW.round_id), 'uncalled'), 'any', 1
          WHERE NOT EXISTS (SELECT 1 FROM votes v WHERE v.round_id = NEW.round_id AND v.id != NEW.id)
          ON CONFLICT DO UPDATE SET rounds = rounds + 1;
        INSERT INTO vote_round_totals
          SELECT COALESCE((SELECT COALESCE(p.data_mode, 'unknown') FROM brain_predictions p
                           WHERE p.round_id = NEW.round_id), 'uncalled'), 'human', 1
          WHERE NEW.source = 'human' AND NOT EXISTS (
            SELECT 1 FROM votes v WHERE v.round_id = NEW.round_id AND v.source = 'human' AND v.id != NEW.id)
          ON CONFLICT DO UPDATE SET rounds = rounds + 1;
      END;
      -- A call recorded for a round that already has votes moves them (and the round) from 'uncalled' to its mode.
      CREATE TRIGGER vote_totals_called AFTER INSERT ON brain_predictions BEGIN
        INSERT INTO vote_totals
          SELECT 'uncalled', source, prediction, replayed, -COUNT(*) FROM votes WHERE round_id = NEW.round_id
          GROUP BY source, prediction, replayed
          ON CONFLICT DO UPDATE SET votes = votes + excluded.votes;
        INSERT INTO vote_totals
          SELECT COALESCE(NEW.data_mode, 'unknown'), source, prediction, replayed, COUNT(*) FROM votes
          WHERE round_id = NEW.round_id GROUP BY source, prediction, replayed
          ON CONFLICT DO UPDATE SET votes = votes + excluded.votes;
        UPDATE vote_round_totals SET rounds = rounds - 1
          WHERE call_mode = 'uncalled' AND (
            (voters = 'any' AND EXISTS (SELECT 1 FROM votes WHERE round_id = NEW.round_id)) OR
            (voters = 'human' AND EXISTS (SELECT 1 FROM votes WHERE round_id = NEW.round_id AND source = 'human')));
        INSERT INTO vote_round_totals
          SELECT COALESCE(NEW.data_mode, 'unknown'), 'any', 1
          WHERE EXISTS (SELECT 1 FROM votes WHERE round_id = NEW.round_id)
          ON CONFLICT DO UPDATE SET rounds = rounds + 1;
        INSERT INTO vote_round_totals
          SELECT COALESCE(NEW.data_mode, 'unknown'), 'human', 1
          WHERE EXISTS (SELECT 1 FROM votes WHERE round_id = NEW.round_id AND source = 'human')
          ON CONFLICT DO UPDATE SET rounds = rounds + 1;
      END;
      -- Distinct people are counted from their votes alone (synthetic votes are most of the table).
      CREATE INDEX votes_human ON votes (voter_hash, round_id) WHERE source = 'human';
    `,
  },
];
