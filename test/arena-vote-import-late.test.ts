// Wallet votes the vote endpoint accepted (201, "counted once the next generator run imports it") must never be lost
// because the generator could not read the vote store for a while: the audit cast 3 votes for a round, ran the
// generator twice with the Worker's export unreachable (each run said `ok`, and resolved the round with "no human
// votes"), and once the export was back every vote was refused: "already resolved and takes no more votes".
// A run that cannot read a vote store that is set up now records itself `degraded`, saying why once, and leaves
// ended rounds whose votes may be waiting unresolved; the next run that reads the votes counts them and resolves the
// round within its resolution window, and past that window the round is voided, saying why, never scored without
// them. The same holds for the Worker's export route (here `emi paywall`'s, the same route as the Durable Object's)
// and for the Node vote store file read directly.
import { renameSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  roundAt,
  roundByIndex,
  RESOLVE_WINDOW_MINUTES,
  type Round,
} from '../generator/engines/arena/rounds.ts';
import { importFromVoteFile } from '../generator/state/endpoint-votes.ts';
import { runArenaStep } from '../generator/state/step.ts';
import { openArenaStore } from '../generator/state/store.ts';
import type { RunReport } from '../generator/pipeline.ts';
import type { SharedIntelligenceResponse } from '../schemas/arena.ts';
import type { RunStatus } from '../schemas/status.ts';
import type { TeacherLessonsResponse } from '../schemas/teacher-lessons.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { freePort } from './free-port.ts';
import { signedVoteBody } from './helpers/signed-vote.ts';
import { startTestWorker } from './helpers/test-worker.ts';
import { callsFor, HOUR, pricesAll, T0 } from './arena-fixtures.ts';
import { generateArgs, runEmi, startPaywallCli, type Finished } from './ops-cli.ts';

const SITE = 'https://arena.example';
const TOKEN = 'export-secret-of-thirty-two-chars';
const MINUTE = 60_000; // arena-fixtures' MINUTE too

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'emi-late-votes-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

/** A round a few hours ahead of the clock: the endpoint takes votes for it now, the runs describe it by --as-of. */
const roundAhead = (): Round => roundByIndex(roundAt(Date.now()).index + 3);

/** `emi paywall` with the export route, its vote store in `<dir>/<state>`; resolves once it listens. */
async function startPaywall(
  dir: string,
  state: string,
): Promise<{ url: string; close: () => Promise<unknown> }> {
  const paywall = await startPaywallCli(dir, ['--base-url', SITE, '--state', state], {
    EMI_VOTE_EXPORT_TOKEN: TOKEN,
  });
  cleanups.push(paywall.close);
  return { url: paywall.base, close: paywall.close };
}

/** Casts one wallet-signed vote per new account for `round`, as the arena page does; each must be taken (201). */
async function castVotes(url: string, round: Round, n: number, site = SITE): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/arena/vote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signedVoteBody({ site, round })),
    });
    expect(res.status, await res.text()).toBe(201);
  }
}

const at = (ms: number): string => new Date(ms).toISOString();

/** `emi generate` at `asOf` into site/, paid/ and `state`, importing from `exportUrl` (or the state's vote file). */
const generate = (
  dir: string,
  asOf: number,
  state: string,
  exportUrl?: string,
  token = TOKEN,
): Promise<Finished> =>
  runEmi(
    dir,
    generateArgs(at(asOf)).map((arg) => (arg === 'var' ? state : arg)),
    exportUrl ? { EMI_VOTE_EXPORT_URL: exportUrl, EMI_VOTE_EXPORT_TOKEN: token } : {},
  );

const json = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T;

/** The round's outcome row and its human votes, read from the arena store without changing it. */
function roundRecord(file: string, roundId: string) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const outcome = db.prepare('SELECT status, void_reason FROM outcomes WHERE round_id = ?').get(roundId) as
      { status: string; void_reason: string | null } | undefined;
    const { n } = db
      .prepare("SELECT COUNT(*) AS n FROM votes WHERE round_id = ? AND source = 'human'")
      .get(roundId) as { n: number };
    return { outcome: outcome ?? null, humanVotes: n };
  } finally {
    db.close();
  }
}

