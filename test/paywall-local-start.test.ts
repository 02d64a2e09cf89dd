// What `emi paywall` prints at start about its paid folder: a mistyped --paid, or a worker started before the first
// run, shows at once instead of as a 503 on every paid path.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';

let dir: string;
let running: LocalPaywall | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function paidFilesLine(paidDir: string): Promise<string | undefined> {
  running = await createLocalPaywall({ paidDir, baseUrl: 'http://127.0.0.1:8080', devFacilitatorPort: 0 });
  return running.describe().find((line) => line.startsWith('x402 paid files:'));
}

describe('the paid folder, as the worker describes it at start', () => {
  it('says when none of the paid files is there, and what that means for buyers', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-paid-start-'));
    const missing = join(dir, 'not-generated-yet');
    expect(await paidFilesLine(missing)).toBe(
      `x402 paid files: ${missing} (none of the ${PAID_RESOURCES.length} there yet: their paths answer 503 ` +
        'until `emi generate` writes them)',
    );
  });

  it('names the missing ones, and says nothing more once all are there', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-paid-start-'));
    const [first, ...others] = PAID_RESOURCES;
    for (const r of others) await writeFile(join(dir, r.file), '{}');
    expect(await paidFilesLine(dir)).toBe(
      `x402 paid files: ${dir} (${others.length} of ${PAID_RESOURCES.length} there, missing ${first!.file}: ` +
        'their paths answer 503 until `emi generate` writes them)',
    );
    await running?.close();
    await writeFile(join(dir, first!.file), '{}');
    expect(await paidFilesLine(dir)).toBe(`x402 paid files: ${dir} (all ${PAID_RESOURCES.length} there)`);
  });
});
