// Runs the Netlify recipe in `netlify dev`, offline, for the tests: netlify-cli 26.2.0 (the last line that runs on
// Node 20) is large (~400 MB), so it is not a project dependency: .ci/run installs it under .cache/netlify-cli.
// Edge Functions cannot run offline; the internal flag that disables them is needed to start at all.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntilServing } from '../wait-until-serving.ts';
import { PAYWALL_ORIGIN_PLACEHOLDER } from './render.ts';

export const NETLIFY_CLI = fileURLToPath(
  new URL('../../.cache/netlify-cli/node_modules/.bin/netlify', import.meta.url),
);
export const INSTALL_HINT = 'npm install --prefix .cache/netlify-cli netlify-cli@26.2.0';
export const hasNetlifyCli = (): boolean => existsSync(NETLIFY_CLI);

const RECIPE = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Lays out a Netlify project in `dir`: the built site with the recipe's files, proxying to `paywallOrigin`. */
export async function prepareNetlifyProject(dir: string, dist: string, paywallOrigin: string): Promise<void> {
  await cp(dist, join(dir, 'site'), { recursive: true });
  await cp(RECIPE('./_headers'), join(dir, 'site/_headers'));
  const redirects = await readFile(RECIPE('./_redirects'), 'utf8');
  await writeFile(
    join(dir, 'site/_redirects'),
    redirects.replaceAll(PAYWALL_ORIGIN_PLACEHOLDER, paywallOrigin),
  );
  await mkdir(join(dir, 'netlify'), { recursive: true });
  await cp(RECIPE('./functions'), join(dir, 'netlify/functions'), { recursive: true });
  await writeFile(
    join(dir, 'netlify.toml'),
    '[build]\npublish = "site"\n\n[functions]\ndirectory = "netlify/functions"\n\n[dev]\nframework = "#static"\n',
  );
}

export interface NetlifyDev {
  url: string;
  stop(): Promise<void>;
}

export class NetlifyFlagRefused extends Error {}

export async function startNetlifyDev(dir: string, port: number): Promise<NetlifyDev> {
  await mkdir(join(dir, 'home'), { recursive: true });
  const child = spawn(
    NETLIFY_CLI,
    [
      'dev',
      '--offline',
      '--internal-disable-edge-functions',
      '--skip-gitignore',
      '--no-open',
      '--port',
      String(port),
    ],
    {
      cwd: dir,
      env: { ...process.env, HOME: join(dir, 'home'), CI: 'true', NETLIFY_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: stopping it stops the functions server it starts too
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) process.kill(-(child.pid as number), 'SIGTERM');
    await exited;
  };
  const url = `http://127.0.0.1:${port}`;
  const refused = () => /unknown option/i.test(output);
  if (await waitUntilServing(`${url}/`, () => child.exitCode === null && !refused(), 180_000))
    return { url, stop };
  await stop().catch(() => undefined);
  if (refused()) throw new NetlifyFlagRefused(output);
  throw new Error(`netlify dev did not start:\n${output}`);
}