const lessonOf = async (dir: string, roundId: string) =>
  (await json<TeacherLessonsResponse>(join(dir, 'site/api/teacher-lessons.php'))).latest_lessons.find(
    (lesson) => lesson.round_id === roundId,
  );

/** A run that could not read the vote store: published, degraded with the reason in both records, said once. */
async function expectDegradedByVotes(dir: string, state: string, run: Finished): Promise<void> {
  expect(run.code, run.stderr).toBe(1); // published, but the operator has something to fix
  const lines = run.stderr.split('\n').filter((line) => /vote store/.test(line));
  expect(lines, run.stderr).toEqual([expect.stringMatching(/^emi: .*could not be read/)]);
  const report = await json<RunReport>(join(dir, state, 'last-run.json'));
  expect(report.status).toBe('degraded');
  expect(report.error).toMatch(/vote store .*could not be read/);
  const status = await json<RunStatus>(join(dir, 'site/status.json'));
  expect(status.status).toBe('degraded');
  // The same line, the server's paths shown from the working folder (the public status names none of its own).
  expect(status.last_run.error).toBe(report.error?.replaceAll(`${dir}/`, ''));
  expect(status.last_run.error).not.toContain(dir);
}

describe('signed votes a run could not read are counted once the vote store is back', () => {
  it('through the export route: the round waits for them, and counts them within its resolution window', async () => {
    const dir = await tempDir();
    const { url } = await startPaywall(dir, 'pw');
    const round = roundAhead();
    await castVotes(url, round, 3);
    const unreachable = `http://127.0.0.1:${await freePort()}`;

    // The audit's runs: the Worker unreachable while the round plays and when it ends.
    for (const asOf of [round.start + MINUTE, round.end + MINUTE]) {
      await expectDegradedByVotes(dir, 'var', await generate(dir, asOf, 'var', unreachable));
    }
    // Its votes may be in the store no run could read: the round is not resolved as if it had none.
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id)).toEqual({ outcome: null, humanVotes: 0 });
    expect(await lessonOf(dir, round.id)).toBeUndefined();

    const back = await generate(dir, round.end + 2 * MINUTE, 'var', url);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).not.toMatch(/refused|already resolved/);
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id)).toEqual({
      outcome: { status: 'resolved', void_reason: null },
      humanVotes: 3,
    });
    expect((await lessonOf(dir, round.id))?.provenance).toMatchObject({ human_votes: 3 });
    expect(await json<RunReport>(join(dir, 'var/last-run.json'))).toMatchObject({
      status: 'ok',
      error: null,
    });
  }, 120_000);

  it('through the export route: past the resolution window the round is voided, saying why, never scored without them', async () => {
    const dir = await tempDir();
    const { url } = await startPaywall(dir, 'pw');
    const round = roundAhead();
    await castVotes(url, round, 3);
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    for (const asOf of [round.start + MINUTE, round.end + MINUTE, round.end + 10 * MINUTE]) {
      await expectDegradedByVotes(dir, 'var', await generate(dir, asOf, 'var', unreachable));
    }
    const late = round.end + (RESOLVE_WINDOW_MINUTES + 5) * MINUTE;
    const back = await generate(dir, late, 'var', url);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).not.toMatch(/refused|already resolved/);
    const record = roundRecord(join(dir, 'var/arena.sqlite'), round.id);
    expect(record.humanVotes).toBe(3); // the votes are kept, as accepted
    expect(record.outcome).toEqual({
      status: 'voided',
      void_reason: expect.stringMatching(/votes could not be read within 15 minutes of its end/),
    });
    expect(await lessonOf(dir, round.id)).toBeUndefined(); // no lesson scored without its votes
    const shared = await json<SharedIntelligenceResponse>(
      join(dir, 'site/arena/get_shared_intelligence.php'),
    );
    const events = shared.events.recent;
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'round_voided',
        round_id: round.id,
        detail: expect.stringMatching(/votes could not be read/),
      }),
    );
  }, 120_000);

  it('reads every vote of a backlog larger than one export page before resolving the round', async () => {
    const dir = await tempDir();
    const { url } = await startPaywall(dir, 'pw');
    const round = roundAhead();
    const first = await generate(dir, round.start + MINUTE, 'var', url);
    expect(first.code, first.stderr).toBe(0);
    // 1200 votes taken before the round closed, more than the 1000 an export answer holds. Written to the
    // paywall's own store, which the running paywall exports (the generator does not check signatures again).
    const votes = openSqliteVoteStore(join(dir, 'pw/arena-votes.sqlite'));
    for (let i = 0; i < 1200; i++) {
      const address = `WALLET${i}`;
      const vote = {
        address,
        asset: round.asset,
        prediction: 'BEARISH',
        roundId: round.id,
        nonce: `nonce-${i}-0123456789`,
        receivedAt: Date.now(),
        form: 'data' as const,
        signature: Buffer.from(`signature-${i}`).toString('base64'),
      };
      expect(await votes.add(vote)).toBe('added');
    }
    votes.close();
    const end = await generate(dir, round.end + MINUTE, 'var', url);
    expect(end.code, end.stderr).toBe(0);
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id)).toEqual({
      outcome: { status: 'resolved', void_reason: null },
      humanVotes: 1200,
    });
    const after = await generate(dir, round.end + 2 * MINUTE, 'var', url);
    expect(after.stderr).not.toMatch(/refused|already resolved/);
  }, 120_000);

  it('from the Node vote store file: a file that went missing holds the round until it is back', async () => {
    const dir = await tempDir();
    const round = roundAhead();
    const voteFile = join(dir, 'var/arena-votes.sqlite');
    // The paywall and the generator share the state folder, as `emi up` and the nginx recipe run them.
    const paywall = await startPaywall(dir, 'var');
    const first = await generate(dir, round.start - 30 * MINUTE, 'var');
    expect(first.code, first.stderr).toBe(0);
    await castVotes(paywall.url, round, 3);
    await paywall.close();

    // Moved away (a restore in progress, a volume not mounted) for the runs around the round's end.
    renameSync(voteFile, `${voteFile}.away`);
    for (const asOf of [round.start + MINUTE, round.end + MINUTE]) {
      const run = await generate(dir, asOf, 'var');
      await expectDegradedByVotes(dir, 'var', run);
      expect(run.stderr).toMatch(/arena-votes\.sqlite could not be read \(the file is missing/);
    }
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id).outcome).toBeNull();

    renameSync(`${voteFile}.away`, voteFile);
    const back = await generate(dir, round.end + 2 * MINUTE, 'var');
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).not.toMatch(/refused|already resolved/);
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id)).toEqual({
      outcome: { status: 'resolved', void_reason: null },
      humanVotes: 3,
    });
  }, 120_000);

  it('from the Node vote store file: one that cannot be read is the vote store’s problem, never the arena store’s', async () => {
    const dir = await tempDir();
    const round = roundAhead();
    const voteFile = join(dir, 'var/arena-votes.sqlite');
    const paywall = await startPaywall(dir, 'var');
    await castVotes(paywall.url, round, 2);
    await paywall.close();
    const first = await generate(dir, round.start + MINUTE, 'var');
    expect(first.code, first.stderr).toBe(0);

    renameSync(voteFile, `${voteFile}.good`);
    await import('node:fs/promises').then((fs) => fs.writeFile(voteFile, 'not a database '.repeat(100)));
    const run = await generate(dir, round.end + MINUTE, 'var');
    await expectDegradedByVotes(dir, 'var', run);
    expect(run.stderr).not.toMatch(/arena store/);
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id).outcome).toBeNull();

    rmSync(voteFile);
    renameSync(`${voteFile}.good`, voteFile);
    const back = await generate(dir, round.end + 2 * MINUTE, 'var');
    expect(back.code, back.stderr).toBe(0);
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id)).toEqual({
      outcome: { status: 'resolved', void_reason: null },
      humanVotes: 2,
    });
  }, 120_000);
});

