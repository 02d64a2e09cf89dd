// Runs Debian's nginx in the foreground with a prefix folder of its own (every temp path inside it), for the
// preview and the tests: the rendered site configuration inside a minimal http {} block. Started by root, nginx
// runs its workers as another user (nobody by default), who may not read the site: they run as the site's owner.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitUntilServing } from '../wait-until-serving.ts';

export const NGINX = process.env.EMI_NGINX ?? '/usr/sbin/nginx';
export const hasNginx = (): boolean => existsSync(NGINX);

export interface RunningNginx {
  pid: number;
  errorLog: string;
  /** Graceful stop (SIGQUIT), resolved once nginx has exited. */
  stop(): Promise<void>;
}

export interface StartNginxOptions {
  /** The folder nginx serves (the site's root): when nginx starts as root, its workers run as this folder's owner. */
  siteRoot?: string;
  /** How long to wait for the probe's 200 (default 10 s). */
  timeoutMs?: number;
}

/** The name of a user or group id, from /etc/passwd or /etc/group (nginx's `user` directive takes names). */
async function nameOf(file: '/etc/passwd' | '/etc/group', id: number): Promise<string | null> {
  const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n');
  return lines.map((line) => line.split(':')).find((fields) => fields[2] === String(id))?.[0] ?? null;
}

/**
 * The `user` directive for nginx started as root: the owner of the site's folder (root itself when it has no name),
 * so that the workers read what its owner reads (a checkout private to its owner, 0700, included). Null when nginx
 * does not start as root (its workers then run as the user who starts it).
 */
async function workerUser(
  siteRoot: string | undefined,
): Promise<{ uid: number; gid: number; directive: string } | null> {
  if (process.getuid?.() !== 0) return null;
  const owner = siteRoot ? await stat(siteRoot).catch(() => null) : null;
  const uid = owner?.uid ?? 0;
  const gid = owner?.gid ?? 0;
  const user = await nameOf('/etc/passwd', uid);
  const group = await nameOf('/etc/group', gid);
  if (user === null) return { uid: 0, gid: 0, directive: 'user root root;' };
  return { uid, gid, directive: `user ${user}${group === null ? '' : ` ${group}`};` };
}

function mainConfig(dir: string, siteFile: string, user: string | null): string {
  const temp = (name: string) => `  ${name}_temp_path ${join(dir, `${name}-temp`)};`;
  return [
    ...(user ? [user] : []),
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 256; }',
    'http {',
    '  include /etc/nginx/mime.types;',
    '  default_type application/octet-stream;',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp),
    `  include ${siteFile};`,
    '}',
    '',
  ].join('\n');
}

/** The `root` directive of a rendered server block. */
const siteRootOf = (site: string): string | undefined => /^\s*root\s+([^;\s]+);/m.exec(site)?.[1];

/**
 * Starts nginx with `site` (a rendered server block) and resolves once `probeUrl` (a file the site has) answers
 * 200: an nginx that answers 403 or 404 (its workers cannot read the site) is not serving it, and is stopped.
 */
export async function startNginx(
  dir: string,
  site: string,
  probeUrl: string,
  options: StartNginxOptions = {},
): Promise<RunningNginx> {
  if (!hasNginx()) throw new Error(`nginx is not installed at ${NGINX} (apt-get install -y nginx)`);
  await mkdir(dir, { recursive: true });
  const siteFile = join(dir, 'emi.conf');
  const errorLog = join(dir, 'error.log');
  const user = await workerUser(options.siteRoot ?? siteRootOf(site));
  // The workers write the temp folders (request and proxied bodies) under `dir`: they must reach it.
  if (user && user.uid !== 0) await chown(dir, user.uid, user.gid);
  await writeFile(siteFile, site);
  await writeFile(join(dir, 'nginx.conf'), mainConfig(dir, siteFile, user?.directive ?? null));
  const child = spawn(
    NGINX,
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', errorLog, '-g', 'daemon off;'],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let answered: number | null = null;
  const served = (response: Response) => {
    answered = response.status;
    return response.status === 200;
  };
  if (
    await waitUntilServing(probeUrl, () => child.exitCode === null, options.timeoutMs ?? 10_000, 50, served)
  ) {
    return {
      pid: child.pid as number,
      errorLog,
      stop: async () => {
        if (child.exitCode === null) child.kill('SIGQUIT');
        await exited;
      },
    };
  }
  // A fast shutdown (SIGTERM) takes the workers down with the master; SIGKILL to the master alone would leave them
  // serving the port.
  child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killed);
  const log = await readFile(errorLog, 'utf8').catch(() => 'no error log');
  if (answered !== null) {
    throw new Error(
      `nginx answered ${probeUrl} with HTTP ${answered}, not 200: it runs but does not serve the site ` +
        `(${user ? `its workers run as "${user.directive}"; ` : ''}can they read the folder?): ${log}`,
    );
  }
  throw new Error(`nginx did not start: ${log}`);
}
