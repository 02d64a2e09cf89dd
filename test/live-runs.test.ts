// Whole runs: record a live run and replay it offline; configuration layers; the liquidation estimate and the
// cross-venue price check; the `emi` commands wired to them.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { createProgram } from '../generator/cli.ts';
import { collectFor } from '../generator/market-source.ts';
import type { MarketSnapshot } from '../generator/market/types.ts';
import { buildPlan, SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import { collectMarket } from '../generator/sources/collect.ts';
import { configFromEnv, loadSourcesConfig, resolveConfig } from '../generator/sources/config.ts';
import { disagreement } from '../generator/sources/price-check.ts';
import { RecordingIndex } from '../generator/sources/recording/recording-files.ts';
import { startReplayServer, transportHandler } from '../generator/sources/replay-server.ts';
import type { ReplayServer } from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { testConfig } from './live-helpers.ts';

const AS_OF = Date.UTC(2026, 4, 2, 9, 41, 5);
const SYMBOLS = ['BTC', 'ETH'];

let server: ReplayServer | undefined;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-live-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

const simulatorServer = async (asOf = AS_OF) => {
  server = await startReplayServer(transportHandler(createSimulatedTransport({ seed: 4, asOf })));
  return server;
};
const values = (snapshot: MarketSnapshot) =>
  snapshot.assets.map((a) => Object.values(a).map((s) => (s && typeof s === 'object' ? s.value : s)));

describe('record and replay', () => {
  it('replays a recorded live run offline with the same numbers, labelled replayed', async () => {
    const venues = await simulatorServer();
    const config = testConfig(venues, { order: SIMULATOR_ORDER, candleLimit: 48 });
    const record = join(dir, 'recording');
    const live = await collectFor('live', {
      seed: 0,
      asOf: AS_OF,
      symbols: SYMBOLS,
      config,
      env: {},
      recordDir: record,
    });
    expect(live.issues).toEqual([]);

    const index = RecordingIndex.parse(JSON.parse(await readFile(join(record, 'index.json'), 'utf8')));
    expect(index.asOf).toBe(new Date(AS_OF).toISOString());
    expect(index.entries).toHaveLength(venues.requests.length);
    expect((await readdir(record)).length).toBe(index.entries.length + 1);
    await venues.close();
    server = undefined;

    const replay = await collectFor('replay', {
      seed: 0,
      asOf: AS_OF,
      symbols: SYMBOLS,
      config,
      env: {},
      replayDir: record,
    });
    expect(replay.mode).toBe('replay');
    expect(replay.provider).toMatch(/^recorded responses of public venues/);
    expect(values(replay)).toEqual(values(live));
    expect(replay.assets[0]?.ticker?.provenance).toMatchObject({ venue: 'binance-spot', mode: 'replay' });
    const free = buildFreeSnapshots(replay, {
      asOf: AS_OF,
      generatedAt: AS_OF,
      nextUpdateDue: AS_OF + 60_000,
    });
    expect(free.mainBrain.coins.BTC?.price_source).toBe('binance-spot (replayed)');
  });

  it('fails only the section whose response was not recorded, naming the URL', async () => {
    const venues = await simulatorServer();
    const config = testConfig(venues, { order: SIMULATOR_ORDER, candleLimit: 48 });
    const record = join(dir, 'recording');
    await collectFor('live', { seed: 0, asOf: AS_OF, symbols: SYMBOLS, config, env: {}, recordDir: record });
    const indexPath = join(record, 'index.json');
    const index = RecordingIndex.parse(JSON.parse(await readFile(indexPath, 'utf8')));
    index.entries = index.entries.filter((e) => !e.url.includes('/api/v3/depth?symbol=ETHUSDT'));
    await writeFile(indexPath, JSON.stringify(index));

    const replay = await collectFor('replay', {
      seed: 0,
      asOf: AS_OF,
      symbols: SYMBOLS,
      config,
      env: {},
      replayDir: record,
    });
    expect(replay.assets[1]?.book).toBeNull();
    expect(replay.issues).toEqual([
      {
        venue: 'binance-spot',
        symbol: 'ETH',
        section: 'book',
        message: `no recorded response for GET https://api.binance.com/api/v3/depth?symbol=ETHUSDT&limit=100 (recording made for ${index.asOf})`,
      },
    ]);
    await expect(
      collectFor('replay', { seed: 0, asOf: AS_OF, symbols: SYMBOLS, replayDir: join(dir, 'none') }),
    ).rejects.toThrow(/no recording in .*index\.json is missing/);
  });
});

describe('configuration', () => {
  it('layers defaults, file, environment and code, key by key', async () => {
    const file = join(dir, 'emi.config.json');
    await writeFile(
      file,
      JSON.stringify({
        site: { ignored: 'another module reads this' },
        sources: { http: { timeoutMs: 5000, retries: 4 }, order: { ticker: ['coinbase', 'kraken'] } },
      }),
    );
    const config = await loadSourcesConfig({
      env: {
        EMI_CONFIG: file,
        EMI_HTTP_RETRIES: '1',
        EMI_SOURCE_ORDER_OPEN_INTEREST: 'bybit, okx',
        EMI_VENUE_URL_BINANCE_SPOT: 'https://data-api.binance.vision',
      },
    });
    expect(config.http).toMatchObject({ timeoutMs: 5000, retries: 1 });
    expect(config.order.ticker).toEqual(['coinbase', 'kraken']);
    expect(config.order.openInterest).toEqual(['bybit', 'okx']);
    expect(config.order.candles).toEqual(['binance-spot', 'coinbase', 'kraken']);
    expect(config.venues['binance-spot'].baseUrl).toBe('https://data-api.binance.vision');
    expect(config.venues.coingecko.requestsPerSecond).toBeLessThan(1);
  });

  it('accepts the example configuration shipped with the project', async () => {
    const example = new URL('../emi.config.example.json', import.meta.url).pathname;
    const config = await loadSourcesConfig({ file: example, env: {} });
    expect(config.venues['binance-spot'].baseUrl).toBe('https://data-api.binance.vision');
    expect(config.venues.okx.requestsPerSecond).toBe(8); // built-in per-venue rate kept
  });

  it('refuses unknown venues, venues that cannot serve a section, and typos', async () => {
    expect(() => configFromEnv({ EMI_SOURCE_ORDER_TICKER: 'binance-spot,ftx' })).toThrow(
      /invalid source configuration in environment/,
    );
    expect(() => resolveConfig({ order: { liquidations: ['bybit'] } })).toThrow(
      /bybit cannot serve liquidations: choose from okx/,
    );
    const typo = join(dir, 'typo.json');
    await writeFile(typo, JSON.stringify({ sources: { htttp: {} } }));
    await expect(loadSourcesConfig({ file: typo, env: {} })).rejects.toThrow(/htttp/);
  });
});

describe('estimates and cross-checks', () => {
  it('estimates liquidations from open-interest drops when no venue answers, and says so', async () => {
    const failing = { venue: 'okx', batchSize: 1, fetch: async () => Promise.reject(new Error('HTTP 503')) };
    const snapshot = await collectMarket({
      transport: createSimulatedTransport({ seed: 4, asOf: AS_OF }),
      symbols: TRACKED_ASSETS,
      asOf: AS_OF,
      seed: 4,
      plan: { ...buildPlan(SIMULATOR_ORDER), liquidations: [failing] },
      estimateLiquidations: true,
    });
    const btc = snapshot.assets[0]!;
    // An estimate names its input, not a venue that reported liquidations (binance-usdm reports none).
    expect(btc.liquidations?.provenance).toMatchObject({
      venue: 'estimate from binance-usdm open interest',
      estimated: true,
    });
    expect(snapshot.issues.find((i) => i.symbol === 'BTC')?.message).toBe('HTTP 503'); // the cause stays listed
    const free = buildFreeSnapshots(snapshot, {
      asOf: AS_OF,
      generatedAt: AS_OF,
      nextUpdateDue: AS_OF + 60_000,
    });
    expect(free.derivatives.assets.BTC?.liquidations?.estimated).toBe(true);
    expect(free.derivatives.limitations?.join(' ')).toMatch(/liquidation figures are estimates/);
    expect(free.derivatives.assets.BTC?.limitations?.join(' ')).toMatch(
      /BTC: liquidation figures are estimates/,
    );
    expect(free.derivatives.assets.BTC?.evidence?.join(' ')).toMatch(
      /An estimated upper bound, not liquidations observed/,
    );
  });

  it('reports a price gap between venues beyond the threshold', async () => {
    const simulated = createSimulatedTransport({ seed: 4, asOf: AS_OF });
    const base = await collectMarket({
      transport: simulated,
      symbols: SYMBOLS,
      asOf: AS_OF,
      seed: 4,
      candleLimit: 24,
    });
    const [btc, eth] = base.assets.map((a) => a.ticker!.value.last);
    const gecko = (usd: number) => ({
      usd,
      usd_24h_vol: 1,
      usd_24h_change: 0,
      last_updated_at: AS_OF / 1000,
    });
    server = await startReplayServer((request) =>
      request.venue === 'coingecko'
        ? { body: JSON.stringify({ bitcoin: gecko(btc! * 1.02), ethereum: gecko(eth! * 1.004) }) }
        : transportHandler(simulated)(request),
    );
    const snapshot = await collectFor('live', {
      seed: 0,
      asOf: AS_OF,
      symbols: SYMBOLS,
      env: {},
      config: testConfig(server, {
        order: { ...SIMULATOR_ORDER, ticker: ['binance-spot', 'coingecko'] },
        candleLimit: 24,
      }),
    });
    expect(snapshot.issues).toEqual([
      {
        venue: 'binance-spot',
        symbol: 'BTC',
        section: 'ticker',
        message: expect.stringMatching(
          /differs from coingecko .* by 1\.96 %, beyond the 1 % cross-venue threshold$/,
        ),
      },
    ]);
    const primary = snapshot.assets[0]!.ticker!;
    expect(
      disagreement('BTC', primary, { ...primary, value: { ...primary.value, last: btc! * 1.009 } }, 1),
    ).toBeNull();
  });
});

describe('emi commands', () => {
  it('generate --source live --record, then --source replay, through the pipeline; sources check prints a table', async () => {
    // A live run describes the current minute (an --as-of in the past is refused): the simulated venues answer now.
    const now = Math.floor(Date.now() / 1000) * 1000;
    const venues = await simulatorServer(now);
    const configFile = join(dir, 'emi.config.json');
    await writeFile(
      configFile,
      JSON.stringify({ sources: testConfig(venues, { order: SIMULATOR_ORDER, candleLimit: 60 }) }),
    );
    const folders = (name: string) => [
      '--out',
      join(dir, name, 'site'),
      '--paid',
      join(dir, name, 'paid'),
      '--state',
      join(dir, name, 'var'),
    ];
    const record = join(dir, 'recording');
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const asOf = new Date(now).toISOString();
      await createProgram().parseAsync([
        'node',
        'emi',
        'generate',
        '--source',
        'live',
        '--as-of',
        asOf,
        '--record',
        record,
        '--config',
        configFile,
        ...folders('live'),
      ]);
      await venues.close();
      server = undefined;
      await createProgram().parseAsync([
        'node',
        'emi',
        'generate',
        '--source',
        'replay',
        '--replay',
        record,
        '--config',
        configFile,
        ...folders('replay'),
      ]);
      const lines = log.mock.calls.map((call) => String(call[0]));
      // The replay describes the recorded instant without being told (no --as-of).
      expect(lines[0]).toMatch(
        new RegExp(`^generated \\d+ files for ${asOf.replace(/\./g, '\\.')} \\[live, ok\\]`),
      );
      expect(lines[1]).toMatch(
        new RegExp(`^generated \\d+ files for ${asOf.replace(/\./g, '\\.')} \\[replay, ok\\]`),
      );
      const brain = (name: string) =>
        readFile(join(dir, name, 'site', 'api', 'main-brain.php'), 'utf8').then(JSON.parse);
      const [liveBrain, replayBrain] = await Promise.all([brain('live'), brain('replay')]);
      expect(replayBrain.coins.BTC.price).toBe(liveBrain.coins.BTC.price);
      expect(replayBrain.coins.BTC.price_source).toBe('binance-spot (replayed)');

      log.mockClear();
      await createProgram().parseAsync([
        'node',
        'emi',
        'sources',
        'check',
        '--source',
        'replay',
        '--replay',
        record,
        '--config',
        configFile,
      ]);
      const table = log.mock.calls.map((call) => String(call[0])).join('\n');
      expect(table).toMatch(/^venue\s+status\s+latency\s+probe\s+assets/);
      expect(table).toMatch(/binance-spot\s+ok\s+\d+ ms\s+ticker\s+7\/7 BTC,ETH,XRP,SOL,ALGO,XLM,HBAR/);
      expect(table).toMatch(
        /coinbase\s+failed .* no recorded response for GET https:\/\/api\.exchange\.coinbase/,
      );
    } finally {
      log.mockRestore();
    }
  });
});
