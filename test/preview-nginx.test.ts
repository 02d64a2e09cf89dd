// `npm run preview:nginx -- --port P` as an operator runs it: nginx in front of the Node worker in the foreground,
// answering the site and the 402; Ctrl-C stops nginx, the worker and everything else it started.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasNginx } from '../deploy/nginx/run.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { writePaidFixtures } from './paywall-harness.ts';
import { freePort } from './free-port.ts';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!hasNginx())('npm run preview:nginx', () => {
  let dir: string;
  let facilitator: DevFacilitator;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-preview-nginx-'));
    await chmod(dir, 0o755);
    await mkdir(join(dir, 'dist/api'), { recursive: true });
    await mkdir(join(dir, 'paid'));
    await writeFile(join(dir, 'dist/index.html'), '<!doctype html><title>home</title>');
    await writeFile(join(dir, 'dist/api/market-regime.php'), '{"ok":true}');
    await writePaidFixtures(join(dir, 'paid'));
    facilitator = await startDevFacilitator();
  });
  afterAll(async () => {
    await facilitator?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'serves the site and the 402 through nginx, and stops everything on Ctrl-C',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const payTo = algosdk.generateAccount().addr.toString();
      const child = spawn(
        process.execPath,
        [
          'bin/run-ts.js',
          'scripts/preview-nginx.ts',
          '--port',
          String(port),
          '--dir',
          join(dir, 'dist'),
          '--paid',
          join(dir, 'paid'),
        ],
        {
          env: {
            ...process.env,
            EMI_FACILITATOR_URL: facilitator.url,
            EMI_STATE_DIR: join(dir, 'var'), // the payment book of a worker with a configured facilitator
            EMI_PAYTO: payTo,
            EMI_ALLOW_SIMULATED: '1',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      for (let i = 0; i < 300 && !/Ctrl-C/.test(output) && child.exitCode === null; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(output).toMatch(/Ctrl-C/);
      const nginxPid = Number(/nginx (\d+):/.exec(output)?.[1]);
      expect(alive(nginxPid)).toBe(true);

      const free = await fetch(`http://127.0.0.1:${port}/api/market-regime.php`);
      expect(free.status).toBe(200);
      expect(free.headers.get('server')).toMatch(/nginx/);
      const paid = await fetch(`http://127.0.0.1:${port}/api/x402-market-regime.php`);
      expect(paid.status).toBe(402);
      expect(paid.headers.get('payment-required')).toBeTruthy();

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(alive(nginxPid)).toBe(false);
      await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
    },
  );
});
