// `emi paywall` takes the wallet-signed votes the nginx and Netlify recipes proxy to it: POST /arena/vote stores them
// in the state folder's arena-votes.sqlite (--state, else EMI_STATE_DIR, else var: the generator's own default), where
// the next `emi generate` imports them; with EMI_VOTE_EXPORT_TOKEN it also serves GET /arena/votes/export, as the
// Worker does. Behind nginx (a loopback peer) the per-IP limit counts the last X-Forwarded-For entry.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterEach, describe, expect, it } from 'vitest';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { hasNginx, startNginx } from '../deploy/nginx/run.ts';
import { importEndpointVotes } from '../generator/state/endpoint-votes.ts';
import { openArenaStore } from '../generator/state/store.ts';
import { DEFAULT_LIMITS } from '../paywall-worker/arena-vote/app.ts';
import { MCP_INITIALIZE } from './helpers/mcp-initialize.ts';
import { openVotingRound, signedVoteBody } from './helpers/signed-vote.ts';
import { freePort } from './free-port.ts';
import { startEmi } from './ops-cli.ts';
import type { Running } from './ops-cli.ts';

const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');
const SITE = 'https://arena.example';

// Every cleanup runs even when an earlier one fails: an `emi paywall` left running outlives the test run.
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  const failures: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
});

/** Stops a started `emi`: SIGTERM, then SIGKILL if it has not ended within a few seconds. */
async function stopped(running: Running): Promise<void> {
  const { child } = running;
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  running.stop();
  const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await running.done;
  clearTimeout(kill);
}

/** This machine's environment without any EMI_* setting, plus `env`. */
const cleanEnv = (env: Record<string, string>): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_'))),
  ...env,
});

/**
 * `emi paywall` in `cwd` as an operator runs it (ports the system picks); resolves with its URL once it listens.
 * Stopped after the test from the moment it starts, also when it never comes to listen.
 */
async function startPaywall(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const paywall = startEmi(
    cwd,
    ['paywall', '--port', '0', '--dev-facilitator-port', '0', '--base-url', SITE, ...args],
    env,
  );
  cleanups.push(() => stopped(paywall));
  await paywall.waitFor(/x402 paywall listening on http:\/\/\S+[^]*development facilitator on http:\/\/\S+/);
  return /x402 paywall listening on (http:\/\/\S+)/.exec(paywall.output())?.[1] ?? '';
}

const tempRoot = async () => {
  const root = await mkdtemp(join(tmpdir(), 'emi-paywall-votes-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return root;
};

/** A BEARISH vote by `account` for the round open now, and that round. */
const signedVote = (account: algosdk.Account) => {
  const round = openVotingRound();
  return {
    round,
    body: JSON.stringify(signedVoteBody({ site: SITE, round, prediction: 'BEARISH', account })),
  };
};

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/arena/vote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

/** How many votes the generator's import finds in the vote store `file`. */
const imported = async (root: string, file: string): Promise<number> => {
  const arena = openArenaStore(join(root, 'arena-import', 'arena.sqlite'));
  try {
    return await importEndpointVotes(arena, file, Date.now());
  } finally {
    arena.close();
  }
};

describe('emi paywall: the arena vote route', () => {
  it('stores a signed vote in --state/arena-votes.sqlite, which the generator imports', async () => {
    const root = await tempRoot();
    const url = await startPaywall(root, ['--paid', 'paid', '--state', 'state-here']);
    const voter = algosdk.generateAccount();
    const { round, body } = signedVote(voter);
    const res = await post(url, body);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ success: true, round_id: round.id });
    expect((await post(url, body)).status).toBe(409); // the same signed vote again
    expect(await imported(root, join(root, 'state-here', 'arena-votes.sqlite'))).toBe(1);
  });

  it('without --state: the folder of EMI_STATE_DIR, else var, as the generator; the export route with EMI_VOTE_EXPORT_TOKEN', async () => {
    const root = await tempRoot();
    const url = await startPaywall(root, ['--paid', 'paid'], {
      EMI_STATE_DIR: 'from-env',
      EMI_VOTE_EXPORT_TOKEN: 'export-secret-of-thirty-two-chars',
    });
    const voter = algosdk.generateAccount();
    expect((await post(url, signedVote(voter).body)).status).toBe(201);
    expect(await imported(root, join(root, 'from-env', 'arena-votes.sqlite'))).toBe(1);
    const exported = (auth?: string) =>
      fetch(`${url}/arena/votes/export?after=0`, { headers: auth ? { authorization: auth } : {} });
    expect((await exported()).status).toBe(401);
    const answer = await exported('Bearer export-secret-of-thirty-two-chars');
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      success: true,
      votes: [expect.objectContaining({ address: voter.addr.toString() })],
    });

    const plain = await tempRoot();
    const other = await startPaywall(plain, ['--paid', 'paid']);
    expect((await post(other, signedVote(voter).body)).status).toBe(201);
    expect(existsSync(join(plain, 'var', 'arena-votes.sqlite'))).toBe(true);
    // No token, no export route.
    expect((await fetch(`${other}/arena/votes/export`)).status).toBe(404);
  });

  it('counts the per-IP limit by the address nginx appends to X-Forwarded-For', async () => {
    const root = await tempRoot();
    const url = await startPaywall(root, ['--paid', 'paid', '--state', 'state']);
    const from = async (xff: (i: number) => string, n: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++)
        statuses.push((await post(url, '{}', { 'x-forwarded-for': xff(i) })).status);
      return statuses;
    };
    const max = DEFAULT_LIMITS.perIp.max;
    expect(await from((i) => `192.0.2.${i + 1}, 203.0.113.9`, max + 1)).toEqual([
      ...Array<number>(max).fill(400),
      429,
    ]);
    expect(await from(() => '192.0.2.1, 203.0.113.10', 1)).toEqual([400]);
  });

  it('--help says where the votes are kept', async () => {
    const child = spawn(process.execPath, [EMI, 'paywall', '--help'], { env: cleanEnv({}) });
    cleanups.push(() => child.kill('SIGKILL'));
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise((resolve) => child.once('close', resolve));
    const help = stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--state <dir>/);
    expect(help).toMatch(/arena-votes\.sqlite/);
    expect(help).toMatch(/EMI_STATE_DIR/);
  });
});

