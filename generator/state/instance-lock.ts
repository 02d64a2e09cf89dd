// One `emi up` / `emi serve` per served folder, and one scheduler (`emi up`, `emi schedule`) per state folder: a
// small lock file names the running instance (pid, host, folder, port). A second instance reads it, says what is
// running and stops before touching anything; a lock left by a killed instance (its process is gone) is taken over,
// and so is one copied with its folder (not the file its holder wrote: a move, a restored backup) or written on
// another host that stopped touching it (a dead machine). A holder still alive is waited for while it says it is stopping
// (its shutdown marks the lock): a restart (`kill -TERM $OLD; emi up`) starts the new one while the old one is
// still stopping. A holder that does not say so is given a moment to (a signal is handled once its event loop is
// free), then the claim is refused. The port is probed too, so a port held by anything else is reported in words
// instead of a raw EADDRINUSE.
import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync, type Stats } from 'node:fs';
import { link, mkdir, open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertWritableFolder } from '../publish/writable.ts';
import { dropClaim, fileIdOf, holdClaim, writeNamingItself } from './claims-held.ts';
import { processIsAlive, takeOverStaleLock } from './lock.ts';

/** How long a new instance waits for a holder that says it is stopping (an old one stopping takes ~1 s). */
export const INSTANCE_WAIT_MS = 20_000;
/** How long a live holder that does not say it is stopping is given to say so before the claim is refused. */
export const INSTANCE_GRACE_MS = 2_000;
const INSTANCE_POLL_MS = 250;
/**
 * A holder touches its lock file this often. On another host its pid cannot be checked: a lock not touched for
 * HEARTBEATS_MISSED beats is a dead machine's (or a backup's), taken over; one of an emi without the beat is not.
 */
export const INSTANCE_HEARTBEAT_MS = 60_000;
const HEARTBEATS_MISSED = 5;

export interface InstanceInfo {
  pid: number;
  host: string;
  command: string;
  folder: string;
  port: number;
  url: string | null;
  started_at: string;
  /** When its shutdown began (SIGINT, SIGTERM); absent while it runs (and in claims of older emi). */
  stopping_since?: string;
  /** How often (ms) the holder touches the file; absent in claims of older emi. */
  heartbeat_ms?: number;
  /** The identity of the file this is written in (claims-held.ts fileIdOf): a copy has another. */
  file_id?: string;
}

export interface InstanceLock {
  readonly file: string;
  /** Records the address once the server listens (the port may have been 0). */
  listening(url: string): Promise<void>;
  release(): void;
}

export class InstanceRunningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstanceRunningError';
  }
}

export const instanceLockFile = (folder: string): string =>
  join(dirname(resolve(folder)), `.${basename(resolve(folder))}.instance.json`);

/** What a second instance is told to do by default (a served folder); a state folder's claim says its own. */
const FOLDER_REMEDY = 'stop it first, or use other folders and --port';

const describe = (info: InstanceInfo, remedy: string): string => {
  const where = info.url ?? (info.port === 0 ? null : `port ${info.port}`);
  return (
    `emi ${info.command} is already running for ${info.folder} (pid ${info.pid} on ${info.host}, ` +
    `${where === null ? '' : `${where}, `}since ${info.started_at}): ${remedy}`
  );
};

/**
 * The lock file: absent, or there with its instance (null when it cannot be read, e.g. not JSON) and when it was
 * last touched.
 */
type Held =
  { present: false } | { present: true; info: InstanceInfo | null; touchedMs: number; fileId: string };

async function readInstance(file: string): Promise<Held> {
  let text: string;
  let stats: Stats;
  try {
    [text, stats] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { present: false };
    throw error;
  }
  const found = { present: true as const, touchedMs: stats.mtimeMs, fileId: fileIdOf(stats) };
  try {
    return { ...found, info: JSON.parse(text) as InstanceInfo };
  } catch {
    return { ...found, info: null };
  }
}

/**
 * Whether the lock's holder still holds its folder. A lock that is not the file its holder wrote was copied with
 * the folder (a move, a backup restored): its holder, if any, holds the original. On this host the pid says
 * whether the holder runs; on another, only its heartbeat can (a lock of an older emi, without one, stands).
 */
