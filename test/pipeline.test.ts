import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import type { PipelineOptions } from '../generator/pipeline.ts';
import { validatePaidOutput, validatePublicOutput } from '../generator/publish/validate-output.ts';
import { emptyAsset } from './helpers/market-fixtures.ts';
import { simulatedRun } from './helpers/simulated-run.ts';
import { tempDir } from './helpers/temp-dir.ts';

const AS_OF = Date.parse('2026-11-21T12:00:00Z');

async function freshRun(overrides: Partial<PipelineOptions> = {}) {
  const dir = await tempDir('emi-pipeline-');
  const options = simulatedRun(dir, AS_OF, overrides);
  const report = await runPipeline(options);
  return { dir, options, report };
}

/** Every file below root, following the symlinks that published folders are (into the current generation). */
async function listFiles(root: string, under = ''): Promise<string[]> {
  const files: string[] = [];
  for (const name of await readdir(join(root, under))) {
    const path = join(under, name);
    const info = await stat(join(root, path));
    if (info.isDirectory()) files.push(...(await listFiles(root, path)));
    else if (info.isFile()) files.push(path);
  }
  return files.sort();
}

/** Every published file but status.json, which reports each run (its times and outcome) by design. */
async function readAll(root: string): Promise<Record<string, string>> {
  const files = (await listFiles(root)).filter((file) => file !== 'status.json');
  return Object.fromEntries(
    await Promise.all(files.map(async (f) => [f, await readFile(join(root, f), 'utf8')])),
  );
}

describe('one generator run on the simulated market', () => {
  it('publishes every free endpoint, every reasoning file and every paid body, all schema-valid', async () => {
    const { options, report } = await freshRun();
    expect(report.error).toBeNull();
    expect(report.status).not.toBe('failed');
    const checks = [
      ...(await validatePublicOutput(options.outDir)),
      ...(await validatePaidOutput(options.paidDir)),
    ];
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(checks.length).toBe(9 + 7 + 4);
  });

  it('is byte-identical for the same seed and as-of time, and differs for another seed', async () => {
    const a = await freshRun();
    const b = await freshRun();
    const c = await freshRun({ seed: 7 });
    const [siteA, siteB, siteC] = await Promise.all([a, b, c].map((r) => readAll(r.options.outDir)));
    expect(Object.keys(siteA!).length).toBeGreaterThanOrEqual(16);
    expect(siteB).toEqual(siteA);
    expect(await readAll(b.options.paidDir)).toEqual(await readAll(a.options.paidDir));
    expect(siteC!['api/main-brain.php']).not.toEqual(siteA!['api/main-brain.php']);
  });

  it('labels every public and paid body as simulated', async () => {
    const { options } = await freshRun();
    const bodies = { ...(await readAll(options.outDir)), ...(await readAll(options.paidDir)) };
    for (const [file, text] of Object.entries(bodies)) {
      expect(text, file).toMatch(/"simulated"|SIMULATED|simulated/);
    }
  });

  it('tells in every free body when the next update is due', async () => {
    const { options } = await freshRun();
    for (const [file, text] of Object.entries(await readAll(options.outDir))) {
      if (file.startsWith('api/history/')) continue; // the history's rows, not snapshot bodies (issue 19)
      expect(text, file).toContain('"next_update_due": "2026-11-21T12:01:00.000Z"');
    }
  });

  it('says simulated in the prose of the paid atlas, not only in a flag', async () => {
    const { options } = await freshRun();
    const atlas = JSON.parse(await readFile(join(options.paidDir, 'x402-atlas.json'), 'utf8')) as {
      summary: { text: string };
      limitations: string[];
    };
    expect(atlas.summary.text).toMatch(/^SIMULATED DATA\. /);
    expect(atlas.limitations[0]).toMatch(/^SIMULATED DATA:/);
  });

  it('keeps paid bodies out of the public site', async () => {
    const { options } = await freshRun();
    const publicFiles = await listFiles(options.outDir);
    expect(publicFiles.some((f) => f.includes('x402'))).toBe(false);
    expect((await listFiles(options.paidDir)).length).toBe(4);
  });

  it('leaves the last good files in place when a run fails, and reports the failure', async () => {
    const { options } = await freshRun();
    const before = { ...(await readAll(options.outDir)), ...(await readAll(options.paidDir)) };
    // Sabotage the last step: a folder where the run history must be written. (Published files are a fresh
    // generation each run, so damaging the served files no longer makes a run fail; the history write still can.)
    await rm(join(options.stateDir, 'run-history.json'));
    await mkdir(join(options.stateDir, 'run-history.json', 'blocker'), { recursive: true });

    const report = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
    expect(report.status).toBe('failed');
    expect(report.error).toMatch(/run-history|EISDIR|directory/i);
    const after = { ...(await readAll(options.outDir)), ...(await readAll(options.paidDir)) };
    expect(after).toEqual(before);
    const lastRun = JSON.parse(await readFile(join(options.stateDir, 'last-run.json'), 'utf8')) as {
      status: string;
    };
    expect(lastRun.status).toBe('failed');
    const status = JSON.parse(await readFile(join(options.outDir, 'status.json'), 'utf8')) as {
      status: string;
    };
    expect(status.status).toBe('failed');
  });
});

describe('leftovers of a killed run', () => {
  it('are removed at the start of the next run and never served', async () => {
    const { options } = await freshRun();
    const store = join(options.stateDir, 'published');
    // What a run killed mid-write leaves: a half generation of a dead process, a staged status and report.
    await mkdir(join(store, 'tmp-999999-0123abcd/api'), { recursive: true });
    await writeFile(join(store, 'tmp-999999-0123abcd/api/market-regime.php'), '{"half":');
    await writeFile(join(options.outDir, '.status.json.0123456789ab.tmp'), '{"half":');
    await writeFile(join(options.stateDir, '.last-run.json.0123456789ab.tmp'), '{"half":');
    const report = await runPipeline({ ...options, asOf: AS_OF + 3_600_000 });
    expect(report.status).toBe('ok');
    expect(await readdir(options.outDir)).toEqual(['api', 'arena', 'status.json']);
    expect((await readdir(options.stateDir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const generations = await readdir(store);
    expect(generations.filter((n) => n.startsWith('tmp-'))).toEqual([]);
    // The served generation and the one before it are kept; none older.
    expect(generations.filter((n) => n.startsWith('g-'))).toHaveLength(2);
  });
});

describe('a run where no source delivers anything', () => {
  it('publishes nothing, keeps the last good files and reports stale', async () => {
    const { options } = await freshRun();
    const before = await readAll(options.outDir);
    const report = await runPipeline({
      ...options,
      asOf: AS_OF + 3_600_000,
      collector: async (request) => ({
        asOf: request.asOf,
        mode: 'live',
        seed: null,
        provider: 'public venues',
        assets: request.symbols.map(emptyAsset),
        issues: [{ venue: 'binance-spot', symbol: null, section: 'all', message: 'HTTP 451' }],
      }),
    });
    expect(report.status).toBe('stale');
    expect(report.files_written).toBe(0);
    expect(report.issues[0]?.message).toBe('HTTP 451');
    expect(await readAll(options.outDir)).toEqual(before);
  });
});