describe.skipIf(!hasNginx())('emi paywall behind the nginx recipe (deploy/nginx)', () => {
  it('takes a signed vote through nginx, and counts the address nginx saw, whatever the client forwards', async () => {
    const root = await tempRoot();
    await chmod(root, 0o755); // nginx workers run as another user when the master is root
    await mkdir(join(root, 'dist'));
    await writeFile(join(root, 'dist', 'index.html'), '<!doctype html><title>home</title>');
    const paywall = await startPaywall(root, ['--paid', 'paid', '--state', 'state']);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const site = await renderNginxSite({
      root: join(root, 'dist'),
      listen: `127.0.0.1:${port}`,
      paywallUpstream: new URL(paywall).host,
    });
    const nginx = await startNginx(join(root, 'nginx'), site, `${base}/`);
    cleanups.push(() => nginx.stop());

    const voter = algosdk.generateAccount();
    expect((await post(base, signedVote(voter).body)).status).toBe(201);
    expect(await imported(root, join(root, 'state', 'arena-votes.sqlite'))).toBe(1);
    // Every request names another client in the headers it may write; nginx appends the address it saw.
    const statuses: number[] = [];
    for (let i = 0; i < DEFAULT_LIMITS.perIp.max; i++) {
      const forged = `192.0.2.${i + 1}`;
      const res = await post(base, '{}', { 'x-forwarded-for': forged, 'cf-connecting-ip': forged });
      statuses.push(res.status);
    }
    // The signed vote above was the first of this client's requests in the window.
    expect(statuses).toEqual([...Array<number>(DEFAULT_LIMITS.perIp.max - 1).fill(400), 429]);
  });
});

describe('emi paywall reached directly: a path spelled with a doubled slash', () => {
  it('reaches the same route as behind nginx: the vote is stored, the export answers', async () => {
    const root = await tempRoot();
    const url = await startPaywall(root, ['--paid', 'paid', '--state', 'state'], {
      EMI_VOTE_EXPORT_TOKEN: 'export-secret-of-thirty-two-chars',
    });
    const voter = algosdk.generateAccount();
    const res = await fetch(`${url}//arena/vote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: signedVote(voter).body,
    });
    expect(res.status).toBe(201);
    const exported = await fetch(`${url}//arena//votes/export?after=0`, {
      headers: { authorization: 'Bearer export-secret-of-thirty-two-chars' },
    });
    expect(exported.status).toBe(200);
  });

  it('answers MCP at //mcp as at /mcp (a client given a base URL ending in a slash)', async () => {
    const root = await tempRoot();
    await mkdir(join(root, 'dist'), { recursive: true });
    await writeFile(join(root, 'dist', 'index.html'), '<!doctype html><title>home</title>');
    const url = await startPaywall(root, ['--paid', 'paid', '--state', 'state', '--site', 'dist']);
    const initialize = await fetch(`${url}//mcp`, MCP_INITIALIZE);
    expect(initialize.status).toBe(200);
    expect(((await initialize.json()) as { result?: unknown }).result).toBeDefined();
  });
});
