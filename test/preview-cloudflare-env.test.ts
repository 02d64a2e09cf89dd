// `npm run preview:cloudflare` hands the Worker the settings a deployed one reads from its variables and secrets:
// with EMI_ALGOD_URL the payee's USDC opt-in is asked of that algod before a sale, and with EMI_VOTE_EXPORT_TOKEN
// GET /arena/votes/export answers the generator on another machine (401 without the token, the votes with it).
import { DISCLAIMER } from '../schemas/common.ts';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { writePaidFixtures } from './paywall-harness.ts';
import { startCloudflarePreview } from './helpers/cloudflare-preview.ts';

/** This suite's ports: wrangler dev and its inspector (the next one). */
const PORT = 19620;
const TOKEN = 'export-secret-of-thirty-two-chars';

/** An algod on loopback that knows no account (every opt-in look-up is a 404), recording what it was asked. */
async function startEmptyAlgod() {
  const asked: string[] = [];
  const server = createServer((request, response) => {
    asked.push(request.url ?? '');
    response.writeHead(404, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify({ message: 'account asset info not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe(
  'npm run preview:cloudflare with EMI_ALGOD_URL and EMI_VOTE_EXPORT_TOKEN',
  { timeout: 180_000 },
  () => {
    let dir: string;
    let facilitator: DevFacilitator;
    let algod: Awaited<ReturnType<typeof startEmptyAlgod>>;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'emi-preview-cloudflare-env-'));
      await chmod(dir, 0o755);
      await mkdir(join(dir, 'dist'));
      await mkdir(join(dir, 'paid'));
      await writeFile(join(dir, 'dist', 'index.html'), '<!doctype html><title>home</title>');
      await writePaidFixtures(join(dir, 'paid'));
      [facilitator, algod] = await Promise.all([startDevFacilitator({ port: 0 }), startEmptyAlgod()]);
    });
    afterAll(async () => {
      await facilitator?.close();
      await algod?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('passes both to the Worker', async () => {
      const payTo = algosdk.generateAccount().addr.toString();
      facilitator.ledger.optIn(payTo);
      const preview = await startCloudflarePreview(dir, PORT, {
        EMI_FACILITATOR_URL: facilitator.url,
        EMI_PAYTO: payTo,
        EMI_ALLOW_SIMULATED: '1', // the fixtures are the simulated examples
        EMI_ALGOD_URL: algod.url,
        EMI_VOTE_EXPORT_TOKEN: TOKEN,
      });
      try {
        const base = `http://127.0.0.1:${PORT}`;

        const exported = (headers: Record<string, string>) =>
          fetch(`${base}/arena/votes/export?after=0`, { headers });
        expect((await exported({})).status).toBe(401);
        const answer = await exported({ Authorization: `Bearer ${TOKEN}` });
        expect(answer.status).toBe(200);
        expect(await answer.json()).toEqual({ success: true, votes: [], disclaimer: DISCLAIMER });

        // The payee holds no USDC on that algod: no 402 offers a payment it could not receive.
        const paid = await fetch(`${base}/api/x402-market-regime.php`);
        expect(paid.status).toBe(503);
        expect(await paid.json()).toMatchObject({ error: 'payee_not_opted_in' });
        expect(algod.asked.some((path) => path.startsWith(`/v2/accounts/${payTo}/assets/`))).toBe(true);
      } finally {
        await preview.stop();
      }
    });
  },
);

describe('npm run preview:cloudflare with a configuration emi paywall refuses', () => {
  it(
    'says it in one line and exits 2, before wrangler or a facilitator starts',
    { timeout: 60_000 },
    async () => {
      const site = await mkdtemp(join(tmpdir(), 'emi-preview-cloudflare-config-'));
      try {
        await mkdir(join(site, 'dist'));
        await mkdir(join(site, 'paid'));
        await writeFile(join(site, 'dist', 'index.html'), '<!doctype html><title>home</title>');
        await writePaidFixtures(join(site, 'paid'));
        await writeFile(join(site, 'emi.json'), '{"publishers": [');
        // This machine's EMI_* settings are left out: only the faulty one is given (a file that is not JSON).
        const machine = Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_'));
        const env = { ...Object.fromEntries(machine), EMI_CONFIG: join(site, 'emi.json') };
        const args = ['bin/run-ts.js', 'scripts/preview-cloudflare.ts', '--port', '20326', '--dir'];
        args.push(join(site, 'dist'), '--paid', join(site, 'paid'), '--persist-to', join(site, 'wrangler'));
        const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = execFile(process.execPath, args, { env, timeout: 50_000 }, (_error, _out, err) =>
            resolve({ code: child.exitCode, stderr: err }),
          );
        });
        expect(code, stderr).toBe(2);
        expect(stderr).not.toMatch(/^\s+at /m);
        const lines = stderr.trimEnd().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(
          `preview:cloudflare: configuration file ${join(site, 'emi.json')} is not valid JSON: `,
        );
      } finally {
        await rm(site, { recursive: true, force: true });
      }
    },
  );
});
