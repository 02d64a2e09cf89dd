// The operator's two checks: /status.json, written by every run (a failed run keeps the age of the data still
// served), and the worker's health route (paid files for sale? facilitator answers?).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HEALTH_PATH } from '../schemas/delivery.ts';
import { RunStatus } from '../schemas/status.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { FACILITATOR_HEALTH_TTL_MS } from '../paywall-worker/core/health.ts';
import type { Health } from '../paywall-worker/core/health.ts';
import { startStack, writePaidFixtures } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

describe('/status.json', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-status-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says what the last run did, and keeps the served data’s age after a failed run', async () => {
    const paths = { outDir: join(dir, 'site'), paidDir: join(dir, 'paid'), stateDir: join(dir, 'state') };
    const asOf = Date.parse('2026-11-20T10:00:00Z');
    const ok = await runPipeline({ ...paths, source: 'sim', seed: 7, asOf });
    expect(ok.status).toBe('ok');
    const first = RunStatus.parse(JSON.parse(await readFile(join(paths.outDir, 'status.json'), 'utf8')));
    expect(first).toMatchObject({ status: 'ok', mode: 'simulated', simulated: true });
    expect(first.data.generated_at).toBe('2026-11-20T10:00:00.000Z');
    expect(first.sources.provider).toMatch(/simulator/);

    const failed = await runPipeline({
      ...paths,
      source: 'sim',
      seed: 7,
      asOf: asOf + 60_000,
      collector: () => Promise.reject(new Error('every venue refused')),
    });
    expect(failed.status).toBe('failed');
    const second = RunStatus.parse(JSON.parse(await readFile(join(paths.outDir, 'status.json'), 'utf8')));
    expect(second.status).toBe('failed');
    expect(second.last_run.error).toMatch(/every venue refused/);
    expect(second.data.generated_at).toBe('2026-11-20T10:00:00.000Z'); // the files still served
  });
});

describe(`worker health (${HEALTH_PATH})`, () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack?.close());

  const health = async () => {
    const response = await fetch(`${stack.worker.url}${HEALTH_PATH}`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    return { status: response.status, body: (await response.json()) as Health };
  };

  it('answers 200 when every paid file is for sale and the facilitator answers', async () => {
    const { status, body } = await health();
    expect(status).toBe(200);
    expect(body.facilitator.answers).toBe(true);
    expect(body.files.map((f) => f.state)).toEqual(['for_sale', 'for_sale', 'for_sale', 'for_sale']);
  });

  it('answers 503 naming the stale file and the silent facilitator', async () => {
    await writePaidFixtures(stack.paidDir, 3600);
    await writeFile(join(stack.paidDir, 'x402-main-brain.json'), '{"not":"valid"}');
    await stack.facilitator.close();
    // The facilitator's last answer stands for FACILITATOR_HEALTH_TTL_MS: the check after it asks again.
    const realNow = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + FACILITATOR_HEALTH_TTL_MS);
    const { status, body } = await health().finally(() => vi.restoreAllMocks());
    expect(status).toBe(503);
    expect(body.ok).toBe(false);
    expect(body.facilitator.answers).toBe(false);
    const states = Object.fromEntries(body.files.map((f) => [f.path, f.state]));
    expect(states['/api/x402-atlas.php']).toBe('data_stale');
    expect(states['/api/x402-main-brain.php']).toBe('invalid');
  });
});
