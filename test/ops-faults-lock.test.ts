// A run that crashed while its parent did not reap it is a zombie: kill(pid, 0) still succeeds on it, yet it will
// never renew nor release its run lock. The next run must take the lock over at once, not wait for the heartbeat.
// The zombie is real: a small node parent spawns `true` and then blocks its event loop reading stdin, so the exited
// child is not reaped (node reaps children from its event loop); closing the parent's stdin lets it reap the child
// and end (a zombie handed to PID 1 might never be reaped in a container).
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { linuxProcessState, processIsAlive } from '../generator/state/lock.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { generateArgs, runEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const onLinux = process.platform === 'linux';

interface Zombie {
  pid: number;
  /** Lets the parent reap it; resolves once the parent has ended. */
  reap(): Promise<void>;
}

const parents: ChildProcessWithoutNullStreams[] = [];

/** The state letter in /proc/<pid>/stat, read here independently of the code under test. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** Prints the pid of a child that exits at once, then blocks (without reaping it) until stdin closes. */
const ZOMBIE_PARENT = `
const child = require('node:child_process').spawn('true', { stdio: 'ignore' });
child.once('spawn', () => {
  process.stdout.write(child.pid + '\\n');
  require('node:fs').readSync(0, Buffer.alloc(1));
});`;

async function zombie(): Promise<Zombie> {
  const parent = spawn(process.execPath, ['-e', ZOMBIE_PARENT]);
  parents.push(parent);
  const ended = new Promise<void>((resolve) => parent.once('close', () => resolve()));
  const pid = await new Promise<number>((resolve) =>
    parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
  );
  // The child exits on its own; wait (by polling its state, no time limit) until it has.
  while (stateOf(pid) !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10));
  return {
    pid,
    reap: async () => {
      parent.stdin.end();
      await ended;
    },
  };
}

afterEach(async () => {
  for (const parent of parents.splice(0)) {
    parent.stdin.end();
    if (parent.exitCode === null && parent.signalCode === null) {
      await new Promise((resolve) => parent.once('close', resolve));
    }
  }
});

describe.skipIf(!onLinux)('a run lock held by a zombie process', () => {
  it('the zombie counts as gone, though kill(pid, 0) still reaches it', async () => {
    const z = await zombie();
    expect(() => process.kill(z.pid, 0)).not.toThrow(); // why kill(pid, 0) alone is not enough
    expect(linuxProcessState(z.pid)).toBe('Z');
    expect(processIsAlive(z.pid)).toBe(false);
    expect(processIsAlive(process.pid)).toBe(true);
    await z.reap();
    expect(stateOf(z.pid)).toBeNull(); // cleaned up: reaped by its parent
  });

  it('emi generate takes the lock over at once and publishes', async () => {
    const dir = await tempDir('emi-zombie-');
    const first = await runEmi(dir, generateArgs('2026-11-21T12:00:00Z'));
    expect(first.code, first.stderr).toBe(0);

    const z = await zombie();
    const store = openArenaStore(join(dir, 'var/arena.sqlite'));
    try {
      // A fresh heartbeat: only the holder's state can tell that the lock is abandoned.
      const now = Date.now();
      store.db
        .prepare('INSERT INTO run_lock (id, owner, acquired_at_ms, expires_at_ms) VALUES (1, ?, ?, ?)')
        .run(`${os.hostname()}:${z.pid}:0123abcd`, now, now + 10 * 60_000);
    } finally {
      store.close();
    }

    const second = await runEmi(dir, generateArgs('2026-11-21T13:00:00Z'));
    await z.reap();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      new RegExp(`^emi: took over the run lock of pid ${z.pid} on .+: its process ${z.pid} is gone$`, 'm'),
    );
    const regime = JSON.parse(readFileSync(join(dir, 'site/api/market-regime.php'), 'utf8')) as {
      updated: string;
    };
    expect(regime.updated).toBe('2026-11-21T13:00:00.000Z');
  }, 120_000);
});
