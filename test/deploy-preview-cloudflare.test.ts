// `npm run preview:cloudflare` keeps selling what the generator last wrote: the paid files are in R2 (the local bucket
// of `wrangler dev`), so a regenerate must reach the bucket too, or the Worker sells the first upload's data until it
// is too old to sell (503 data_stale).
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { writePaidFixtures } from './paywall-harness.ts';
import { freePort } from './free-port.ts';
import { startCloudflarePreview } from './helpers/cloudflare-preview.ts';

interface Health {
  files: Array<{ path: string; generated_at: string | null }>;
}

describe('npm run preview:cloudflare', { timeout: 180_000 }, () => {
  let dir: string;
  let facilitator: DevFacilitator;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-preview-cloudflare-'));
    await chmod(dir, 0o755);
    await mkdir(join(dir, 'dist'));
    await mkdir(join(dir, 'paid'));
    await writeFile(join(dir, 'dist', 'index.html'), '<!doctype html><title>home</title>');
    await writePaidFixtures(join(dir, 'paid'), 60);
    facilitator = await startDevFacilitator({ port: 0 });
  });
  afterAll(async () => {
    await facilitator?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('uploads the paid files again when the generator rewrites them', async () => {
    const port = await freePort();
    const payTo = algosdk.generateAccount().addr.toString();
    facilitator.ledger.optIn(payTo);
    const preview = await startCloudflarePreview(dir, port, {
      EMI_FACILITATOR_URL: facilitator.url,
      EMI_PAYTO: payTo,
    });
    try {
      const generated = async () => {
        const health = (await (await fetch(`http://127.0.0.1:${port}/x402/health`)).json()) as Health;
        return health.files.map((file) => file.generated_at);
      };
      const first = await generated();
      expect(first.every((at) => at !== null)).toBe(true);

      await writePaidFixtures(join(dir, 'paid')); // the next run: newer files
      let now = first;
      for (let i = 0; i < 90 && now.some((at, index) => at === first[index]); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        now = await generated();
      }
      expect(now.every((at, index) => at !== first[index])).toBe(true);
      expect(preview.output()).toMatch(/uploaded again|re-?upload/i);
    } finally {
      await preview.stop();
    }
  });
});

describe('npm run upload:r2 refuses a usage mistake in one line, exit 2, before wrangler starts', () => {
  /** The script's exit code and stderr, with this machine's EMI_* settings left out. */
  const upload = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const machine = Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_'));
      const child = execFile(
        process.execPath,
        ['bin/run-ts.js', 'scripts/upload-r2.ts', ...args],
        { env: Object.fromEntries(machine), timeout: 50_000 },
        (_error, _out, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });

  it.each([
    {
      name: 'a mistyped option',
      args: (dir: string) => ['--paid', dir, '--locl', join(dir, 'r2')],
      line: /^upload:r2: Unknown option '--locl'.* \(usage: npm run upload:r2 -- --paid paid \[--local DIR\]\)$/,
    },
    {
      name: 'a --paid folder without the paid files',
      args: (dir: string) => ['--paid', join(dir, 'nothing'), '--local', join(dir, 'r2')],
      line: /^upload:r2: \S+nothing lacks every paid file: run `npx emi generate` first, or give its --paid folder$/,
    },
  ])('$name', { timeout: 60_000 }, async ({ args, line }) => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-upload-r2-'));
    try {
      const { code, stderr } = await upload(args(dir));
      expect(code, stderr).toBe(2);
      expect(stderr).not.toMatch(/^\s+at /m);
      const lines = stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
