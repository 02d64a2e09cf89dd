// The published history: rows per run, day rollover, retention, a restarted generator, schemas and CSV twins.
import { execFile } from 'node:child_process';
import { link, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HISTORY_RESOURCE_IDS,
  HISTORY_RESOURCES,
  HistoryDayFile,
  HistoryIndexFile,
  HistoryLatestFile,
  historyRowSchema,
} from '../schemas/history.ts';
import type { HistoryResourceId, HistoryRow } from '../schemas/history.ts';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import { parseCsv } from '../generator/history/csv.ts';
import { appendHistory, columnsOf, rowsOfRun } from '../generator/history/index.ts';
import { knownRows } from '../generator/history/day-rows-cache.ts';
import { prettyWithRows } from '../generator/history/store.ts';
import { fileIdentity } from '../generator/publish/file-identity.ts';
import type { HistoryBodies, RunRows } from '../generator/history/index.ts';
import { runPipeline } from '../generator/pipeline.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const run = promisify(execFile);
const DAY = 86_400_000;
const T0 = Date.parse('2026-05-20T10:00:00.000Z');

let root: string;
let sampleRows: RunRows;

const readJson = async (path: string): Promise<unknown> => JSON.parse(await readFile(path, 'utf8'));
const dayPath = (dir: string, id: string, day: string, ext = 'json') =>
  join(dir, 'api', 'history', id, `${day}.${ext}`);

async function generate(dir: string, asOf: number) {
  const report = await runPipeline(
    simulatedRun(dir, asOf, { stateDir: join(dir, 'state'), now: () => asOf }),
  );
  expect(report.status).toBe('ok');
}

/** The sample run's rows moved to another time. */
function rowsAt(iso: string, id: HistoryResourceId = 'market-regime'): HistoryRow[] {
  return [{ ...sampleRows[id], run_at: iso }];
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-history-'));
  await generate(join(root, 'sample'), T0);
  const site = join(root, 'sample', 'site');
  const body = async (path: string) => {
    const resource = FREE_RESOURCES.find((r) => r.path === path);
    return resource!.schema.parse(await readJson(join(site, resource!.file)));
  };
  sampleRows = rowsOfRun({
    marketRegime: await body('/api/market-regime.php'),
    mainBrain: await body('/api/main-brain.php'),
    liquidityLite: await body('/api/liquidity-lite.php'),
    derivatives: await body('/api/derivatives.php'),
    humanConsensus: await body('/api/human-consensus.php'),
    statistics: await body('/api/statistics.php'),
  } as HistoryBodies);
}, 60_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rows appended per run', () => {
  it('each run adds one row per resource to the day file, latest.json and the index', async () => {
    const dir = join(root, 'per-run');
    await generate(dir, T0);
    await generate(dir, T0 + 60_000);
    await generate(dir, T0 + 60_000); // the same as-of again replaces its row, never duplicates it
    const out = join(dir, 'site');
    for (const id of HISTORY_RESOURCE_IDS) {
      const day = HistoryDayFile.parse(await readJson(dayPath(out, id, '2026-05-20')));
      expect(day.rows.map((row) => row.run_at)).toEqual([
        '2026-05-20T10:00:00.000Z',
        '2026-05-20T10:01:00.000Z',
      ]);
      expect(day.rows.every((row) => row.data_mode === 'simulated')).toBe(true);
      // Each resource's own status (the default run's derivatives are degraded by XLM's and HBAR's venues).
      expect(day.rows.every((row) => row.source_status === sampleRows[id].source_status)).toBe(true);
      const latest = HistoryLatestFile.parse(await readJson(dayPath(out, id, 'latest')));
      expect(latest.rows).toEqual(day.rows);
    }
    const index = HistoryIndexFile.parse(await readJson(join(out, 'api', 'history', 'index.json')));
    expect(index.resources.map((r) => r.resource)).toEqual([...HISTORY_RESOURCE_IDS]);
    expect(index.resources[0]).toMatchObject({
      first_date: '2026-05-20',
      last_date: '2026-05-20',
      days: ['2026-05-20'],
    });
    expect(index.retention_days).toBe(400);
  }, 60_000);

  it('a restarted generator (another process) continues the same day file', async () => {
    // The child process reads the real clock: both runs lie in the current UTC day (days past are final).
    const first = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
    const second = first + 60_000;
    const dir = join(root, 'restart');
    await generate(dir, first);
    await run(
      process.execPath,
      [
        'bin/emi.js',
        'generate',
        '--as-of',
        new Date(second).toISOString(),
        '--out',
        join(dir, 'site'),
        '--paid',
        join(dir, 'paid'),
        '--state',
        join(dir, 'state'),
      ],
      { cwd: process.cwd() },
    );
    const day = new Date(second).toISOString().slice(0, 10);
    const file = HistoryDayFile.parse(await readJson(dayPath(join(dir, 'site'), 'main-brain', day)));
    const expected = [first, second]
      .map((ms) => new Date(ms).toISOString())
      .filter((iso) => iso.startsWith(day));
    expect(file.rows.map((row) => row.run_at)).toEqual(expected);
    expect(expected).toContain(new Date(second).toISOString());
  }, 60_000);
});

