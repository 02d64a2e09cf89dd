// The options of a simulated run whose site, paid and state folders all sit in one test folder.
import { join } from 'node:path';
import type { PipelineOptions } from '../../generator/pipeline.ts';

export const simulatedRun = (
  dir: string,
  asOf: number,
  overrides: Partial<PipelineOptions> = {},
): PipelineOptions => ({
  outDir: join(dir, 'site'),
  paidDir: join(dir, 'paid'),
  stateDir: join(dir, 'var'),
  source: 'sim',
  seed: 42,
  asOf,
  ...overrides,
});

/** The flags of one `publishCycle` (as `emi schedule` runs it) on the simulated market, its folders in `dir`. */
export const simulatedCycle = (dir: string, asOf: number, baseUrl: string) => ({
  cadence: 60,
  seed: 42,
  source: 'sim' as const,
  out: join(dir, 'site'),
  paid: join(dir, 'paid'),
  state: join(dir, 'var'),
  dist: join(dir, 'dist'),
  baseUrl,
  asOf,
});