function isLive(held: Held): held is Held & { present: true; info: InstanceInfo } {
  if (!held.present || held.info === null) return false;
  const { info } = held;
  if (info.file_id !== undefined && info.file_id !== held.fileId) return false;
  if (info.host === os.hostname()) return info.pid !== process.pid && processIsAlive(info.pid);
  return (
    info.heartbeat_ms === undefined || Date.now() - held.touchedMs < HEARTBEATS_MISSED * info.heartbeat_ms
  );
}

/** What to do about a lock written on another host that may be a dead machine's (one of an older emi). */
const otherHostHint = (info: InstanceInfo, file: string): string =>
  info.host === os.hostname()
    ? ''
    : `; the lock was written on host ${info.host}: if emi no longer runs there on this folder, delete ${file}`;

/** A file name beside `file`, unique to this call, for writing it whole before it appears under its name. */
const tempBeside = (file: string): string => `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;

/** A claim's text for the file it is written in (the file's identity is part of it). */
type ClaimText = (fileId: string) => string;

/**
 * Creates `file` with its text, failing with EEXIST if it is there. Written aside and linked into place, so a reader
 * never finds it half-written (and takes it for a killed instance's).
 */
async function createWhole(file: string, text: ClaimText): Promise<void> {
  const temp = tempBeside(file);
  writeNamingItself(temp, text);
  try {
    await link(temp, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    // A file system without hard links: created exclusively, then written.
    const handle = await open(file, 'wx');
    await handle.writeFile(text(fileIdOf(await handle.stat())));
    await handle.close();
  } finally {
    await rm(temp, { force: true });
  }
}

/** Replaces `file` with its text in one step (written aside, renamed over it). */
async function replaceWhole(file: string, text: ClaimText): Promise<void> {
  const temp = tempBeside(file);
  writeNamingItself(temp, text);
  await rename(temp, file);
}

/** Listens on host:port and closes at once: resolves with the port bound; throws a sentence when it cannot. */
function probePort(port: number, host: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new InstanceRunningError(
          error.code === 'EADDRINUSE'
            ? `port ${port} on ${host} is already in use (by another program, or an emi serve or up of other folders): choose another with --port`
            : `cannot listen on ${host}:${port}: ${error.message}`,
        ),
      ),
    );
    probe.listen(port, host, () => {
      const bound = probe.address();
      probe.close(() => resolvePromise(typeof bound === 'object' && bound ? bound.port : port));
    });
  });
}

/** Resolves when host:port can be listened on; throws a sentence when something holds it. */
export async function assertPortFree(port: number, host: string): Promise<void> {
  if (port !== 0) await probePort(port, host);
}

/**
 * A port free on `host` now, chosen by the system (`--port 0`): the published files and the paywall's answers carry
 * the base URL, so the port must be known before anything is built, not only once the server listens. Another
 * program could take it in between; the listen then says the port is in use.
 */
export const pickFreePort = (host: string): Promise<number> => probePort(0, host);

export interface ClaimOptions {
  folder: string;
  port: number;
  host: string;
  command: string;
  /** The lock file; default beside the folder (instanceLockFile). */
  file?: string;
  /** What a second instance is told to do, after what runs there. */
  remedy?: string;
  /** How long a holder that says it is stopping is waited for before the claim is refused. */
  waitMs?: number;
  /** How long a live holder that does not (yet) say it is stopping is given to say so. */
  graceMs?: number;
  /** Where the one line saying it waits goes (default stderr). */
  notice?: (line: string) => void;
  /** How often the lock file is touched (default INSTANCE_HEARTBEAT_MS; tests shorten it). */
  heartbeatMs?: number;
}

/**
 * Claims `folder` for this process, or throws InstanceRunningError naming the instance that holds it. A live holder
 * that says it is stopping (a restart) is waited for up to waitMs and taken over once it has gone; one that does not
 * is refused after graceMs, time for a signal just sent to be marked. A holder gone is taken over one claimant at a
 * time (takeOverStaleLock).
 */
export async function claimInstance(options: ClaimOptions): Promise<InstanceLock> {
  const file = options.file ?? instanceLockFile(options.folder);
  const remedy = options.remedy ?? FOLDER_REMEDY;
  const waitMs = options.waitMs ?? INSTANCE_WAIT_MS;
  const graceMs = options.graceMs ?? INSTANCE_GRACE_MS;
  const info: InstanceInfo = {
    pid: process.pid,
    host: os.hostname(),
    command: options.command,
    folder: resolve(options.folder),
    port: options.port,
    url: null,
    started_at: new Date().toISOString(),
    heartbeat_ms: options.heartbeatMs ?? INSTANCE_HEARTBEAT_MS,
  };
  const text = (fileId: string) => `${JSON.stringify({ ...info, file_id: fileId }, null, 2)}\n`;
  const create = () => createWhole(file, text);
  const started = Date.now();
  let waiting = false;
  for (;;) {
    const held = await readInstance(file);
    if (isLive(held)) {
      const stopping = held.info.stopping_since !== undefined;
      if (Date.now() >= started + (stopping ? waitMs : graceMs)) {
        throw new InstanceRunningError(
          `${describe(held.info, remedy)}` +
            (stopping ? ` (waited ${Math.round(waitMs / 1000)} s for it to finish stopping)` : '') +
            otherHostHint(held.info, file),
        );
      }
      if (stopping && !waiting) {
        waiting = true;
        (options.notice ?? ((line: string) => console.error(`emi: ${line}`)))(
          `emi ${held.info.command} (pid ${held.info.pid}) holds ${held.info.folder} and is stopping: waiting up ` +
            `to ${Math.round(waitMs / 1000)} s for it to end`,
        );
      }
      await sleep(INSTANCE_POLL_MS);
      continue;
    }
    await assertPortFree(options.port, options.host);
    if (!held.present) {
      try {
        await create();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        continue; // another claimant created it first: read it
      }
    }
    // Left by a killed instance (or unreadable): taken over only if it still is, under the takeover marker.
    const stillStale = async () => {
      const now = await readInstance(file);
      return now.present && !isLive(now);
    };
    if (await takeOverStaleLock(file, stillStale, create)) break;
  }
  // The heartbeat that tells another host this lock is held (see isLive); it never keeps the process alive.
  const heartbeat = setInterval(() => {
    const now = new Date();
    void utimes(file, now, now).catch(() => undefined);
  }, info.heartbeat_ms).unref();
  const release = () => {
    clearInterval(heartbeat);
    process.removeListener('exit', release);
    dropClaim(file);
    try {
      const current = JSON.parse(readFileSync(file, 'utf8')) as InstanceInfo;
      if (current.pid === process.pid) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  holdClaim(
    file,
    (fileId) =>
      `${JSON.stringify({ ...info, stopping_since: new Date().toISOString(), file_id: fileId }, null, 2)}\n`,
  );
  process.on('exit', release);
  return {
    file,
    async listening(url) {
      info.url = url;
      await replaceWhole(file, text);
    },
    release,
  };
}

/** The lock file of the scheduler using a state folder: inside it (its parent may not be the service's to write). */
export const schedulerLockFile = (stateDir: string): string => join(resolve(stateDir), 'scheduler.json');

/**
 * Claims the state folder for one long-running scheduler (`emi up`, `emi schedule`): two on one folder would refuse
 * each other's runs on the store's run lock at nearly every tick. One-off runs (`emi generate`, a systemd timer's)
 * take no claim: the run lock refuses one that overlaps a tick, in words.
 */
export async function claimStateFolder(
  stateDir: string,
  command: 'up' | 'schedule',
  options: Pick<ClaimOptions, 'waitMs' | 'graceMs' | 'notice'> = {},
): Promise<InstanceLock> {
  await assertWritableFolder(stateDir, 'state folder');
  await mkdir(stateDir, { recursive: true });
  return claimInstance({
    ...options,
    folder: stateDir,
    file: schedulerLockFile(stateDir),
    port: 0,
    host: '127.0.0.1',
    command,
    remedy:
      "stop it first (two schedulers on one state folder refuse each other's runs), or give this one another --state",
  });
}
