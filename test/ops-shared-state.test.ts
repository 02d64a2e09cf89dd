// Processes sharing one state folder: a repair never moves the store from under a run, one scheduler per state
// folder, a restart that overlaps the old process's stop, and two claimants of a lock left by a dead process.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openArenaStore } from '../generator/state/store.ts';
import { integrityOf } from '../generator/state/repair.ts';
import { claimInstance, instanceLockFile } from '../generator/state/instance-lock.ts';
import { startEmi } from './ops-cli.ts';
import type { Running, StartOptions } from './ops-cli.ts';
import { freePort } from './free-port.ts';
import { tempDir } from './helpers/temp-dir.ts';

/**
 * Every process a test starts, killed after it even when it failed or timed out: an `emi up` left running keeps its
 * port and its state folder's instance lock, and fails every later run of this file.
 */
const started: ChildProcess[] = [];
const tracked = <T extends ChildProcess>(child: T): T => (started.push(child), child);
afterEach(async () => {
  await Promise.all(
    started.splice(0).map(async (child) => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      const closed = new Promise((resolvePromise) => child.once('close', resolvePromise));
      child.kill('SIGKILL');
      await closed;
    }),
  );
});

/** startEmi, killed after the test if still running. */
const start = (cwd: string, args: string[], options: StartOptions = {}): Running => {
  const running = startEmi(cwd, args, {}, options);
  tracked(running.child);
  return running;
};
const runEmi = (cwd: string, args: string[], options: StartOptions = {}) => start(cwd, args, options).done;

/** Free loopback ports, none handed out twice in this file (`emi up` takes two: its site and its facilitator). */
const handedOut = new Set<number>();
async function newPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A store that opens and runs but fails its integrity check: an index lost its entry (as a torn write leaves it). */
function damagedButOpening(file: string): void {
  const store = openArenaStore(file);
  store.db.exec("CREATE TABLE t (x TEXT UNIQUE); INSERT INTO t VALUES ('a')");
  const { rootpage } = store.db
    .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_t_1'")
    .get() as { rootpage: number };
  const size = store.db.pragma('page_size', { simple: true }) as number;
  store.close();
  // The index's page rewritten as an empty leaf: the row is still in the table, no longer in its index.
  const fd = openSync(file, 'r+');
  writeSync(
    fd,
    Buffer.from([0x0a, 0, 0, 0, 0, (size >> 8) & 0xff, size & 0xff, 0]),
    0,
    8,
    (rootpage - 1) * size,
  );
  closeSync(fd);
}

