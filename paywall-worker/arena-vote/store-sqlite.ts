// The vote store on Node: one SQLite file (better-sqlite3), unique keys doing the refusing.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { openPrivately } from '../../generator/publish/modes.ts';
import { openSqliteFile } from '../../generator/state/sqlite-open-error.ts';
import { openStoreChecked } from '../../generator/state/store-access.ts';
import type { AddResult, NewVote, StoredVote, VoteStore } from './store.ts';

export const DEFAULT_VOTE_STORE_PATH = 'var/arena-votes.sqlite';

export interface SqliteVoteStore extends VoteStore {
  close(): void;
}

interface Row {
  seq: number;
  address: string;
  asset: string;
  prediction: string;
  round_id: string;
  nonce: string;
  received_at_ms: number;
  form: 'data' | 'transaction';
  signature: string;
}

/**
 * The vote store's file, opened and readied. A path too long for SQLite is said as such, and so is another user's
 * file (a state folder restored by `sudo cp`), naming the file, this user and what to do; a file made here (signed
 * votes) is 0600, whatever the umask.
 */
const openVoteDatabase = (file: string): Database.Database =>
  openStoreChecked('the arena vote store', file, () => {
    const db = openPrivately(file, () => openSqliteFile(file, () => new Database(file)));
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      db.exec(`CREATE TABLE IF NOT EXISTS signed_votes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        address TEXT NOT NULL, asset TEXT NOT NULL, prediction TEXT NOT NULL, round_id TEXT NOT NULL,
        nonce TEXT NOT NULL, received_at_ms INTEGER NOT NULL, form TEXT NOT NULL, signature TEXT NOT NULL UNIQUE,
        UNIQUE (address, round_id))`);
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  });

export const openSqliteVoteStore = (file: string = DEFAULT_VOTE_STORE_PATH): SqliteVoteStore => {
  mkdirSync(dirname(file), { recursive: true }); // `emi serve` on a fresh clone has no state folder yet
  const db = openVoteDatabase(file);
  const insert = db.prepare(
    `INSERT INTO signed_votes (address, asset, prediction, round_id, nonce, received_at_ms, form, signature)
     VALUES (@address, @asset, @prediction, @roundId, @nonce, @receivedAt, @form, @signature)`,
  );
  const usedSignature = db.prepare('SELECT 1 FROM signed_votes WHERE signature = ?');
  const since = db.prepare('SELECT * FROM signed_votes WHERE seq > ? ORDER BY seq LIMIT ?');
  return {
    add: async (vote: NewVote): Promise<AddResult> => {
      try {
        insert.run(vote);
        return 'added';
      } catch (error) {
        if ((error as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
        return usedSignature.get(vote.signature) ? 'signature_used' : 'already_voted';
      }
    },
    since: async (after: number, limit: number): Promise<StoredVote[]> =>
      (since.all(after, limit) as Row[]).map((r) => ({
        seq: r.seq,
        address: r.address,
        asset: r.asset,
        prediction: r.prediction,
        roundId: r.round_id,
        nonce: r.nonce,
        receivedAt: r.received_at_ms,
        form: r.form,
        signature: r.signature,
      })),
    close: () => db.close(),
  };
};
