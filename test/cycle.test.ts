// The publishing cycle of `emi schedule` and `emi up` (generator/cycle.ts): the site is built from the run that has
// just published, without reading its files back to validate them again; a one-off build still validates them.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SITE_TEMPLATES, build, publishCycle } from '../generator/cycle.ts';
import { validatePublicOutput } from '../generator/publish/validate-output.ts';
import type * as ValidateOutput from '../generator/publish/validate-output.ts';

vi.mock('../generator/publish/validate-output.ts', async (importOriginal) => {
  const real = await importOriginal<typeof ValidateOutput>();
  return { ...real, validatePublicOutput: vi.fn(real.validatePublicOutput) };
});

describe('publishing cycle', () => {
  let root: string;
  const flags = () => ({
    cadence: 60,
    seed: 42,
    source: 'sim' as const,
    out: join(root, 'site'),
    paid: join(root, 'paid'),
    state: join(root, 'var'),
    dist: join(root, 'dist'),
    baseUrl: 'http://127.0.0.1:8080',
  });
  const buildFlags = () => ({
    site: SITE_TEMPLATES,
    published: flags().out,
    out: join(root, 'dist-once'),
    baseUrl: flags().baseUrl,
    state: flags().state,
  });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-cycle-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('builds from the run it has just published without validating those files again', async () => {
    vi.mocked(validatePublicOutput).mockClear();
    const report = await publishCycle(flags());
    expect(report.status).toBe('ok');
    expect(existsSync(join(root, 'dist', 'api', 'market-regime.php'))).toBe(true);
    expect(existsSync(join(root, 'dist', 'index.html'))).toBe(true);
    expect(validatePublicOutput).not.toHaveBeenCalled();
  }, 120_000);

  it('a one-off build validates the published files, and refuses a damaged one', async () => {
    vi.mocked(validatePublicOutput).mockClear();
    await build(buildFlags());
    expect(validatePublicOutput).toHaveBeenCalledTimes(1);
    await writeFile(join(root, 'site', 'api', 'market-regime.php'), '{"not":"a regime"}\n');
    await expect(build(buildFlags())).rejects.toThrow(
      /refusing to build: 1 published file\(s\) missing or invalid .*api\/market-regime\.php/,
    );
  }, 120_000);
});