/** A process that stays alive until killed: a run holding the lock, as far as its pid says. */
function liveProcess(): ChildProcessWithoutNullStreams {
  return tracked(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']));
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = tracked(spawn(process.execPath, ['-e', '']));
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid!;
}

describe('emi arena repair while a run holds the lock inside the store', () => {
  it('refuses, naming the run, and moves nothing; once the run has gone it repairs', async () => {
    const dir = await tempDir('emi-shared-');
    const store = join(dir, 'arena.sqlite');
    damagedButOpening(store);
    expect(integrityOf(store)).toMatch(/row 1 missing from index/);
    const run = liveProcess();
    try {
      const owner = `${os.hostname()}:${run.pid}:0123abcd`;
      const db = new Database(store);
      db.prepare('INSERT INTO run_lock (id, owner, acquired_at_ms, expires_at_ms) VALUES (1, ?, ?, ?)').run(
        owner,
        Date.now(),
        Date.now() + 60_000,
      );
      db.close();
      const before = (await readdir(dir)).sort();
      const refused = await runEmi(dir, ['arena', 'repair', '--state', dir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^emi arena: repair refused, nothing was moved: .*try again after it finishes \\(pid ${run.pid} on `,
        ),
      );
      expect((await readdir(dir)).sort()).toEqual(before);
      const after = new Database(store, { readonly: true });
      expect(after.prepare('SELECT owner FROM run_lock').all()).toEqual([{ owner }]);
      after.close();
    } finally {
      run.kill('SIGKILL');
      await new Promise((resolve) => run.on('close', resolve));
    }
    const repaired = await runEmi(dir, ['arena', 'repair', '--state', dir]);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toMatch(/was damaged .* saved it as arena\.sqlite\.damaged-/);
  }, 60_000);
});

/** `emi up` on `ports` (its site's, its facilitator's), publishing to `dist`. */
const upArgs = (ports: readonly [number, number], dist = 'dist'): string[] => [
  'up',
  '--port',
  String(ports[0]),
  '--dev-facilitator-port',
  String(ports[1]),
  '--dist',
  dist,
  '--backfill-days',
  '0',
  '--cron',
  '0 0 1 1 *',
];

describe('a second scheduler on the same state folder', () => {
  it('is refused at start, emi schedule and emi up alike, naming the emi up that uses it', async () => {
    const dir = await tempDir('emi-shared-');
    const ports = [await newPort(), await newPort()] as const;
    const first = start(dir, upArgs(ports));
    try {
      await first.waitFor(`site: http://127.0.0.1:${ports[0]}/`);
      // Killed after a minute if not refused (a second scheduler that started runs until stopped).
      const bounded = { timeoutMs: 60_000 };
      const secondPorts = [await newPort(), await newPort()] as const;
      const [schedule, up] = await Promise.all([
        runEmi(
          dir,
          ['schedule', '--base-url', 'https://emi.test', '--dist', 'dist2', '--cron', '0 0 1 1 *'],
          bounded,
        ),
        runEmi(dir, upArgs(secondPorts, 'dist3'), bounded),
      ]);
      for (const second of [schedule, up]) {
        expect(second.code).toBe(1);
        expect(second.stderr).toMatch(
          new RegExp(
            `^emi: emi up is already running for ${escape(dir)}/var \\(pid ${first.child.pid} on .+, ` +
              `http://127\\.0\\.0\\.1:${ports[0]}, since .+\\): stop it first .*another --state`,
            'm',
          ),
        );
        expect(second.stdout).not.toMatch(/scheduled:|site:/);
      }
      expect(first.child.exitCode).toBeNull();
    } finally {
      first.stop();
      await first.done;
    }
  }, 240_000);
});

/** Sends a request's head and part of its body, and no more: the server holds it in flight until the socket goes. */
async function requestInFlight(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((done, fail) => socket.once('connect', done).once('error', fail));
  socket.write(
    'POST /arena/vote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Content-Length: 100\r\n\r\n{"ro',
  );
  return socket;
}

describe('a restart that overlaps the old process stopping (emi up stopped, new one started)', () => {
  it('the old one says in its claims that it is stopping; the new one waits for it to go, then runs', async () => {
    const dir = await tempDir('emi-shared-');
    const ports = [await newPort(), await newPort()] as const;
    const old = start(dir, upArgs(ports));
    await old.waitFor(/scheduled:/);
    // A request still in flight holds the old server's close: the old process stays stopping until it ends.
    const socket = await requestInFlight(ports[0]);
    old.stop();
    const claims = [instanceLockFile(join(dir, 'dist')), join(dir, 'var', 'scheduler.json')];
    const marked = async () =>
      (await Promise.all(claims.map((file) => readFile(file, 'utf8')))).every(
        (text) => (JSON.parse(text) as { stopping_since?: string }).stopping_since !== undefined,
      );
    while (!(await marked())) await sleep(20); // the test's timeout bounds it
    const next = start(dir, upArgs(ports), { timeoutMs: 120_000 });
    try {
      await next.waitFor(
        `emi: emi up (pid ${old.child.pid}) holds ${dir}/dist and is stopping: waiting up to 20 s for it to end`,
      );
      expect(old.child.exitCode).toBeNull();
      socket.destroy();
      expect((await old.done).code).toBe(0);
      await next.waitFor(`site: http://127.0.0.1:${ports[0]}/`);
    } finally {
      socket.destroy();
      old.stop();
      next.stop();
      await Promise.all([old.done, next.done]);
    }
  }, 240_000);
});

/**
 * A process holding `folder`'s instance lock that, like `emi up`, marks its claims as stopping on SIGTERM and takes a
 * moment to end (`stopMs`; never when null). It prints "claimed", then "stopping" once marked.
 */
function stoppingHolder(
  folder: string,
  stopMs: number | null,
): { child: ChildProcessWithoutNullStreams; claimed: Promise<void>; stopping: Promise<void> } {
  const script = `
    const { claimInstance } = await import(${JSON.stringify(resolve('generator/state/instance-lock.ts'))});
    const { markClaimsStopping } = await import(${JSON.stringify(resolve('generator/state/claims-held.ts'))});
    await claimInstance({ folder: ${JSON.stringify(folder)}, port: 0, host: '127.0.0.1', command: 'up' });
    process.on('SIGTERM', () => {
      markClaimsStopping();
      console.log('stopping');
      ${stopMs === null ? '' : `setTimeout(() => process.exit(0), ${stopMs});`}
    });
    setInterval(() => {}, 1000);
    console.log('claimed');`;
  const child = tracked(spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]));
  const said = (word: string) => {
    const saying = new Promise<void>((resolvePromise, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes(word)) resolvePromise();
      });
      child.on('close', () => reject(new Error(`the holder ended before it said "${word}"`)));
    });
    saying.catch(() => undefined); // awaited only by the tests that stop the holder
    return saying;
  };
  return { child, claimed: said('claimed'), stopping: said('stopping') };
}

