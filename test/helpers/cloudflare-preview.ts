// `npm run preview:cloudflare` (scripts/preview-cloudflare.ts: wrangler dev with the site, the paid files uploaded
// to its local R2 bucket) started as an operator starts it, ready once wrangler prints its Ctrl-C hint.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';

export interface CloudflarePreview {
  /** Everything the preview printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

export async function startCloudflarePreview(
  dir: string,
  port: number,
  env: Record<string, string>,
): Promise<CloudflarePreview> {
  const child = spawn(
    process.execPath,
    [
      'bin/run-ts.js',
      'scripts/preview-cloudflare.ts',
      ...['--port', String(port), '--dir', join(dir, 'dist'), '--paid', join(dir, 'paid')],
      ...['--persist-to', join(dir, 'wrangler')],
    ],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    child.kill('SIGINT');
    await exited;
  };
  for (let i = 0; i < 1200 && !/Ctrl-C/.test(output) && child.exitCode === null; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!/Ctrl-C/.test(output)) await stop();
  expect(output).toMatch(/Ctrl-C/);
  return { output: () => output, stop };
}