describe('the Cloudflare Worker (its Durable Object vote store, in wrangler dev)', () => {
  it('a token that no longer matches holds the round like an outage; the right one counts its votes', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist/index.html'), '<!doctype html><title>home</title>');
    const facilitator = await startDevFacilitator();
    cleanups.push(() => facilitator.close());
    const payTo = algosdk.generateAccount().addr.toString();
    facilitator.ledger.optIn(payTo);
    const worker = await startTestWorker({
      persistTo: join(dir, 'wrangler'),
      assetsDir: join(dir, 'dist'),
      payTo,
      facilitatorUrl: facilitator.url,
      vars: { EMI_VOTE_EXPORT_TOKEN: TOKEN },
    });
    cleanups.push(() => worker.stop());
    const round = roundAhead();
    await castVotes(worker.url, round, 3, worker.url);

    // EMI_VOTE_EXPORT_TOKEN rotated on the Worker but not yet on the generator's machine.
    for (const asOf of [round.start + MINUTE, round.end + MINUTE]) {
      const run = await generate(dir, asOf, 'var', worker.url, 'the-old-token');
      await expectDegradedByVotes(dir, 'var', run);
      expect(run.stderr).toMatch(/answered 401: EMI_VOTE_EXPORT_TOKEN does not match/);
    }
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id).outcome).toBeNull();

    const back = await generate(dir, round.end + 2 * MINUTE, 'var', worker.url);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).not.toMatch(/refused|already resolved/);
    expect(roundRecord(join(dir, 'var/arena.sqlite'), round.id)).toEqual({
      outcome: { status: 'resolved', void_reason: null },
      humanVotes: 3,
    });
  }, 180_000);
});