describe('days', () => {
  it('rolls over at midnight UTC, and a finished day file never changes again', async () => {
    const out = join(root, 'rollover');
    const late = Date.parse('2026-05-20T23:59:00.000Z');
    await appendHistory({ 'market-regime': rowsAt('2026-05-20T23:59:00.000Z') }, { root: out, now: late });
    const next = late + 2 * 60_000;
    await appendHistory({ 'market-regime': rowsAt('2026-05-21T00:01:00.000Z') }, { root: out, now: next });
    const before = await readFile(dayPath(out, 'market-regime', '2026-05-20'), 'utf8');
    expect(HistoryDayFile.parse(JSON.parse(before)).rows).toHaveLength(1);
    expect(
      HistoryDayFile.parse(await readJson(dayPath(out, 'market-regime', '2026-05-21'))).rows,
    ).toHaveLength(1);

    const result = await appendHistory(
      { 'market-regime': rowsAt('2026-05-20T23:30:00.000Z') },
      { root: out, now: next },
    );
    expect(result.appended).toBe(0);
    expect(result.refused[0]?.reason).toMatch(/is over/);
    expect(await readFile(dayPath(out, 'market-regime', '2026-05-20'), 'utf8')).toBe(before);
    const latest = HistoryLatestFile.parse(await readJson(dayPath(out, 'market-regime', 'latest')));
    expect(latest.rows.map((row) => row.run_at)).toEqual([
      '2026-05-20T23:59:00.000Z',
      '2026-05-21T00:01:00.000Z',
    ]);
  });

  it('a damaged day file is left as it is and reported, not overwritten', async () => {
    const out = join(root, 'damaged');
    await appendHistory(
      { statistics: rowsAt(new Date(T0).toISOString(), 'statistics') },
      { root: out, now: T0 },
    );
    await writeFile(dayPath(out, 'statistics', '2026-05-20'), '{"half":');
    const result = await appendHistory(
      { statistics: rowsAt(new Date(T0 + 60_000).toISOString(), 'statistics') },
      { root: out, now: T0 + 60_000 },
    );
    expect(result.refused[0]?.reason).toMatch(/damaged/);
    expect(await readFile(dayPath(out, 'statistics', '2026-05-20'), 'utf8')).toBe('{"half":');
  });
});

describe('a long-running process', () => {
  it("knows the day files it wrote, through the next generation's hard links, and sees a change made in place", async () => {
    const out = join(root, 'known');
    await appendHistory(
      { statistics: rowsAt(new Date(T0).toISOString(), 'statistics') },
      { root: out, now: T0 },
    );
    const file = dayPath(out, 'statistics', '2026-05-20');
    const next = join(root, 'known-next-generation.json');
    await link(file, next); // what the next generation's carry-over does
    expect(knownRows(fileIdentity(await stat(next)))?.map((row) => row.run_at)).toEqual([
      new Date(T0).toISOString(),
    ]);
    // Rewritten in place (not renamed over): another size and time, so another identity, read again.
    const body = HistoryDayFile.parse(await readJson(file));
    await writeFile(file, JSON.stringify({ ...body, rows: [] }));
    expect(knownRows(fileIdentity(await stat(file)))).toBeUndefined();
    const result = await appendHistory(
      { statistics: rowsAt(new Date(T0 + 60_000).toISOString(), 'statistics') },
      { root: out, now: T0 + 60_000 },
    );
    expect(result.appended).toBe(1);
    const day = HistoryDayFile.parse(await readJson(file));
    expect(day.rows.map((row) => row.run_at)).toEqual([new Date(T0 + 60_000).toISOString()]);
  });
});

