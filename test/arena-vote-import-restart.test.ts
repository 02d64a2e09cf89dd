// A vote store whose numbering starts again (its file deleted or moved, a new machine, a switch from the Node vote
// endpoint to a Worker's export) must not make the generator skip the votes it accepted: the audit imported 5 votes,
// recreated the vote file with 7 new ones, and saw only 2 imported, though each voter had been answered 201.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { importEndpointVotes, importWorkerVotes } from '../generator/state/endpoint-votes.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { importSignedVotes, signedVotesCursor } from '../generator/state/votes.ts';
import { openSqliteVoteStore, type SqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import type { StoredVote } from '../paywall-worker/arena-vote/store.ts';
import { MINUTE, T0, tempStore } from './arena-fixtures.ts';

const ROUND = roundAt(T0);
const NOW = T0 - MINUTE;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  vi.unstubAllGlobals();
});

const arenaStore = (): ArenaStore => {
  const s = tempStore();
  cleanups.push(() => s.db.open && s.close());
  return s;
};

const voteDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emi-vote-restart-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A vote as the endpoint stores it; the generator does not check signatures again, so any unique text serves. */
const vote = (address: string, roundId = ROUND.id, prediction = 'BULLISH') => ({
  address,
  asset: ROUND.asset,
  prediction,
  roundId,
  nonce: `nonce-${address}-${roundId}`,
  receivedAt: T0 - 30 * MINUTE,
  form: 'data' as const,
  signature: Buffer.from(`sig/${address}/${roundId}`).toString('base64'),
});

const voteFile = async (file: string, addresses: string[]): Promise<SqliteVoteStore> => {
  const votes = openSqliteVoteStore(file);
  for (const a of addresses) expect(await votes.add(vote(a))).toBe('added');
  return votes;
};

/** Deletes the vote store as an operator would (the file and its WAL), so that a new one starts at 1. */
const removeVoteFile = (file: string) => {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
};

const humanVotes = (s: ArenaStore): number =>
  (s.db.prepare("SELECT COUNT(*) AS n FROM votes WHERE source = 'human'").get() as { n: number }).n;

const wallets = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

describe('signed votes: a vote store whose numbering starts again', () => {
  it('imports every vote of a recreated vote file (the audit: 5 imported, then 7 new, only 2 imported)', async () => {
    const s = arenaStore();
    const file = path.join(voteDir(), 'arena-votes.sqlite');
    const warn = vi.fn();
    const first = await voteFile(file, wallets('OLD', 5));
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(5);
    first.close();

    removeVoteFile(file);
    const second = await voteFile(file, wallets('NEW', 7)); // numbered 1..7 again
    second.close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(7);
    expect(humanVotes(s)).toBe(12);
    // The run says what happened.
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/does not hold the vote imported at its position 5/),
    );
    // And the next run neither imports nor warns again.
    warn.mockClear();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(0);
    expect(warn).not.toHaveBeenCalled();
  });

  it('imports the new votes of a vote file restored from an older copy, and counts none twice', async () => {
    const s = arenaStore();
    const dir = voteDir();
    const file = path.join(dir, 'arena-votes.sqlite');
    const warn = vi.fn();
    const votes = await voteFile(file, wallets('A', 3));
    votes.close();
    fs.copyFileSync(file, path.join(dir, 'copy.sqlite')); // a copy with votes 1..3 (WAL checkpointed on close)
    const more = await voteFile(file, wallets('B', 2)); // votes 4 and 5
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(5);
    more.close();

    // The operator puts the older copy back: it holds votes 1..3 (already imported), and the endpoint then
    // accepts two new votes, numbered 4 and 5 again.
    removeVoteFile(file);
    fs.copyFileSync(path.join(dir, 'copy.sqlite'), file);
    (await voteFile(file, wallets('C', 2))).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(2);
    expect(humanVotes(s)).toBe(7);
    // Votes 1..3 were already in: skipped without being reported as refused.
    expect(warn.mock.calls.flat().join('\n')).not.toMatch(/refused/);
  });

  it('imports a Worker export after the Node vote store, though both number their votes from 1', async () => {
    const s = arenaStore();
    const file = path.join(voteDir(), 'arena-votes.sqlite');
    const warn = vi.fn();
    (await voteFile(file, wallets('NODE', 5))).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(5);

    // The operator moves the endpoint to Cloudflare (EMI_VOTE_EXPORT_URL): the Durable Object numbers from 1.
    const exported: StoredVote[] = wallets('WORKER', 3).map((a, i) => ({ seq: i + 1, ...vote(a) }));
    vi.stubGlobal('fetch', async (input: string | URL) => {
      const after = Number(new URL(String(input)).searchParams.get('after'));
      return Response.json({ success: true, votes: exported.filter((v) => v.seq > after) });
    });
    expect(await importWorkerVotes(s, 'https://votes.example', 'token', NOW, warn)).toBe(3);
    expect(humanVotes(s)).toBe(8);
    expect(await importWorkerVotes(s, 'https://votes.example', 'token', NOW, warn)).toBe(0);
    // Back on the Node store: it goes on from where its own import stood.
    (await voteFile(file, ['NODE6'])).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(1);
    expect(humanVotes(s)).toBe(9);
    expect(warn.mock.calls.flat().join('\n')).not.toMatch(/refused/);
  });

  it('reads a store again from the start when it holds fewer votes than the position, then goes on', async () => {
    const s = arenaStore();
    const file = path.join(voteDir(), 'arena-votes.sqlite');
    const warn = vi.fn();
    (await voteFile(file, wallets('OLD', 4))).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(4);
    removeVoteFile(file);
    (await voteFile(file, ['NEW1'])).close(); // highest number 1, below the position 4
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(1);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/position 4/));
    (await voteFile(file, ['NEW2'])).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(1);
    expect(humanVotes(s)).toBe(6);
  });

  it('keeps the position of a store imported before positions were kept per store, when it is the same store', async () => {
    const s = arenaStore();
    const file = path.join(voteDir(), 'arena-votes.sqlite');
    const warn = vi.fn();
    (await voteFile(file, wallets('OLD', 3))).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(3);
    // The store as the previous version left it: one number for every source.
    s.db.prepare("DELETE FROM meta WHERE key LIKE 'signed_votes%'").run();
    s.db.prepare("INSERT INTO meta (key, value) VALUES ('signed_votes_imported_seq', '3')").run();
    (await voteFile(file, ['OLD4'])).close();
    expect(await importEndpointVotes(s, file, NOW, warn)).toBe(1);
    expect(warn).not.toHaveBeenCalled();
    expect(humanVotes(s)).toBe(4);
  });

  it('counts a vote once when the same vote is offered again after a restart', () => {
    const s = arenaStore();
    const record = (seq: number, address: string) => ({
      seq,
      address,
      asset: ROUND.asset,
      prediction: 'BULLISH',
      roundId: ROUND.id,
      receivedAt: T0 - 30 * MINUTE,
    });
    const refused: string[] = [];
    expect(importSignedVotes(s, [record(1, 'W1'), record(2, 'W2')], NOW, (p) => refused.push(...p))).toBe(2);
    expect(signedVotesCursor(s)).toBe(2);
    // The same two votes and a third, read again from the start: only the third is new, nothing is refused.
    const again = [record(1, 'W1'), record(2, 'W2'), record(3, 'W3')];
    expect(importSignedVotes(s, again, NOW, (p) => refused.push(...p), { from: 0 })).toBe(1);
    expect(refused).toEqual([]);
    expect(humanVotes(s)).toBe(3);
  });
});
