import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots, type FreeSnapshots } from '../generator/engines/index.ts';
import {
  FIXTURE_CLOCK,
  fixtureAsset,
  fixtureSnapshot,
  reversal,
  universe,
  uptrend,
} from './helpers/market-fixtures.ts';
import type { DataMode } from '../schemas/common.ts';

const bodiesOf = (free: FreeSnapshots): Array<[string, Record<string, unknown>]> => [
  ['marketRegime', free.marketRegime],
  ['mainBrain', free.mainBrain],
  ['liquidityLite', free.liquidityLite],
  ['derivatives', free.derivatives],
  ...Object.entries(free.reasoning).map(([s, b]): [string, Record<string, unknown>] => [`reasoning/${s}`, b]),
];

const sourceObjectOf = (body: Record<string, unknown>) =>
  (body.source_details ?? body.source) as { mode: DataMode; simulated: boolean; seed: number | null };

const build = (mode: DataMode) =>
  buildFreeSnapshots(fixtureSnapshot(universe(uptrend, { mode }), { mode }), FIXTURE_CLOCK);

describe('honest labelling', () => {
  it('says SIMULATED in every body of a simulated run', () => {
    for (const [name, body] of bodiesOf(build('simulated'))) {
      expect(body.source_mode, name).toBe('simulated');
      expect(sourceObjectOf(body), name).toMatchObject({ mode: 'simulated', simulated: true, seed: 42 });
      expect(String(body.truth_statement), name).toMatch(/^SIMULATED DATA: /);
    }
  });

  it('marks simulated prices on every coin', () => {
    const free = build('simulated');
    for (const coin of Object.values(free.mainBrain.coins))
      expect(coin.price_source).toBe('binance-spot (simulated)');
  });

  it('names live venues and says replayed for replays', () => {
    for (const [name, body] of bodiesOf(build('live'))) {
      expect(sourceObjectOf(body), name).toMatchObject({ mode: 'live', simulated: false, seed: null });
      expect(String(body.truth_statement), name).toMatch(/^LIVE DATA: .*binance-spot/);
    }
    const replay = build('replay');
    expect(replay.mainBrain.coins.BTC!.price_source).toBe('binance-spot (replayed)');
    for (const [name, body] of bodiesOf(replay))
      expect(String(body.truth_statement), name).toMatch(/^REPLAYED DATA/);
  });

  it('takes every timestamp from the clock', () => {
    const free = build('simulated');
    expect(free.mainBrain.updated).toBe('2025-01-15T12:00:00.000Z');
    expect(free.mainBrain.source.generated_at).toBe('2025-01-15T12:00:00.000Z');
    expect(free.mainBrain.source.next_update_due).toBe('2025-01-15T12:01:00.000Z');
    expect(free.derivatives.updated_utc).toBe('2025-01-15T12:00:00.000Z');
  });
});

describe('determinism', () => {
  it('same input, same bytes', () => {
    const make = () =>
      JSON.stringify(
        buildFreeSnapshots(
          fixtureSnapshot([...universe(uptrend), fixtureAsset('DOGE', reversal())]),
          FIXTURE_CLOCK,
        ),
      );
    expect(make()).toBe(make());
  });
});

/** Key names that would reveal how evidence is weighted or normalised. */
const FORBIDDEN_KEY =
  /weight|score_internal|internal|normali[sz]|^signals?$|^lean$|^agreement$|^availability$|^mad$/i;

const keysOf = (value: unknown, path = '$'): string[] => {
  if (Array.isArray(value)) return value.flatMap((v, i) => keysOf(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keysOf(v, `${path}.${k}`)]);
  return [];
};

describe('nothing internal is published', () => {
  it('no body carries a weight, a raw signal or a normalisation parameter', () => {
    const free = buildFreeSnapshots(fixtureSnapshot(universe(reversal)), FIXTURE_CLOCK);
    const keys = keysOf(free).map((p) =>
      p
        .split('.')
        .pop()!
        .replace(/\[\d+\]$/, ''),
    );
    expect(keys.length).toBeGreaterThan(200);
    expect(keys.filter((k) => FORBIDDEN_KEY.test(k))).toEqual([]);
    // Prose may say that weighting is withheld, but never give a weight as a number.
    expect(JSON.stringify(free)).not.toMatch(/weight[^"]{0,20}\d/i);
  });
});

describe('scale', () => {
  it('builds 700 synthetic symbols quickly', () => {
    const symbols = Array.from({ length: 700 }, (_, i) => `S${String(i).padStart(4, '0')}`);
    const snapshot = fixtureSnapshot(universe(uptrend, {}, symbols));
    const started = performance.now();
    const free = buildFreeSnapshots(snapshot, FIXTURE_CLOCK);
    const elapsed = performance.now() - started;
    expect(Object.keys(free.reasoning)).toHaveLength(700);
    expect(free.marketRegime.regime.correlation.assets_sampled).toBe(30);
    expect(free.marketRegime.regime.limitations.join(' ')).toMatch(/first 30 assets/);
    expect(elapsed).toBeLessThan(5000);
  });
});
