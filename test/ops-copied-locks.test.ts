// Instance locks that came with a copied folder or from another machine (a move, a restored backup, a dead host):
// a lock that is not the file its holder wrote (a copy) is taken over; one written on another host is taken over
// once its holder stopped touching it, and otherwise refused with the file to delete; the holder's own file reached
// through another spelling (a symlink; a bind mount is the same) is still the holder's.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { writeNamingItself } from '../generator/state/claims-held.ts';
import {
  claimInstance,
  claimStateFolder,
  INSTANCE_HEARTBEAT_MS,
  schedulerLockFile,
  type InstanceInfo,
  type InstanceLock,
} from '../generator/state/instance-lock.ts';
import { UP_ON_FREE_PORTS, startEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const children: ChildProcess[] = [];
const locks: InstanceLock[] = [];
afterEach(() => {
  for (const lock of locks.splice(0)) lock.release();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A process that stays alive: the holder a lock names, as far as its pid says. */
function liveProcess(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
  children.push(child);
  return child.pid!;
}

/**
 * Writes the scheduler lock of `state` as another instance would have, last touched `ageMs` ago: its own file
 * (file_id naming the file), or a copy of another (`copied`: file_id naming a file that is not this one).
 */
async function writeLock(
  state: string,
  over: Partial<InstanceInfo>,
  { ageMs = 0, copied = false }: { ageMs?: number; copied?: boolean } = {},
): Promise<string> {
  await mkdir(state, { recursive: true });
  const file = schedulerLockFile(state);
  const info: Omit<InstanceInfo, 'file_id'> = {
    pid: liveProcess(),
    host: os.hostname(),
    command: 'up',
    folder: state,
    port: 0,
    url: 'http://127.0.0.1:8080',
    started_at: '2026-11-20T10:00:00.000Z',
    heartbeat_ms: INSTANCE_HEARTBEAT_MS,
    ...over,
  };
  writeNamingItself(file, (fileId) => `${JSON.stringify({ ...info, file_id: copied ? '0:0' : fileId })}\n`);
  const touched = new Date(Date.now() - ageMs);
  await utimes(file, touched, touched);
  return file;
}

const claim = async (state: string) => {
  const lock = await claimStateFolder(state, 'up', { notice: () => undefined });
  locks.push(lock);
  return lock;
};

const holder = async (file: string) => (JSON.parse(await readFile(file, 'utf8')) as InstanceInfo).pid;

describe('a lock copied with its folder', () => {
  it('is not the file its holder wrote (a restored or moved state): taken over, although its pid runs here', async () => {
    const state = join(await tempDir('emi-copied-lock-'), 'var');
    const file = await writeLock(state, { folder: '/srv/old-machine/var' }, { copied: true });
    await claim(state);
    expect(await holder(file)).toBe(process.pid);
  });

  it('the holder’s own file reached through a symlink: still the holder’s, refused', async () => {
    const dir = await tempDir('emi-copied-lock-');
    const state = join(dir, 'var');
    await writeLock(state, {});
    await symlink(state, join(dir, 'data'));
    await expect(claimStateFolder(join(dir, 'data'), 'up', { waitMs: 0, graceMs: 0 })).rejects.toThrow(
      /emi up is already running for .*\/var \(pid \d+ on /,
    );
  });
});

describe('a lock written on another host', () => {
  it('not touched for five heartbeats (a dead machine): taken over', async () => {
    const state = join(await tempDir('emi-copied-lock-'), 'var');
    const file = await writeLock(
      state,
      { host: 'old-machine', pid: 4242 },
      { ageMs: 6 * INSTANCE_HEARTBEAT_MS },
    );
    await claim(state);
    expect(await holder(file)).toBe(process.pid);
  });

  it('touched lately: refused, naming the host and the file to delete if emi no longer runs there', async () => {
    const state = join(await tempDir('emi-copied-lock-'), 'var');
    const file = await writeLock(state, { host: 'old-machine', pid: 4242 }, { ageMs: INSTANCE_HEARTBEAT_MS });
    await expect(claimStateFolder(state, 'up', { waitMs: 0, graceMs: 0 })).rejects.toThrow(
      `; the lock was written on host old-machine: if emi no longer runs there on this folder, delete ${file}`,
    );
    expect(await holder(file)).toBe(4242);
  });

  it('by an emi without the heartbeat: refused however old, with the same remedy', async () => {
    const state = join(await tempDir('emi-copied-lock-'), 'var');
    const file = await writeLock(
      state,
      { host: 'old-machine', pid: 4242, heartbeat_ms: undefined },
      { ageMs: 30 * 24 * 3_600_000 },
    );
    await expect(claimStateFolder(state, 'up', { waitMs: 0, graceMs: 0 })).rejects.toThrow(`delete ${file}`);
  });
});

describe('the heartbeat', () => {
  it('touches the lock file while it is held', async () => {
    const folder = join(await tempDir('emi-copied-lock-'), 'dist');
    const lock = await claimInstance({
      folder,
      port: 0,
      host: '127.0.0.1',
      command: 'serve',
      heartbeatMs: 50,
    });
    locks.push(lock);
    const past = new Date(Date.now() - 3_600_000);
    await utimes(lock.file, past, past);
    await sleep(300);
    expect((await stat(lock.file)).mtimeMs).toBeGreaterThan(past.getTime() + 3_000_000);
    expect(JSON.parse(await readFile(lock.file, 'utf8'))).toMatchObject({ heartbeat_ms: 50 });
  });
});

describe('emi up on a state folder restored from another machine (the real CLI)', () => {
  it('starts: the copied scheduler.json and served folder’s lock are copies of the old machine’s', async () => {
    const dir = await tempDir('emi-copied-lock-');
    // Copied just now (a fresh modification time), from a holder that touched them a moment before the copy.
    await writeLock(
      join(dir, 'var'),
      { folder: '/srv/old-machine/var', host: 'old-machine', pid: 4242 },
      { copied: true },
    );
    await writeFile(
      join(dir, '.dist.instance.json'),
      JSON.stringify({
        pid: 4242,
        host: 'old-machine',
        command: 'up',
        folder: '/srv/old-machine/dist',
        port: 8080,
        heartbeat_ms: INSTANCE_HEARTBEAT_MS,
        file_id: '0:0',
      }),
    );
    const up = startEmi(dir, [...UP_ON_FREE_PORTS]);
    try {
      await up.waitFor(/site: http:\/\/127\.0\.0\.1:\d+\//);
      expect(await holder(join(dir, 'var', 'scheduler.json'))).toBe(up.child.pid);
      expect(await holder(join(dir, '.dist.instance.json'))).toBe(up.child.pid);
    } finally {
      up.child.kill('SIGTERM');
      await up.done;
    }
  }, 120_000);
});
