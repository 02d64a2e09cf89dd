// Pins the published history's rows and its check where a mutation audit found no test noticing a one-line change:
// - each row carries its own body's source status, the liquidity-lite row too (rows.ts), and the human-consensus
//   row keeps human and synthetic votes apart (README: "synthetic votes are never counted as human");
// - `emi validate` and the site build's history check (publish/validate-output.ts) fail a day file whose `date` is
//   not the day of its name, a CSV twin missing a record or disagreeing with its JSON twin, and an index that does
//   not list a day file that exists; with `known` (the site build), a failed file is never remembered as passed,
//   and a file changed after it passed is read again (history/passed-versions.ts).
// Published rules must be enforced, so each case breaks one file of a real run and names the failure it expects.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketRowsOf, rowsOfRun } from '../generator/history/index.ts';
import type { HistoryBodies } from '../generator/history/index.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { validateHistoryOutput } from '../generator/publish/validate-output.ts';
import type { FileCheck } from '../generator/publish/validate-output.ts';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const T0 = Date.parse('2026-05-20T10:00:00.000Z');
const DAY = '2026-05-20';

let root: string;
let site: string;
let bodies: HistoryBodies;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-history-checks-'));
  const dir = join(root, 'run');
  const report = await runPipeline(simulatedRun(dir, T0, { now: () => T0 }));
  expect(report.status).toBe('ok');
  site = join(dir, 'site');
  const body = async (path: string) => {
    const resource = FREE_RESOURCES.find((r) => r.path === path)!;
    return resource.schema.parse(JSON.parse(await readFile(join(site, resource.file), 'utf8')));
  };
  bodies = {
    marketRegime: await body('/api/market-regime.php'),
    mainBrain: await body('/api/main-brain.php'),
    liquidityLite: await body('/api/liquidity-lite.php'),
    derivatives: await body('/api/derivatives.php'),
    humanConsensus: await body('/api/human-consensus.php'),
    statistics: await body('/api/statistics.php'),
  } as HistoryBodies;
}, 60_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('history rows', () => {
  it("the liquidity-lite row is degraded when its body's source says so, and ok when it does not", () => {
    const withDegraded = (degraded: boolean) =>
      marketRowsOf({
        ...bodies,
        liquidityLite: {
          ...bodies.liquidityLite,
          source_details: { ...bodies.liquidityLite.source_details, degraded },
        },
      })['liquidity-lite'].source_status;
    expect(withDegraded(true)).toBe('degraded');
    expect(withDegraded(false)).toBe('ok');
  });

  it('the human-consensus row keeps 3 human votes and 7 synthetic ones apart', () => {
    const row = rowsOfRun({
      ...bodies,
      humanConsensus: {
        ...bodies.humanConsensus,
        vote_sources: { ...bodies.humanConsensus.vote_sources, human_votes: 3, synthetic_votes: 7 },
      },
    })['human-consensus'];
    expect(row.human_votes).toBe(3);
    expect(row.synthetic_votes).toBe(7);
  });
});

/** A copy of the run's site, every file its own (links followed). */
async function copyOfSite(): Promise<string> {
  const copy = await mkdtemp(join(root, 'copy-'));
  await cp(site, copy, { recursive: true, dereference: true });
  return copy;
}

async function editText(file: string, edit: (text: string) => string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const edited = edit(text);
  expect(edited).not.toBe(text); // the edit took
  await writeFile(file, edited);
}

const editJson = (file: string, edit: (json: Record<string, unknown>) => void): Promise<void> =>
  editText(file, (text) => {
    const json = JSON.parse(text) as Record<string, unknown>;
    edit(json);
    return JSON.stringify(json, null, 2);
  });

const failures = (checks: readonly FileCheck[]) =>
  checks.filter((check) => !check.ok).map(({ file, problems }) => ({ file, problems }));

const firstRow = (json: Record<string, unknown>) => (json.rows as Array<Record<string, unknown>>)[0]!;

describe('the history check', () => {
  it('passes the intact copy of a run (the cases below each break one file of it)', async () => {
    expect(failures(await validateHistoryOutput(await copyOfSite()))).toEqual([]);
  });

  it("fails a day file whose date is not the day of its name, though each row's time is", async () => {
    const copy = await copyOfSite();
    await editJson(join(copy, `api/history/market-regime/${DAY}.json`), (json) => {
      json.date = '2026-05-21';
    });
    expect(failures(await validateHistoryOutput(copy))).toEqual([
      {
        file: `api/history/market-regime/${DAY}.json`,
        problems: [`date: 2026-05-21 in the file of ${DAY}`],
      },
    ]);
  });

  it('fails a CSV twin that lost the record of its JSON twin’s row', async () => {
    const copy = await copyOfSite();
    // The header line alone is left.
    await editText(join(copy, `api/history/main-brain/${DAY}.csv`), (text) => text.split('\r\n')[0] + '\r\n');
    expect(failures(await validateHistoryOutput(copy))).toEqual([
      {
        file: `api/history/main-brain/${DAY}.csv`,
        problems: ['0 records for the 1 rows of its JSON twin'],
      },
    ]);
  });

  it('fails a CSV twin whose record disagrees with its JSON twin’s row', async () => {
    const copy = await copyOfSite();
    const json = JSON.parse(
      await readFile(join(copy, `api/history/market-regime/${DAY}.json`), 'utf8'),
    ) as Record<string, unknown>;
    const risk = String(firstRow(json).risk_score);
    // The record's risk score, changed: one digit more.
    await editText(join(copy, `api/history/market-regime/${DAY}.csv`), (text) =>
      text.replace(`,${risk},`, `,${risk}1,`),
    );
    expect(failures(await validateHistoryOutput(copy))).toEqual([
      {
        file: `api/history/market-regime/${DAY}.csv`,
        problems: ['record 1 after the header line disagrees with rows.0 of its JSON twin'],
      },
    ]);
  });

  it('fails an index that does not list a day whose files exist', async () => {
    const copy = await copyOfSite();
    let at = -1;
    await editJson(join(copy, 'api/history/index.json'), (json) => {
      const resources = json.resources as Array<{ resource: string; days: string[] }>;
      at = resources.findIndex((entry) => entry.resource === 'derivatives');
      resources[at]!.days = resources[at]!.days.filter((day) => day !== DAY);
    });
    expect(failures(await validateHistoryOutput(copy))).toEqual([
      {
        file: 'api/history/index.json',
        problems: [`resources.${at}.days: misses ${DAY} (files exist)`],
      },
    ]);
  });

  it('with known versions, a failed day file fails again: it is never remembered as passed', async () => {
    const copy = await copyOfSite();
    await editJson(join(copy, `api/history/statistics/${DAY}.json`), (json) => {
      firstRow(json).resolved_rounds = 'many';
    });
    for (const round of ['first', 'second']) {
      const failed = failures(await validateHistoryOutput(copy, { known: true }));
      expect(
        failed.map((check) => check.file),
        round,
      ).toEqual([`api/history/statistics/${DAY}.json`]);
    }
  });

  it('with known versions, a day file changed after it passed is read again and fails', async () => {
    const copy = await copyOfSite();
    expect(failures(await validateHistoryOutput(copy, { known: true }))).toEqual([]);
    // Changed in place (another size): another version, not the one that passed.
    await editJson(join(copy, `api/history/derivatives/${DAY}.json`), (json) => {
      firstRow(json).confidence = 'very high';
    });
    const failed = failures(await validateHistoryOutput(copy, { known: true }));
    expect(failed.map((check) => check.file)).toEqual([`api/history/derivatives/${DAY}.json`]);
  });
});