const claimDist = (folder: string, options: { waitMs?: number; graceMs?: number; lines?: string[] } = {}) =>
  claimInstance({
    folder,
    port: 0,
    host: '127.0.0.1',
    command: 'up',
    waitMs: options.waitMs,
    graceMs: options.graceMs,
    notice: (line) => options.lines?.push(line),
  });

describe('claiming a folder whose instance is still alive', () => {
  it('waits for one that says it is stopping, saying so, then takes the folder over', async () => {
    const folder = join(await tempDir('emi-shared-'), 'dist');
    const holder = stoppingHolder(folder, 1500);
    await holder.claimed;
    holder.child.kill('SIGTERM');
    await holder.stopping;
    const lines: string[] = [];
    const lock = await claimDist(folder, { lines });
    try {
      expect(JSON.parse(await readFile(lock.file, 'utf8'))).toMatchObject({ pid: process.pid });
      expect(lines).toEqual([
        `emi up (pid ${holder.child.pid}) holds ${folder} and is stopping: waiting up to 20 s for it to end`,
      ]);
    } finally {
      lock.release();
    }
  }, 60_000);

  it('waits for one asked to stop while the claim was being made (a signal marked within the grace)', async () => {
    const folder = join(await tempDir('emi-shared-'), 'dist');
    const holder = stoppingHolder(folder, 500);
    await holder.claimed;
    const claiming = claimDist(folder, { graceMs: 10_000 });
    await sleep(300); // the claim has found the holder running and not stopping
    holder.child.kill('SIGTERM');
    const lock = await claiming;
    try {
      expect(JSON.parse(await readFile(lock.file, 'utf8'))).toMatchObject({ pid: process.pid });
    } finally {
      lock.release();
    }
  }, 60_000);

  it('refuses one that is not stopping once the grace has passed, without the longer wait or a notice', async () => {
    const folder = join(await tempDir('emi-shared-'), 'dist');
    const holder = stoppingHolder(folder, null);
    await holder.claimed;
    const lines: string[] = [];
    // A wait longer than this test's timeout: were it used for a holder not stopping, the test would time out.
    await expect(claimDist(folder, { graceMs: 300, waitMs: 600_000, lines })).rejects.toThrow(
      new RegExp(
        `^emi up is already running for ${escape(folder)} \\(pid ${holder.child.pid} on .*\\): ` +
          'stop it first, or use other folders and --port$',
      ),
    );
    expect(lines).toEqual([]);
    expect(JSON.parse(await readFile(instanceLockFile(folder), 'utf8'))).toMatchObject({
      pid: holder.child.pid,
    });
  }, 60_000);

  it('refuses one that does not finish stopping within the wait, saying it waited', async () => {
    const folder = join(await tempDir('emi-shared-'), 'dist');
    const holder = stoppingHolder(folder, null);
    await holder.claimed;
    holder.child.kill('SIGTERM');
    await holder.stopping;
    const lines: string[] = [];
    await expect(claimDist(folder, { waitMs: 1000, lines })).rejects.toThrow(
      new RegExp(
        `^emi up is already running for .*\\(pid ${holder.child.pid} on .*\\(waited 1 s for it to finish stopping\\)$`,
      ),
    );
    expect(lines).toEqual([
      `emi up (pid ${holder.child.pid}) holds ${folder} and is stopping: waiting up to 1 s for it to end`,
    ]);
  }, 60_000);
});

