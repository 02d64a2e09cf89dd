// The vote export's bearer token as `emi paywall` (and `emi up`) take it: a token short enough to guess is refused at
// start (exit 2, one line naming the variable and how to make one, never the token); the scheme is read in any case
// (RFC 9110 11.1); and a client that keeps sending wrong tokens is held off with 429 for the rest of its minute,
// even with the right one then, while another client is not.
import { DISCLAIMER } from '../schemas/common.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectUsageMistake, runEmi, startPaywallCli } from './ops-cli.ts';

const TOKEN = 'a7f3c9e1b5d2084f6a1e3c7b9d5f2a8e'; // 32 characters, as `openssl rand -hex 16` prints
const WEAK = 'weak-token';
/** Wrong tokens one client may send in a minute before it is held off (WRONG_TOKEN_LIMIT, operator-token.ts). */
const WRONG_TOKENS_ALLOWED = 10;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempRoot = async () => {
  const root = await mkdtemp(join(tmpdir(), 'emi-tokens-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return root;
};

describe('EMI_VOTE_EXPORT_TOKEN on Node', () => {
  it.each([
    ['paywall', ['paywall', '--port', '0', '--dev-facilitator-port', '0']],
    ['up', ['up', '--port', '0', '--dev-facilitator-port', '0', '--backfill-days', '0']],
  ])(
    'emi %s refuses a token shorter than 32 characters (exit 2, one line)',
    async (_name, args) => {
      const root = await tempRoot();
      // Killed if it started anyway (the code before: it listened with the weak token).
      const run = await runEmi(root, args, { EMI_VOTE_EXPORT_TOKEN: WEAK }, { timeoutMs: 20_000 });
      expectUsageMistake(run, /EMI_VOTE_EXPORT_TOKEN is shorter than 32 characters.*openssl rand -hex 32/);
      expect(run.stderr).not.toContain(WEAK);
    },
    30_000,
  );

  it('takes the scheme in any case, and holds off a client that keeps guessing (429), not the others', async () => {
    const root = await tempRoot();
    const paywall = await startPaywallCli(root, ['--paid', 'paid'], { EMI_VOTE_EXPORT_TOKEN: TOKEN });
    cleanups.push(paywall.close);
    // From loopback (a proxy such as the nginx recipe) the client is the last X-Forwarded-For entry.
    const exported = (authorization: string, client = '198.51.100.7') =>
      fetch(`${paywall.base}/arena/votes/export?after=0`, {
        headers: { authorization, 'x-forwarded-for': client },
      });

    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const answer = await exported(`${scheme} ${TOKEN}`);
      expect(answer.status, scheme).toBe(200);
      expect(await answer.json()).toEqual({ success: true, votes: [], disclaimer: DISCLAIMER });
    }

    for (let i = 1; i <= WRONG_TOKENS_ALLOWED; i++) {
      const wrong = await exported(`Bearer guess-${i}`);
      expect(wrong.status, `guess ${i}`).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
      expect(await wrong.json()).toMatchObject({ success: false, error: 'unauthorized' });
    }
    for (const authorization of ['Bearer one-more-guess', `Bearer ${TOKEN}`]) {
      const held = await exported(authorization);
      expect(held.status).toBe(429);
      expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await held.json()).toMatchObject({ success: false, error: 'rate_limited' });
    }
    expect((await exported(`Bearer ${TOKEN}`, '203.0.113.20')).status).toBe(200);
    // A request without a token is no guess: it never holds its client off.
    for (let i = 0; i <= WRONG_TOKENS_ALLOWED; i++) {
      expect((await exported('', '203.0.113.30')).status).toBe(401);
    }
    expect((await exported(`Bearer ${TOKEN}`, '203.0.113.30')).status).toBe(200);
  }, 60_000);
});