describe('retention', () => {
  it('deletes day files older than the retention window and refuses rows older than it', async () => {
    const out = join(root, 'retention');
    const days = [0, 1, 2, 3, 4].map((n) => new Date(T0 + n * DAY).toISOString());
    await appendHistory(
      { derivatives: days.map((iso) => ({ ...sampleRows.derivatives, run_at: iso })) },
      { root: out, now: T0 + 4 * DAY, retentionDays: 10 },
    );
    expect(
      (await readdir(join(out, 'api', 'history', 'derivatives'))).filter((f) => f.endsWith('.json')),
    ).toHaveLength(6);
    const result = await appendHistory(
      { derivatives: rowsAt(new Date(T0 + 5 * DAY).toISOString(), 'derivatives') },
      { root: out, now: T0 + 5 * DAY, retentionDays: 2 },
    );
    expect(result.removed).toEqual([
      'derivatives/2026-05-20',
      'derivatives/2026-05-21',
      'derivatives/2026-05-22',
    ]);
    const files = (await readdir(join(out, 'api', 'history', 'derivatives'))).sort();
    expect(files).toEqual([
      '2026-05-23.csv',
      '2026-05-23.json',
      '2026-05-24.csv',
      '2026-05-24.json',
      '2026-05-25.csv',
      '2026-05-25.json',
      'latest.csv',
      'latest.json',
    ]);
    const index = HistoryIndexFile.parse(await readJson(join(out, 'api', 'history', 'index.json')));
    expect(index.resources.find((r) => r.resource === 'derivatives')?.first_date).toBe('2026-05-23');
    expect(index.retention_days).toBe(2);

    const old = await appendHistory(
      { derivatives: rowsAt(new Date(T0).toISOString(), 'derivatives') },
      { root: out, now: T0 + 5 * DAY, retentionDays: 2 },
    );
    expect(old.refused[0]?.reason).toMatch(/retention/);
  });

  it('latest.json keeps the last 500 rows across days', async () => {
    const out = join(root, 'latest');
    const rows = Array.from({ length: 620 }, (_, i) => ({
      ...sampleRows['market-regime'],
      run_at: new Date(T0 + i * 5 * 60_000).toISOString(),
    }));
    await appendHistory({ 'market-regime': rows }, { root: out, now: T0 + 620 * 5 * 60_000 });
    const latest = HistoryLatestFile.parse(await readJson(dayPath(out, 'market-regime', 'latest')));
    expect(latest.rows).toHaveLength(500);
    expect(latest.rows.at(-1)?.run_at).toBe(rows.at(-1)?.run_at);
    expect(latest.rows[0]?.run_at).toBe(rows[120]?.run_at);
  });
});