/**
 * A process that claims a lock when told, one command a line on stdin, one answer a line on stdout:
 * `instance <folder>` claims the folder's instance lock without waiting, `runlock <file>` takes the file run lock and
 * holds it: "won", or "lost: <why>"; `release` lets go of what it holds: "released".
 */
const CLAIMANT = `const { createInterface } = await import('node:readline');
const { claimInstance } = await import(${JSON.stringify(resolve('generator/state/instance-lock.ts'))});
const { runOwner, withFileRunLock } = await import(${JSON.stringify(resolve('generator/state/lock.ts'))});
const held = { release: async () => undefined };
const say = (line) => void process.stdout.write(line + '\\n');
const why = (error) => 'lost: ' + error.message.split('\\n')[0];
async function instance(folder) {
  let lock;
  try {
    lock = await claimInstance({ folder, port: 0, host: '127.0.0.1', command: 'up', waitMs: 0, graceMs: 0 });
  } catch (error) {
    return say(why(error));
  }
  held.release = async () => lock.release();
  say('won');
}
async function runLock(file) {
  let letGo;
  const holding = new Promise((resolve) => (letGo = resolve));
  let won = false;
  const done = withFileRunLock(file, runOwner(), () => { won = true; say('won'); return holding; }, { notice: () => undefined });
  held.release = async () => { letGo(); await done.catch(() => undefined); };
  await done.catch((error) => { if (!won) say(why(error)); });
}
for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument = ''] = line.split(' ');
  if (command === 'instance') await instance(argument);
  else if (command === 'runlock') void runLock(argument);
  else if (command === 'release') {
    const release = held.release;
    held.release = async () => undefined;
    await release();
    say('released');
  }
}`;

function claimant(): { ask(line: string): Promise<string>; end(): Promise<void> } {
  const child = tracked(spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CLAIMANT]));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async ask(line) {
      child.stdin.write(`${line}\n`);
      const next = await lines.next();
      if (next.done) throw new Error('the claimant ended');
      return next.value;
    },
    async end() {
      child.stdin.end();
      await new Promise((resolve) => child.on('close', resolve));
    },
  };
}

describe('two processes taking over the same lock left by a dead process, at once', () => {
  const TRIALS = 20;

  it.each([
    [
      'the instance lock',
      'instance',
      async (dir: string, pid: number) => {
        const folder = join(dir, 'dist');
        const info = { pid, host: os.hostname(), command: 'up', folder, port: 0, url: null, started_at: '' };
        await writeFile(instanceLockFile(folder), JSON.stringify(info));
        return folder;
      },
    ],
    [
      'the file run lock',
      'runlock',
      async (dir: string, pid: number) => {
        const file = join(dir, 'run.lock');
        await writeFile(file, `${os.hostname()}:${pid}:0123abcd`);
        return file;
      },
    ],
  ] as const)(
    '%s: exactly one wins, every time',
    async (_name, command, stale) => {
      const dir = await tempDir('emi-shared-');
      const pid = await deadPid();
      const [a, b] = [claimant(), claimant()];
      try {
        for (let trial = 0; trial < TRIALS; trial++) {
          const target = await stale(dir, pid);
          const answers = await Promise.all([a.ask(`${command} ${target}`), b.ask(`${command} ${target}`)]);
          expect(
            answers.filter((answer) => answer === 'won'),
            `trial ${trial}: ${answers.join(' | ')}`,
          ).toHaveLength(1);
          expect(await Promise.all([a.ask('release'), b.ask('release')])).toEqual(['released', 'released']);
        }
      } finally {
        await Promise.all([a.end(), b.end()]);
      }
    },
    120_000,
  );
});