describe('which rounds wait for a vote store that cannot be read', () => {
  it('only those that took votes after it was last read whole; the others resolve as usual', async () => {
    const dir = await tempDir();
    const voteFile = join(dir, 'arena-votes.sqlite');
    const arena = openArenaStore(join(dir, 'arena.sqlite'));
    cleanups.push(() => arena.close());
    const first = roundAt(T0);
    const second = roundAt(T0 + HOUR);
    const runAt = async (asOf: number) => {
      const { unread } = await importFromVoteFile(arena, voteFile, asOf);
      runArenaStep({
        store: arena,
        asOf,
        clock: { asOf, generatedAt: asOf, nextUpdateDue: asOf + MINUTE },
        mode: 'simulated',
        seed: 7,
        brainCalls: callsFor('bullish', 60, 100),
        prices: pricesAll(100),
        ...(unread && { unreadVotes: { readThrough: unread.readThrough } }),
      });
      return unread;
    };
    openSqliteVoteStore(voteFile).close(); // the vote endpoint's store, empty
    expect(await runAt(T0 + 2 * MINUTE)).toBeNull(); // read whole after the first round closed to votes
    rmSync(voteFile);
    // Unreadable from the first round's end: it took no vote after the last read, so it resolves; the second round
    // (closed to votes after that read) waits, and is voided once its resolve window is over.
    for (const asOf of [T0 + HOUR + MINUTE, T0 + 2 * HOUR + MINUTE, T0 + 2 * HOUR + 16 * MINUTE]) {
      expect((await runAt(asOf))?.problem).toMatch(/could not be read \(the file is missing/);
    }
    const outcome = (roundId: string) =>
      arena.db.prepare('SELECT status, void_reason FROM outcomes WHERE round_id = ?').get(roundId);
    expect(outcome(first.id)).toEqual({ status: 'resolved', void_reason: null });
    expect(outcome(second.id)).toEqual({
      status: 'voided',
      void_reason: expect.stringMatching(/votes could not be read within 15 minutes of its end/),
    });
  });
});
