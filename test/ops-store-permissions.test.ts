// A state folder restored by another user (`sudo cp`: root's files, 0600, or 0644) and emi run as the service's
// user: every store says, in one line, which file it cannot use, as which user, and what to do (as `emi generate`
// says it of the arena store), never SQLite's bare "unable to open database file" or "attempt to write a readonly
// database". Exit codes stay those of an unusable store (1).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { canRunAsNobody, generateArgs, runEmi, startEmi, type Finished } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { storeAccessMessage } from '../generator/state/store-access.ts';

const switching = canRunAsNobody();
if (!switching) {
  console.warn('ops-store-permissions: skipped, running a process as another user needs root and setpriv');
}

/** As runEmiAsNobody, with a deadline: a paywall that starts on a store it cannot write would never end. */
const asNobody = (cwd: string, args: string[]): Promise<Finished> =>
  startEmi(
    cwd,
    args,
    {},
    {
      wrapper: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'],
      timeoutMs: 60_000,
    },
  ).done;

const PAY_TO = 'WUIZKOX3DALYEKZCBWHXPIGHGTWBA4LSLAHUNOW7KBZ5RL3PFWJAE43NRA';
const PAYWALL_STORES = ['payments.sqlite', 'publishers.sqlite', 'arena-votes.sqlite'];

/** A published folder whose stores root made (as `sudo cp` restores them) with `mode`; the rest open to all. */
async function restoredByRoot(mode: number): Promise<string> {
  const dir = await tempDir('emi-store-perm-');
  const first = await runEmi(dir, generateArgs('2026-11-21T12:00:00Z'));
  expect(first.code, first.stderr).toBe(0);
  for (const name of PAYWALL_STORES) {
    const db = new Database(join(dir, 'var', name));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE restored (at TEXT)');
    db.close();
  }
  await writeFile(join(dir, 'votes.jsonl'), '{"asset":"BTC","prediction":"BULLISH","voter":"z"}\n');
  execFileSync('chmod', ['-R', 'a+rwX', dir]);
  for (const name of ['arena.sqlite', ...PAYWALL_STORES]) await chmod(join(dir, 'var', name), mode);
  return dir;
}

/** The one line for `what` at var/`name`, with the prefix of the command's errors. */
const refusal = (prefix: string, what: string, name: string): RegExp =>
  new RegExp(
    `^${prefix}: ${what} \\S*/var/${name} cannot be used: this user \\(uid 65534\\) may not read and write ` +
      `\\S*/var/${name}: give the user that runs emi read and write access to the file and its folder ` +
      `\\(e\\.g\\. chown -R \\S+ \\S*/var\\): a permission problem, not damage$`,
    'm',
  );

/** `emi arena vote` of one vote into the state folder `var`. */
const VOTE = ['arena', 'vote', '--asset', 'BTC', '--prediction', 'BULLISH', '--voter', 'z', '--state', 'var'];

const expectRefused = (run: Finished, line: RegExp): void => {
  expect(run.code, run.stdout + run.stderr).toBe(1);
  expect(run.stderr).toMatch(line);
  expect(run.stderr).not.toMatch(/unable to open database file|readonly database/);
};

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

const PAYWALL = ['paywall', '--state', 'var', '--host', '127.0.0.1'];

describe.skipIf(!switching)('stores restored by root (0600), emi run as another user', () => {
  it('emi paywall names the vote store, the user and the remedy', async () => {
    const dir = await restoredByRoot(0o600);
    const run = await asNobody(dir, [...PAYWALL, '--port', '20830', '--dev-facilitator-port', '20831']);
    expectRefused(run, refusal('emi', 'the arena vote store', 'arena-votes\\.sqlite'));
  }, 120_000);

  it('emi paywall with a facilitator names the payment book', async () => {
    const dir = await restoredByRoot(0o600);
    await chmod(join(dir, 'var/arena-votes.sqlite'), 0o666); // the payment book is then the first it opens
    const run = await asNobody(dir, [
      ...PAYWALL,
      '--port',
      '20832',
      '--facilitator-url',
      'http://127.0.0.1:20833',
      '--pay-to',
      PAY_TO,
    ]);
    expectRefused(run, refusal('emi', 'the payment book', 'payments\\.sqlite'));
  }, 120_000);

  it("emi publisher statement names the publishers' credit ledger", async () => {
    const dir = await restoredByRoot(0o600);
    const run = await asNobody(dir, ['publisher', 'statement', 'acme', '--state', 'var']);
    expectRefused(run, refusal('emi', "the publishers' credit ledger", 'publishers\\.sqlite'));
  }, 120_000);

  it('emi arena vote and emi arena import name the arena store', async () => {
    const dir = await restoredByRoot(0o600);
    const vote = await asNobody(dir, VOTE);
    expectRefused(vote, refusal('emi arena', 'the arena store', 'arena\\.sqlite'));
    const imported = await asNobody(dir, ['arena', 'import', 'votes.jsonl', '--state', 'var']);
    expectRefused(imported, refusal('emi arena', 'the arena store', 'arena\\.sqlite'));
  }, 120_000);
});

describe.skipIf(!switching)('stores restored by root readable by all (0644), emi run as another user', () => {
  it('emi arena vote is refused in the same line, and the store is left as it was', async () => {
    const dir = await restoredByRoot(0o644);
    const store = join(dir, 'var/arena.sqlite');
    const before = sha256(store);
    const vote = await asNobody(dir, VOTE);
    expectRefused(vote, refusal('emi arena', 'the arena store', 'arena\\.sqlite'));
    expect(sha256(store)).toBe(before);
  }, 120_000);

  it('emi paywall does not start on a vote store it could only read (every vote would fail)', async () => {
    const dir = await restoredByRoot(0o644);
    const run = await asNobody(dir, [...PAYWALL, '--port', '20834', '--dev-facilitator-port', '20835']);
    expectRefused(run, refusal('emi', 'the arena vote store', 'arena-votes\\.sqlite'));
  }, 120_000);
});

describe('a store on a read-only file system', () => {
  it('is told to mount it read-write, not to chown it (the owner is not the problem)', () => {
    const file = '/srv/emi/var/payments.sqlite';
    const readOnly = storeAccessMessage('the payment book', file, `${file} is on a read-only file system`);
    expect(readOnly).toBe(
      `the payment book ${file} cannot be used: ${file} is on a read-only file system: mount it read-write, or ` +
        'give emi a state folder on a writable one: not damage',
    );
    const denied = storeAccessMessage(
      'the payment book',
      file,
      `this user (uid 7) may not read and write ${file}`,
    );
    expect(denied).toMatch(
      /: give the user that runs emi read and write access .*\(e\.g\. chown -R \S+ \/srv\/emi\/var\)/,
    );
  });
});
