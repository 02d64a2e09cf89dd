// Pins two published history rules where a mutation audit found that no test would notice a one-line change:
// - a backfill writes no day before a final day whose history begins mid-day, and "mid-day" is by the hour: a final
//   day whose first row is at 14:03 has its 14:00 hour on record, so a backfill row of 14:00 leaves no hole and the
//   days before it are written (README Decisions, "History and MCP"; the gapsOnly option of appendHistory);
// - each market resource's row carries its own body's source status, degraded when the body says so by its status
//   or by its source block (rows.ts).
// Published rules must be enforced, so each case states the rule with literal times and values.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendHistory, listDays, marketRowsOf, readDayRows } from '../generator/history/index.ts';
import type { MarketBodies } from '../generator/history/index.ts';
import { runPipeline } from '../generator/pipeline.ts';
import type { HistoryRow } from '../schemas/history.ts';
import { FREE_RESOURCES } from '../schemas/resources.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const T0 = Date.parse('2026-05-20T10:00:00.000Z');

let root: string;
let bodies: MarketBodies;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-history-pinned-'));
  const dir = join(root, 'sample');
  const report = await runPipeline(simulatedRun(dir, T0, { now: () => T0 }));
  expect(report.status).toBe('ok');
  const body = async (path: string) => {
    const resource = FREE_RESOURCES.find((r) => r.path === path)!;
    return resource.schema.parse(JSON.parse(await readFile(join(dir, 'site', resource.file), 'utf8')));
  };
  bodies = {
    marketRegime: await body('/api/market-regime.php'),
    mainBrain: await body('/api/main-brain.php'),
    liquidityLite: await body('/api/liquidity-lite.php'),
    derivatives: await body('/api/derivatives.php'),
  } as MarketBodies;
}, 60_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('a backfill before a final day that begins within its first hour', () => {
  it('writes the day before, since the 14:00 hour of a day beginning at 14:03 is on record', async () => {
    const site = join(root, 'hole-by-hour');
    const sample = marketRowsOf(bodies)['market-regime'];
    const at = (iso: string): HistoryRow => ({ ...sample, run_at: iso });
    const wall = Date.parse('2026-05-22T12:00:00.000Z');
    // Live runs: 2026-05-20 begins at 14:03; a run the next day makes it final.
    await appendHistory(
      { 'market-regime': [at('2026-05-20T14:03:00.000Z'), at('2026-05-21T10:00:00.000Z')] },
      { root: site, now: wall },
    );
    const dayBefore = Array.from(
      { length: 24 },
      (_, h) => `2026-05-19T${String(h).padStart(2, '0')}:00:00.000Z`,
    );
    const history = await appendHistory(
      { 'market-regime': [...dayBefore.map(at), at('2026-05-20T14:00:00.000Z')] },
      { root: site, now: wall, gapsOnly: true },
    );
    // Only the 14:00 row is kept out, and for its final day, not as a hole.
    expect(history.refused).toEqual([
      expect.objectContaining({ run_at: '2026-05-20T14:00:00.000Z', kind: 'final-day' }),
    ]);
    expect(history.appended).toBe(24);
    expect(await listDays(site, 'market-regime')).toEqual(['2026-05-19', '2026-05-20', '2026-05-21']);
    expect(((await readDayRows(site, 'market-regime', '2026-05-19')) ?? []).map((row) => row.run_at)).toEqual(
      dayBefore,
    );
  });
});

describe("a market resource's row carries its body's source status", () => {
  it('is degraded when the body says degraded in its status though its source block does not', () => {
    expect(bodies.marketRegime.source.degraded).toBe(false);
    const rows = marketRowsOf({
      ...bodies,
      marketRegime: { ...bodies.marketRegime, status: 'degraded' },
      mainBrain: {
        ...bodies.mainBrain,
        status: 'degraded',
        source: { ...bodies.mainBrain.source, degraded: false },
      },
      derivatives: {
        ...bodies.derivatives,
        status: 'degraded',
        source_details: { ...bodies.derivatives.source_details, degraded: false },
      },
    });
    expect(rows['market-regime'].source_status).toBe('degraded');
    expect(rows['main-brain'].source_status).toBe('degraded');
    expect(rows.derivatives.source_status).toBe('degraded');
  });

  it('is degraded when the source block says degraded, and ok when neither does', () => {
    const ok = {
      ...bodies,
      marketRegime: { ...bodies.marketRegime, status: 'available' },
      mainBrain: {
        ...bodies.mainBrain,
        status: 'available',
        source: { ...bodies.mainBrain.source, degraded: false },
      },
      derivatives: {
        ...bodies.derivatives,
        status: 'available',
        source_details: { ...bodies.derivatives.source_details, degraded: false },
      },
    } satisfies MarketBodies;
    const okRows = marketRowsOf(ok);
    expect(okRows['market-regime'].source_status).toBe('ok');
    expect(okRows['main-brain'].source_status).toBe('ok');
    expect(okRows.derivatives.source_status).toBe('ok');
    const rows = marketRowsOf({
      ...ok,
      marketRegime: { ...ok.marketRegime, source: { ...ok.marketRegime.source, degraded: true } },
      mainBrain: { ...ok.mainBrain, source: { ...ok.mainBrain.source, degraded: true } },
      derivatives: {
        ...ok.derivatives,
        source_details: { ...ok.derivatives.source_details, degraded: true },
      },
    });
    expect(rows['market-regime'].source_status).toBe('degraded');
    expect(rows['main-brain'].source_status).toBe('degraded');
    expect(rows.derivatives.source_status).toBe('degraded');
  });
});
