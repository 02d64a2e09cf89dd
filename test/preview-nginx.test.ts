// `npm run preview:nginx -- --port P` as an operator runs it: nginx in front of the Node worker in the foreground,
// answering the site and the 402; Ctrl-C stops nginx, the worker and everything else it started.
import { DISCLAIMER } from '../schemas/common.ts';
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile, chmod } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectMcpPreflightAllowsPost } from './mcp-preflight.ts';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { hasNginx, startNginx } from '../deploy/nginx/run.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { writePaidFixtures } from './paywall-harness.ts';
import { freePort } from './free-port.ts';
import { account, publisherEntry } from './publishers-harness.ts';

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

  /** Starts the preview as an operator does; resolves once it says it is up (or has exited). */
  async function startPreview(site: string, extraEnv: Record<string, string> = {}) {
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
        join(site, 'dist'),
        '--paid',
        join(site, 'paid'),
      ],
      {
        env: {
          ...process.env,
          EMI_FACILITATOR_URL: facilitator.url,
          EMI_STATE_DIR: join(site, 'var'), // the payment book of a worker with a configured facilitator
          EMI_PAYTO: payTo,
          EMI_ALLOW_SIMULATED: '1',
          ...extraEnv,
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
    return { port, child, exited, output: () => output };
  }

  it(
    'serves the site and the 402 through nginx, and stops everything on Ctrl-C',
    { timeout: 60_000 },
    async () => {
      const { port, child, exited, output } = await startPreview(dir);
      expect(output()).toMatch(/Ctrl-C/);
      const nginxPid = Number(/nginx (\d+):/.exec(output())?.[1]);
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

  it('answers /mcp through nginx, as deploy/README says every host does', { timeout: 60_000 }, async () => {
    const { port, child, exited } = await startPreview(dir);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-03-26',
            capabilities: {},
            clientInfo: { name: 'test', version: '1' },
          },
        }),
      });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { result?: { serverInfo?: { name?: string } } };
      expect(answer.result?.serverInfo?.name).toBeTruthy();
      // A browser agent on another origin may post to it too (nginx answers every preflight itself).
      await expectMcpPreflightAllowsPost(`http://127.0.0.1:${port}/mcp`);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });

  it(
    'serves a checkout only its owner may read (0700) when run as root, where nginx’s workers are not root',
    { timeout: 60_000 },
    async () => {
      const privateDir = await mkdtemp(join(tmpdir(), 'emi-preview-nginx-private-'));
      try {
        await chmod(privateDir, 0o700);
        await mkdir(join(privateDir, 'dist/api'), { recursive: true });
        await mkdir(join(privateDir, 'paid'));
        await writeFile(join(privateDir, 'dist/index.html'), '<!doctype html><title>home</title>');
        await writeFile(join(privateDir, 'dist/api/market-regime.php'), '{"ok":true}');
        await writePaidFixtures(join(privateDir, 'paid'));
        const { port, child, exited, output } = await startPreview(privateDir);
        try {
          expect(output()).toMatch(/Ctrl-C/);
          expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
          expect((await fetch(`http://127.0.0.1:${port}/api/market-regime.php`)).status).toBe(200);
        } finally {
          child.kill('SIGINT');
          await exited;
        }
      } finally {
        await rm(privateDir, { recursive: true, force: true });
      }
    },
  );

  /** The Content-Encoding nginx answers a GET that accepts gzip with (fetch would hide it). */
  const encodingOf = (url: string): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      httpGet(url, { headers: { 'Accept-Encoding': 'gzip' } }, (response) => {
        response.resume();
        resolve(response.headers['content-encoding']);
      }).on('error', reject);
    });

  it(
    'answers the votes, their export and the storefronts as `emi paywall --site dist` does, gzip on as on Debian',
    { timeout: 60_000 },
    async () => {
      const site = await mkdtemp(join(tmpdir(), 'emi-preview-nginx-site-'));
      try {
        await chmod(site, 0o755);
        await mkdir(join(site, 'dist/x402-buyer'), { recursive: true });
        await mkdir(join(site, 'paid'));
        await writeFile(
          join(site, 'dist/index.html'),
          `<!doctype html><title>home</title>${' '.repeat(200)}`,
        );
        for (const file of ['index.html', 'buyer.css'])
          await copyFile(join('site/x402-buyer', file), join(site, 'dist/x402-buyer', file));
        await writeFile(join(site, 'dist/x402-buyer/app.js'), 'console.log("buyer page");\n');
        await writePaidFixtures(join(site, 'paid'));
        const config = join(site, 'emi.config.json');
        await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', account())] }));
        const token = 'export-secret-of-thirty-two-chars';
        const { port, child, exited, output } = await startPreview(site, {
          EMI_CONFIG: config,
          EMI_VOTE_EXPORT_TOKEN: token,
        });
        try {
          expect(output()).toMatch(/Ctrl-C/);
          const base = `http://127.0.0.1:${port}`;
          const vote = await fetch(`${base}/arena/vote`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: '{not json',
          });
          expect(vote.status).toBe(400);
          expect(await vote.json()).toMatchObject({ error: 'malformed_body' });
          const exported = (auth: Record<string, string>) =>
            fetch(`${base}/arena/votes/export?after=0`, { headers: auth });
          expect((await exported({})).status).toBe(401);
          const answer = await exported({ Authorization: `Bearer ${token}` });
          expect(answer.status).toBe(200);
          expect(await answer.json()).toEqual({ success: true, votes: [], disclaimer: DISCLAIMER });

          const storefront = await fetch(`${base}/p/acme/x402-buyer/`);
          expect(storefront.status).toBe(200);
          expect(await storefront.text()).toContain('Sold by acme Research');
          // Debian's nginx.conf says `gzip on` in the http block the recipe goes in.
          expect(await encodingOf(`${base}/index.html`)).toBe('gzip');
        } finally {
          child.kill('SIGINT');
          await exited;
        }
      } finally {
        await rm(site, { recursive: true, force: true });
      }
    },
  );

  it('nginx is ready only once it serves a known file with a 200, not when it answers at all', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'emi-nginx-empty-'));
    try {
      await chmod(empty, 0o755);
      await mkdir(join(empty, 'dist'));
      const port = await freePort();
      const site = await renderNginxSite({
        root: join(empty, 'dist'),
        listen: `127.0.0.1:${port}`,
        paywallUpstream: '127.0.0.1:9',
      });
      // nginx runs and answers 404 for the missing page: that is not serving the site.
      await expect(
        startNginx(join(empty, 'nginx'), site, `http://127.0.0.1:${port}/index.html`, { timeoutMs: 1500 }),
      ).rejects.toThrow(/404/);
      await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(); // and it was stopped
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('npm run preview:nginx with a configuration emi paywall refuses', () => {
  it('says it in one line and exits 2, before nginx or the worker starts', { timeout: 60_000 }, async () => {
    const site = await mkdtemp(join(tmpdir(), 'emi-preview-nginx-config-'));
    try {
      await mkdir(join(site, 'dist'), { recursive: true });
      await writeFile(join(site, 'dist/index.html'), '<!doctype html><title>home</title>');
      // This machine's EMI_* settings are left out: only the faulty one is given (a facilitator without a payee).
      const machine = Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_'));
      const env = { ...Object.fromEntries(machine), EMI_FACILITATOR_URL: 'http://127.0.0.1:20324' };
      const args = [
        'bin/run-ts.js',
        'scripts/preview-nginx.ts',
        '--port',
        '20325',
        '--dir',
        join(site, 'dist'),
      ];
      const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(process.execPath, args, { env, timeout: 50_000 }, (_error, _out, err) =>
          resolve({ code: child.exitCode, stderr: err }),
        );
      });
      expect(code, stderr).toBe(2);
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(stderr.trimEnd().split('\n')).toEqual([
        'preview:nginx: a payee address (EMI_PAYTO) is required when a facilitator URL is configured',
      ]);
    } finally {
      await rm(site, { recursive: true, force: true });
    }
  });
});
