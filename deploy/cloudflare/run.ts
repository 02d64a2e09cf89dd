// Drives wrangler for the preview, the upload of the paid files and the tests: `wrangler dev` runs the Worker in
// workerd on loopback with no network, exactly as `wrangler deploy` would bundle it. wrangler is started with node
// directly (an npx wrapper's pid would leave wrangler and workerd running when stopped).
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAID_RESOURCES } from '../../schemas/resources.ts';
import { waitUntilServing } from '../wait-until-serving.ts';

export const WRANGLER_CONFIG = fileURLToPath(new URL('./wrangler.toml', import.meta.url));
export const PAID_BUCKET = 'emi-paid';
const WRANGLER = wranglerCli();
const QUIET_ENV = { WRANGLER_SEND_METRICS: 'false', CI: 'true', CLOUDFLARE_CF_FETCH_ENABLED: 'false' };

/** wrangler is a devDependency: an install with `npm ci --omit=dev` has none, and says so here. */
function wranglerCli(): string {
  try {
    return join(createRequire(import.meta.url).resolve('wrangler/package.json'), '..', 'bin', 'wrangler.js');
  } catch {
    throw new Error('wrangler is not installed (a devDependency): run `npm ci` without --omit=dev');
  }
}

/** wrangler started with node, its stdout and stderr collected together. */
function spawnWrangler(args: string[]) {
  const child = spawn(process.execPath, [WRANGLER, ...args], {
    env: { ...process.env, ...QUIET_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

function runWrangler(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const { child, output } = spawnWrangler(args);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output()) : reject(new Error(`wrangler ${args[0]} failed (${code}): ${output()}`)),
    );
  });
}

/**
 * Uploads the generator's paid files to the R2 bucket: the local one of `wrangler dev` (with `persistTo`), or the
 * real one (`remote`). Run it after every generation.
 */
export async function uploadPaidFiles(
  paidDir: string,
  target: { persistTo: string } | { remote: true },
): Promise<void> {
  const options = ['--content-type', 'application/json', '--config', WRANGLER_CONFIG];
  if ('remote' in target) {
    // The real bucket: wrangler's documented command, one file at a time.
    for (const resource of PAID_RESOURCES)
      await runWrangler([
        'r2',
        'object',
        'put',
        `${PAID_BUCKET}/${resource.file}`,
        '--file',
        join(paidDir, resource.file),
        ...options,
        '--remote',
      ]);
    return;
  }
  // The local bucket: `r2 bulk put` (hidden and experimental in wrangler 4, which is pinned, and read back through
  // the Worker by the tests) starts the local runtime once rather than once per file: 2.4 s against 9.0 s on 2 cores.
  const listDir = await mkdtemp(join(tmpdir(), 'emi-r2-upload-'));
  try {
    const list = join(listDir, 'paid-files.json');
    const entries = PAID_RESOURCES.map((r) => ({ key: r.file, file: join(paidDir, r.file) }));
    await writeFile(list, JSON.stringify(entries));
    await runWrangler([
      ...['r2', 'bulk', 'put', PAID_BUCKET, '--filename', list, ...options],
      ...['--local', '--persist-to', target.persistTo],
    ]);
  } finally {
    await rm(listDir, { recursive: true, force: true });
  }
}

export interface WranglerDev {
  url: string;
  pid: number;
  /** SIGTERM to wrangler, resolved once it (and its workerd) exited. */
  stop(): Promise<void>;
  /** What wrangler printed so far (stdout and stderr): the Worker's own log lines among them. */
  output(): string;
}

export interface WranglerDevOptions {
  port: number;
  inspectorPort: number;
  persistTo: string;
  assetsDir: string;
  vars: Readonly<Record<string, string>>;
}

/** Settings that are secrets (the operator's tokens): never on a command line any local user can read. */
const isSecret = (name: string): boolean => name.endsWith('_TOKEN');

/**
 * Writes the secret settings to a file only this user may read, in dotenv form for `wrangler dev --env-file`;
 * returns its path, or null without secrets. A value is written single-quoted (taken literally), so one holding a
 * quote or a line break is refused rather than passed on changed.
 */
async function secretsFile(dir: string, vars: Readonly<Record<string, string>>): Promise<string | null> {
  const secrets = Object.entries(vars).filter(([name]) => isSecret(name));
  if (secrets.length === 0) return null;
  for (const [name, value] of secrets)
    if (/['\r\n]/.test(value)) throw new Error(`${name} may not hold a quote or a line break`);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'secrets.env');
  await writeFile(file, secrets.map(([name, value]) => `${name}='${value}'\n`).join(''), { mode: 0o600 });
  await chmod(file, 0o600); // a file left by an earlier run keeps its mode otherwise
  return file;
}

export async function startWranglerDev(options: WranglerDevOptions): Promise<WranglerDev> {
  const secrets = await secretsFile(options.persistTo, options.vars);
  const args = [
    'dev',
    '--config',
    WRANGLER_CONFIG,
    '--local',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--inspector-port',
    String(options.inspectorPort),
    '--persist-to',
    options.persistTo,
    '--assets',
    options.assetsDir,
    '--show-interactive-dev-session=false',
    ...Object.entries(options.vars)
      .filter(([name]) => !isSecret(name))
      .flatMap(([name, value]) => ['--var', `${name}:${value}`]),
    ...(secrets ? ['--env-file', secrets] : []),
  ];
  const { child, output } = spawnWrangler(args);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  if (await waitUntilServing(`${url}/`, () => child.exitCode === null, 60_000)) {
    return {
      url,
      pid: child.pid as number,
      output,
      stop: async () => {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }
  child.kill('SIGKILL');
  await exited;
  throw new Error(`wrangler dev did not start:\n${output()}`);
}

/** `wrangler deploy --dry-run`: bundles the Worker as it would ship, offline, into `outdir` (entry.js + map). */
export async function bundleForDeploy(outdir: string, assetsDir: string): Promise<void> {
  await runWrangler([
    'deploy',
    '--dry-run',
    '--config',
    WRANGLER_CONFIG,
    '--outdir',
    outdir,
    '--assets',
    assetsDir,
  ]);
}
