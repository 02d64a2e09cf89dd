// Runs Debian's nginx unprivileged in the foreground with a prefix folder of its own (every temp path inside it),
// for the preview and the tests: the rendered site configuration inside a minimal http {} block.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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

function mainConfig(dir: string, siteFile: string): string {
  const temp = (name: string) => `  ${name}_temp_path ${join(dir, `${name}-temp`)};`;
  return [
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

/** Starts nginx with `site` (a rendered server block) and resolves once `probeUrl` answers. */
export async function startNginx(dir: string, site: string, probeUrl: string): Promise<RunningNginx> {
  if (!hasNginx()) throw new Error(`nginx is not installed at ${NGINX} (apt-get install -y nginx)`);
  await mkdir(dir, { recursive: true });
  const siteFile = join(dir, 'emi.conf');
  const errorLog = join(dir, 'error.log');
  await writeFile(siteFile, site);
  await writeFile(join(dir, 'nginx.conf'), mainConfig(dir, siteFile));
  const child = spawn(
    NGINX,
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', errorLog, '-g', 'daemon off;'],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (await waitUntilServing(probeUrl, () => child.exitCode === null, 10_000, 50)) {
    return {
      pid: child.pid as number,
      errorLog,
      stop: async () => {
        if (child.exitCode === null) child.kill('SIGQUIT');
        await exited;
      },
    };
  }
  child.kill('SIGKILL');
  await exited;
  throw new Error(`nginx did not start: ${await readFile(errorLog, 'utf8').catch(() => 'no error log')}`);
}
