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
