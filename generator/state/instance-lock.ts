// One `emi up` / `emi serve` per served folder: a small lock file beside the folder names the running instance
// (pid, host, port). A second instance reads it, says what is running and stops before touching anything; a lock
// left by a killed instance (its process is gone) is taken over. The port is probed too, so a port held by
// anything else is reported in words instead of a raw EADDRINUSE.
import { readFileSync, unlinkSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { processIsAlive } from './lock.ts';

export interface InstanceInfo {
  pid: number;
  host: string;
  command: string;
  folder: string;
  port: number;
  url: string | null;
  started_at: string;
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

const describe = (info: InstanceInfo): string =>
  `emi ${info.command} is already running for ${info.folder} (pid ${info.pid} on ${info.host}, ` +
  `${info.url ?? `port ${info.port}`}, since ${info.started_at}): stop it first, or use other folders and --port`;

async function readInstance(file: string): Promise<InstanceInfo | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as InstanceInfo;
  } catch {
    return null;
  }
}

const isLive = (info: InstanceInfo): boolean =>
  info.host !== os.hostname() || (info.pid !== process.pid && processIsAlive(info.pid));

/** Resolves when host:port can be listened on; throws a sentence when something holds it. */
export function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new InstanceRunningError(
          error.code === 'EADDRINUSE'
            ? `port ${port} on ${host} is already in use by another program: choose another with --port`
            : `cannot listen on ${host}:${port}: ${error.message}`,
        ),
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolvePromise()));
  });
}

/** Claims `folder` for this process, or throws InstanceRunningError naming the instance that holds it. */
export async function claimInstance(options: {
  folder: string;
  port: number;
  host: string;
  command: string;
}): Promise<InstanceLock> {
  const file = instanceLockFile(options.folder);
  const info: InstanceInfo = {
    pid: process.pid,
    host: os.hostname(),
    command: options.command,
    folder: resolve(options.folder),
    port: options.port,
    url: null,
    started_at: new Date().toISOString(),
  };
  for (let attempt = 0; ; attempt++) {
    const held = await readInstance(file);
    if (held && isLive(held)) throw new InstanceRunningError(describe(held));
    if (held || attempt > 0) await rm(file, { force: true }); // left by a killed instance (or unreadable)
    await assertPortFree(options.port, options.host);
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${JSON.stringify(info, null, 2)}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
    }
  }
  const release = () => {
    process.removeListener('exit', release);
    try {
      const current = JSON.parse(readFileSync(file, 'utf8')) as InstanceInfo;
      if (current.pid === process.pid) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on('exit', release);
  return {
    file,
    async listening(url) {
      info.url = url;
      const handle = await open(file, 'w');
      await handle.writeFile(`${JSON.stringify(info, null, 2)}\n`);
      await handle.close();
    },
    release,
  };
}
