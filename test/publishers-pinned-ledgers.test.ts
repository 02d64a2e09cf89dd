// Pinned publisher rules a mutation audit found no test holding: a publisher may sell at the base price itself
// (README: "at or above the base price"), and a statement's `--since` that is no ISO date is a usage mistake (exit
// 2, saying what it wants), not a crash, even where Date.parse would read it. The ledgers' own pinned rules are in
// publishers-ledger.test.ts, whose Durable Object storage stand-in runs them on both ledgers.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PRODUCTS, parsePublishers } from '../paywall-worker/publishers/config.ts';
import { sinceTime } from '../paywall-worker/publishers/credit-ledger.ts';
import { account, publisherEntry } from './publishers-harness.ts';

describe('a publisher price', () => {
  it('equal to the base price is accepted', () => {
    const base = PRODUCTS.get('atlas')!;
    const [publisher] = parsePublishers([
      publisherEntry('acme', account(), { products: { atlas: { priceUsd: base.priceUsd } } }),
    ]);
    expect(publisher?.products).toEqual([
      expect.objectContaining({ slug: 'atlas', amountAtomic: base.amountAtomic }),
    ]);
  });
});

describe('a statement since a date that is no ISO date', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-since-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is no lower bound, though Date.parse reads it', () => {
    expect(Number.isNaN(Date.parse('March 3 2026'))).toBe(false); // the case the ISO check alone must refuse
    expect(sinceTime('March 3 2026')).toBeNull();
  });

  it('is a usage mistake of `emi publisher statement`: exit 2, saying what --since wants', async () => {
    const config = join(dir, 'emi.config.json');
    await writeFile(config, JSON.stringify({ publishers: [publisherEntry('acme', account())] }));
    const run = await emi([
      'publisher',
      'statement',
      'acme',
      '--since',
      'March 3 2026',
      '--config',
      config,
      '--state',
      dir,
    ]);
    expect(run.stderr).toContain('--since wants an ISO date or time (e.g. 2026-11-01): March 3 2026');
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
  });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/emi.js (the compiled CLI) as the operator does. */
function emi(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/emi.js', ...args], {
      env: { ...process.env, EMI_CONFIG: undefined, EMI_ADMIN_TOKEN: undefined, EMI_PAYTO: undefined },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
