// The operator's bearer tokens on the Cloudflare Worker in its own runtime (`wrangler dev`, workerd): the publishers'
// admin route (EMI_ADMIN_TOKEN) and the vote export (EMI_VOTE_EXPORT_TOKEN). A Worker has no start to refuse, so a
// token short enough to guess closes its route: 503, a JSON error naming the variable and how to make a good one,
// never the token, even to a request that sends it. With good tokens both routes read the scheme in any case
// (RFC 9110 11.1) and hold a client that keeps sending wrong tokens off with 429, the right token included. And a
// method the vote route does not take answers the JSON 404 that `emi paywall` answers, with CORS.
import { DISCLAIMER } from '../schemas/common.ts';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WranglerDev } from '../deploy/cloudflare/run.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { account, publisherEntry } from './publishers-harness.ts';
import { startTestWorker } from './helpers/test-worker.ts';
import { startPaywallCli } from './ops-cli.ts';

const ADMIN_TOKEN = '6b1f0c8e2d4a9f7315e0b6c2a8d4f1e9'; // 32 characters, as `openssl rand -hex 16` prints
const EXPORT_TOKEN = 'c3e9a1f7b5d20864e2a0c8f6b4d21379';
/** Wrong tokens one client may send in a minute before it is held off (WRONG_TOKEN_LIMIT, operator-token.ts). */
const WRONG_TOKENS_ALLOWED = 10;

const ADMIN_PATH = '/p/acme/admin/statement';
const EXPORT_PATH = '/arena/votes/export?after=0';

interface Refusal {
  success: boolean;
  error: string;
  message?: string;
}

describe('operator tokens on the Worker (wrangler dev)', { timeout: 120_000 }, () => {
  let root: string;
  let facilitator: DevFacilitator;

  /** A Worker with one publisher (so that the admin route exists) and `vars`. */
  const startWorker = async (name: string, vars: Record<string, string>): Promise<WranglerDev> =>
    startTestWorker({
      persistTo: join(root, name),
      assetsDir: join(root, 'dist'),
      payTo: account(),
      facilitatorUrl: facilitator.url,
      vars: { EMI_PUBLISHERS: JSON.stringify([publisherEntry('acme', account())]), ...vars },
    });

  const weak = { EMI_ADMIN_TOKEN: 'abc', EMI_VOTE_EXPORT_TOKEN: 'export-123' };
  /** The two Workers, started side by side here; each describe below awaits its own (and stops it when done). */
  let weakWorker: Promise<WranglerDev> | undefined;
  let goodWorker: Promise<WranglerDev> | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-tokens-worker-'));
    await mkdir(join(root, 'dist'));
    await writeFile(join(root, 'dist/index.html'), '<!doctype html><title>home</title>');
    facilitator = await startDevFacilitator();
    weakWorker = startWorker('weak', weak);
    goodWorker = startWorker('good', { EMI_ADMIN_TOKEN: ADMIN_TOKEN, EMI_VOTE_EXPORT_TOKEN: EXPORT_TOKEN });
    // A failed start fails its describe's beforeAll, which awaits it.
    for (const started of [weakWorker, goodWorker]) started.catch(() => undefined);
  });

  afterAll(async () => {
    // Stopped here too: a describe left out (or failed before it awaited its Worker) leaves none running.
    await Promise.allSettled([weakWorker, goodWorker].map((started) => started?.then((w) => w.stop())));
    await facilitator?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  describe('tokens too short to keep a guesser out', () => {
    let worker: WranglerDev;
    beforeAll(async () => {
      worker = await (weakWorker as Promise<WranglerDev>);
    }, 180_000);
    afterAll(() => worker?.stop());

    it.each([
      ['EMI_ADMIN_TOKEN', ADMIN_PATH],
      ['EMI_VOTE_EXPORT_TOKEN', EXPORT_PATH],
    ] as const)('%s closes its route: 503 naming the variable, never the token', async (variable, path) => {
      const token = weak[variable];
      const asked: Array<Record<string, string>> = [
        {},
        { Authorization: 'Bearer guess' },
        { Authorization: `Bearer ${token}` },
      ];
      for (const headers of asked) {
        const answer = await fetch(`${worker.url}${path}`, { headers });
        expect(answer.status, JSON.stringify(headers)).toBe(503);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        const text = await answer.text();
        expect(text).not.toContain(token);
        const body = JSON.parse(text) as Refusal;
        expect(body).toMatchObject({ success: false, error: 'operator_token_too_short' });
        expect(body.message).toContain(`${variable} is shorter than 32 characters`);
        expect(body.message).toContain('openssl rand -hex 32');
      }
    });
  });

  describe('good tokens', () => {
    let worker: WranglerDev;
    beforeAll(async () => {
      worker = await (goodWorker as Promise<WranglerDev>);
    }, 180_000);
    afterAll(() => worker?.stop());

    const routes = [
      ['admin route', ADMIN_PATH, ADMIN_TOKEN],
      ['vote export', EXPORT_PATH, EXPORT_TOKEN],
    ] as const;

    it.each(routes)('%s: the scheme in any case', async (_name, path, token) => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        const answer = await fetch(`${worker.url}${path}`, {
          headers: { Authorization: `${scheme} ${token}` },
        });
        expect(answer.status, scheme).toBe(200);
      }
    });

    it.each(routes)(
      '%s: after ten wrong tokens, 429 with Retry-After, the right token included',
      async (_name, path, token) => {
        // Each route counts its own guesses; one client (this test) sends them all.
        const ask = (authorization: string) =>
          fetch(`${worker.url}${path}`, { headers: { Authorization: authorization } });
        for (let i = 1; i <= WRONG_TOKENS_ALLOWED; i++) {
          const wrong = await ask(`Bearer guess-${i}-${'x'.repeat(32)}`);
          expect(wrong.status, `guess ${i}`).toBe(401);
          expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
          const refusal = (await wrong.json()) as Refusal & { disclaimer?: string };
          expect(refusal.error).toBe('unauthorized');
          expect(refusal.disclaimer).toBe(DISCLAIMER); // every JSON answer is educational (spec, section 1)
        }
        for (const authorization of ['Bearer one-more-guess', `Bearer ${token}`]) {
          const held = await ask(authorization);
          expect(held.status).toBe(429);
          expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(((await held.json()) as Refusal).error).toBe('rate_limited');
        }
      },
    );

    it('GET /arena/vote answers the JSON 404 of `emi paywall`, with CORS', async () => {
      const paywall = await startPaywallCli(root, ['--paid', join(root, 'paid')]);
      try {
        const answers = await Promise.all(
          [worker.url, paywall.base].map((base) => fetch(`${base}/arena/vote`)),
        );
        const [fromWorker, fromNode] = await Promise.all(
          answers.map(async (answer) => ({
            status: answer.status,
            type: answer.headers.get('content-type'),
            cors: answer.headers.get('access-control-allow-origin'),
            body: (await answer.json().catch(() => 'not JSON')) as unknown,
          })),
        );
        expect(fromNode).toMatchObject({ status: 404, cors: '*', body: { error: 'not_found' } });
        expect(fromWorker).toEqual(fromNode);
      } finally {
        await paywall.close();
      }
    }, 60_000);
  });
});
