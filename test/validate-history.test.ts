// `emi validate` checks the published history too (README: "a folder of output against the schemas ... non-zero
// exit on any failure"): the index, each resource's latest.json and every day file, each row by its resource's row
// schema, and each CSV twin's header line. A built site copied as an operator would (`cp -rL dist`), then broken
// file by file; the real `emi` command reads it.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { buildSite } from '../generator/site/build.ts';
import { HISTORY_RESOURCE_IDS } from '../schemas/history.ts';
import { runEmi } from './ops-cli.ts';
import { FIRST_RUN, TEST_BASE_URL, copyTemplates } from './site-fixture.ts';

const DAY_MS = 86_400_000;
/** The free and reasoning files `emi validate` checked before the history. */
const SNAPSHOT_FILES = 16;
const DAYS = ['2026-01-05', '2026-01-06'];

let root: string;
let dist: string;

/** A copy of the built site, symbolic links followed (`cp -rL dist`). */
async function copyOfSite(): Promise<string> {
  const copy = await mkdtemp(join(root, 'copy-'));
  await cp(dist, copy, { recursive: true, dereference: true });
  return copy;
}

async function editJson(file: string, edit: (json: Record<string, unknown>) => void): Promise<void> {
  const json = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  edit(json);
  await writeFile(file, JSON.stringify(json, null, 2));
}

const firstRow = (json: Record<string, unknown>) => (json.rows as Array<Record<string, unknown>>)[0]!;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-validate-history-'));
  const siteDir = join(root, 'site');
  await mkdir(siteDir, { recursive: true });
  await copyTemplates(siteDir);
  // Two runs a day apart: two day files per resource, the first one final.
  for (const asOf of [FIRST_RUN, FIRST_RUN + DAY_MS]) {
    const report = await runPipeline({
      outDir: siteDir,
      paidDir: join(root, 'paid'),
      stateDir: join(root, 'var'),
      source: 'sim',
      seed: 7,
      asOf,
    });
    expect(report.status).not.toBe('failed');
  }
  dist = join(root, 'dist');
  await buildSite({ siteDir, outDir: dist, baseUrl: TEST_BASE_URL });
}, 240_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('emi validate on the published history', () => {
  it('checks the index, every latest and day file and their CSV twins of an intact site: exit 0', async () => {
    const run = await runEmi(root, ['validate', await copyOfSite()]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // The index, then per resource latest.json and .csv, and a JSON and a CSV file per day.
    const historyFiles = 1 + HISTORY_RESOURCE_IDS.length * (2 + 2 * DAYS.length);
    expect(run.stdout).toContain(`${SNAPSHOT_FILES + historyFiles} passed, 0 failed`);
    expect(run.stdout).toMatch(/^ok {3}api\/history\/index\.json$/m);
    // A resource's files are one line (a 400-day history holds thousands): latest and every day, JSON and CSV.
    for (const id of HISTORY_RESOURCE_IDS) {
      expect(run.stdout).toMatch(
        new RegExp(`^ok {3}api/history/${id}/ \\(${2 + 2 * DAYS.length} files\\)$`, 'm'),
      );
    }
    expect(run.stdout).not.toMatch(/^ok {3}api\/history\/[^/]+\/\S+\.(json|csv)$/m);
  }, 60_000);

  it('fails a latest.json with a row of the wrong type and a wrong resource (the auditor’s repro)', async () => {
    const copy = await copyOfSite();
    await editJson(join(copy, 'api/history/market-regime/latest.json'), (json) => {
      json.resource = 'bogus';
      firstRow(json).confidence = 'very high';
    });
    const run = await runEmi(root, ['validate', copy]);
    expect(run.code, run.stdout).toBe(1);
    expect(run.stdout).toMatch(/^FAIL api\/history\/market-regime\/latest\.json: .*resource: /m);
    expect(run.stdout).toMatch(/^FAIL api\/history\/market-regime\/latest\.json: .*rows\.0\.confidence: /m);
    expect(run.stdout).toMatch(/ 1 failed$/m);
  }, 60_000);

  it('names each broken day file, index and CSV twin, and counts them', async () => {
    const copy = await copyOfSite();
    const history = join(copy, 'api/history');
    // A day file's row with a price that is no number, in a final day.
    await editJson(join(history, `main-brain/${DAYS[0]}.json`), (json) => {
      firstRow(json).btc_price = 'abc';
    });
    // A day file whose row belongs to another day.
    await editJson(join(history, `statistics/${DAYS[1]}.json`), (json) => {
      firstRow(json).run_at = '2025-12-31T00:00:00.000Z';
    });
    // A CSV twin whose header lost a column.
    const csv = join(history, 'derivatives/latest.csv');
    await writeFile(csv, (await readFile(csv, 'utf8')).replace('run_at,', ''));
    // A day file the index lists, gone.
    await rm(join(history, `liquidity-lite/${DAYS[0]}.json`));
    const run = await runEmi(root, ['validate', copy]);
    expect(run.code, run.stdout).toBe(1);
    expect(run.stdout).toMatch(
      new RegExp(`^FAIL api/history/main-brain/${DAYS[0]}\\.json: .*rows\\.0\\.btc_price: `, 'm'),
    );
    expect(run.stdout).toMatch(
      new RegExp(
        `^FAIL api/history/statistics/${DAYS[1]}\\.json: rows\\.0\\.run_at: .* is not on ${DAYS[1]}`,
        'm',
      ),
    );
    expect(run.stdout).toMatch(/^FAIL api\/history\/derivatives\/latest\.csv: header line /m);
    expect(run.stdout).toMatch(
      new RegExp(`^FAIL api/history/liquidity-lite/${DAYS[0]}\\.json: file is missing or unreadable$`, 'm'),
    );
    expect(run.stdout).toMatch(/ 4 failed$/m);
  }, 60_000);

  it('fails an index that is no JSON', async () => {
    const copy = await copyOfSite();
    await writeFile(join(copy, 'api/history/index.json'), '{"resources": [');
    const run = await runEmi(root, ['validate', copy]);
    expect(run.code, run.stdout).toBe(1);
    expect(run.stdout).toMatch(/^FAIL api\/history\/index\.json: not JSON: /m);
    expect(run.stdout).toMatch(/ 1 failed$/m);
  }, 60_000);
});
