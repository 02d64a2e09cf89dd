// `emi arena repair` restores the newest sound daily backup: its line says up to when that backup holds the store
// and what is lost (votes added by hand since; signed votes come back by themselves, as the next run reads the
// vote store again from the restored import position), and the repair leaves nothing beside the backup it read,
// which it never changes.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { copyFile, readdir, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { backupFolder, dailyBackup, describeRepair, repairStore } from '../generator/state/repair.ts';
import { logRun } from '../generator/state/repo.ts';
import { openArenaStore } from '../generator/state/store.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { addHumanVotes, importSignedVotes } from '../generator/state/votes.ts';
import type { SignedVoteRecord } from '../generator/state/votes.ts';
import { tempStorePath } from './arena-fixtures.ts';
import { corruptStore } from './ops-cli.ts';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const LIVE_RUN_AT = Date.parse('2026-11-26T10:00:00Z');
const VOTED_AT = Date.parse('2026-11-26T10:05:00Z');
const SOURCE = '/srv/emi/var/arena-votes.sqlite';

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

const signed = (seq: number, receivedAt: number): SignedVoteRecord => ({
  seq,
  address: `signer-${seq}`,
  asset: 'BTC',
  prediction: 'BEARISH',
  roundId: '',
  receivedAt,
  signature: `sig-${seq}`,
});

const handVote = (store: ArenaStore, voter: string, at: number): string =>
  addHumanVotes(store, [{ label: null, raw: { asset: 'BTC', prediction: 'BULLISH', voter } }], at)[0]!
    .roundId;

const voteCount = (file: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM votes WHERE source = 'human'").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

const run = (mode: string, finishedAt: number) => ({
  owner: 'test',
  mode,
  asOf: finishedAt,
  finishedAt,
  status: 'ok' as const,
  detail: null,
  arenaStep: true,
});

describe('emi arena repair: what a restored backup lacks', () => {
  it('names the time of its newest live run or vote, and says which votes must be added again', async () => {
    const file = tempStorePath();
    const store = openArenaStore(file);
    store.db.transaction(() => {
      logRun(store.db, run('live', LIVE_RUN_AT));
      // A simulated run records its market time, not this machine's: it never stands for the backup's time.
      logRun(store.db, run('simulated', Date.parse('2030-01-01T00:00:00Z')));
    })();
    const roundId = handVote(store, 'before-the-backup', VOTED_AT);
    const first = { ...signed(1, VOTED_AT), roundId };
    expect(importSignedVotes(store, [first], VOTED_AT, undefined, { source: SOURCE })).toBe(1);
    const backup = await dailyBackup(store, NOW);
    expect(backup).not.toBeNull();
    // After the backup: a vote by hand, and a signed vote the run imports from the vote store.
    handVote(store, 'after-the-backup', VOTED_AT + 60_000);
    const second = { ...signed(2, VOTED_AT + 60_000), roundId };
    expect(importSignedVotes(store, [first, second], VOTED_AT + 60_000, undefined, { source: SOURCE })).toBe(
      1,
    );
    store.close();
    await corruptStore(file);

    const result = await repairStore(file, NOW + 3_600_000);
    const line = describeRepair(file, result);

    expect(result.action).toBe('restored');
    expect(line).toContain(
      'restored the backup arena-2026-11-26.sqlite: it holds the store as of 2026-11-26T10:05:00.000Z ' +
        '(its newest live run or vote); votes added with "emi arena vote" or "emi arena import" after that are ' +
        'not in it and must be added again; signed votes (POST /arena/vote) received since are read again from ' +
        'the vote store by the next run',
    );
    // What the line says is so: the vote by hand is gone, the signed one is read again from the restored position.
    expect(voteCount(file)).toBe(2);
    const restored = openArenaStore(file);
    try {
      expect(importSignedVotes(restored, [first, second], NOW, undefined, { source: SOURCE })).toBe(1);
    } finally {
      restored.close();
    }
    expect(voteCount(file)).toBe(3);
  });

  it('names the backup file time when the backup records no live run and no vote', async () => {
    const file = tempStorePath();
    const store = openArenaStore(file);
    logRun(store.db, run('simulated', Date.parse('2026-11-21T12:00:00Z')));
    const backup = (await dailyBackup(store, NOW))!;
    store.close();
    const written = new Date('2026-11-26T12:00:07Z');
    await utimes(backup, written, written);
    await corruptStore(file);

    const line = describeRepair(file, await repairStore(file, NOW + 3_600_000));

    expect(line).toContain(
      'restored the backup arena-2026-11-26.sqlite: it holds the store as of 2026-11-26T12:00:07.000Z ' +
        '(the time the file was written)',
    );
  });
});

describe('emi arena repair: the backups it reads', () => {
  it('leaves no -wal or -shm beside them, and never changes them', async () => {
    const file = tempStorePath();
    mkdirSync(dirname(file), { recursive: true });
    const store = openArenaStore(file);
    logRun(store.db, run('live', LIVE_RUN_AT));
    const newest = (await dailyBackup(store, NOW))!;
    store.close();
    // An older sound backup, and a newest one that is damaged: the repair reads both before it restores.
    const folder = backupFolder(file);
    const older = join(folder, 'arena-2026-11-25.sqlite');
    const damaged = join(folder, 'arena-2026-11-27.sqlite');
    await copyFile(newest, older);
    await copyFile(newest, damaged);
    await corruptStore(damaged);
    const before = [older, newest, damaged].map(sha256);
    await corruptStore(file);

    const result = await repairStore(file, NOW + 3_600_000);

    expect(result.backup).toBe(newest);
    expect((await readdir(folder)).sort()).toEqual([
      'arena-2026-11-25.sqlite',
      'arena-2026-11-26.sqlite',
      'arena-2026-11-27.sqlite',
    ]);
    expect([older, newest, damaged].map(sha256)).toEqual(before);
    expect((await readdir(dirname(file))).filter((name) => name.includes('restoring'))).toEqual([]);
  });
});