describe('schemas and CSV twins', () => {
  it('every row validates against its resource row schema; an invalid row is refused, never written', async () => {
    for (const id of HISTORY_RESOURCE_IDS) {
      expect(historyRowSchema(HISTORY_RESOURCES[id]).safeParse(sampleRows[id]).success).toBe(true);
      expect(Object.keys(sampleRows[id])).toEqual(columnsOf(id));
    }
    const out = join(root, 'invalid');
    const bad = { ...sampleRows['market-regime'], confidence: 'high' } as unknown as HistoryRow;
    const result = await appendHistory({ 'market-regime': [bad] }, { root: out, now: T0 });
    expect(result.appended).toBe(0);
    expect(result.refused).toHaveLength(1);
    const latest = HistoryLatestFile.parse(await readJson(dayPath(out, 'market-regime', 'latest')));
    expect(latest.rows).toEqual([]);
  });

  it('the CSV twins stay exact run after run in one process, and per resource for a row object given to two', async () => {
    const out = join(root, 'csv-runs');
    /** Each CSV record, as the JSON rows say it should read. */
    const expectTwins = async (id: HistoryResourceId, name: string) => {
      const json = (await readJson(dayPath(out, id, name))) as { columns: string[]; rows: HistoryRow[] };
      const [header, ...records] = parseCsv(await readFile(dayPath(out, id, name, 'csv'), 'utf8'));
      expect(header).toEqual(json.columns);
      expect(records).toEqual(
        json.rows.map((row) => json.columns.map((c) => (row[c] === null ? '' : String(row[c])))),
      );
      return json.rows.length;
    };
    // One object handed to two resources: each file lists it with its own columns.
    const shared = { ...sampleRows['market-regime'], ...sampleRows['human-consensus'] } as HistoryRow;
    for (let minute = 0; minute < 5; minute++) {
      const at = new Date(T0 + minute * 60_000).toISOString();
      const row = minute === 2 ? Object.assign(shared, { run_at: at }) : null;
      await appendHistory(
        {
          'market-regime': [row ?? { ...sampleRows['market-regime'], run_at: at }],
          'human-consensus': [
            row ?? { ...sampleRows['human-consensus'], run_at: at, round_id: `r-${minute}` },
          ],
        },
        { root: out, now: T0 + minute * 60_000 },
      );
    }
    for (const id of ['market-regime', 'human-consensus'] as const) {
      expect(await expectTwins(id, '2026-05-20')).toBe(5);
      expect(await expectTwins(id, 'latest')).toBe(5);
      // The JSON files, built from rows' kept texts, read as JSON.stringify(..., null, 2) prints them.
      for (const name of ['2026-05-20', 'latest']) {
        const text = await readFile(dayPath(out, id, name), 'utf8');
        expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
      }
    }
  });

  it('a file body with rows prints byte for byte as JSON.stringify(body, null, 2), rows kept or not', () => {
    const head = { resource: 'x', columns: ['a', 'b'], date: '2026-05-20' };
    const rows: object[] = [
      { a: 1, b: null },
      { a: -0.000123, b: 'line\nbreak "quoted" \\ back\tslash' },
      { a: 1e21, b: 'ünïcødé \u2028 ✓', c: [1, [2, { d: 'e' }]], e: {} },
      { a: [], b: true },
    ];
    const expected = (body: object) => `${JSON.stringify(body, null, 2)}\n`;
    expect(prettyWithRows({ ...head, rows: [] }).toString('utf8')).toBe(expected({ ...head, rows: [] }));
    for (let n = 1; n <= rows.length; n++) {
      const body = { ...head, rows: rows.slice(0, n) };
      expect(prettyWithRows(body).toString('utf8')).toBe(expected(body));
      // The second time from the kept bytes.
      expect(prettyWithRows(body).toString('utf8')).toBe(expected(body));
    }
  });

  it('the CSV twin holds the JSON rows, column for column', async () => {
    const out = join(root, 'csv');
    const tricky = { ...sampleRows['human-consensus'], round_id: 'a "quoted", id\nwith a break' };
    const rows = [tricky, { ...sampleRows['human-consensus'], run_at: new Date(T0 + 60_000).toISOString() }];
    await appendHistory({ 'human-consensus': rows }, { root: out, now: T0 + 60_000 });
    for (const name of ['2026-05-20', 'latest']) {
      const json = (await readJson(dayPath(out, 'human-consensus', name))) as {
        columns: string[];
        rows: HistoryRow[];
      };
      const [header, ...records] = parseCsv(
        await readFile(dayPath(out, 'human-consensus', name, 'csv'), 'utf8'),
      );
      expect(header).toEqual(json.columns);
      expect(records).toHaveLength(json.rows.length);
      records.forEach((record, i) => {
        const row = json.rows[i]!;
        json.columns.forEach((column, c) => {
          const value = row[column];
          expect(record[c]).toBe(value === null ? '' : String(value));
        });
      });
    }
  });
});
