// Data honesty at collection: a run describes only the time its data is from (a live run the current minute, a
// replay its recording's time, and no venue value older or later than its kind allows passes as current), and
// liquidations estimated from open-interest drops are off by default and never credited to a venue as observed.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { createProgram } from '../generator/cli.ts';
import { collectFor, sourceFlagsProblem } from '../generator/market-source.ts';
import type { Provenance, Ticker24h } from '../generator/market/types.ts';
import { buildPlan, DEFAULT_LIVE_ORDER, SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import type { SectionSource } from '../generator/sources/adapters/source.ts';
import { resolveSourceFlags } from '../generator/sources/cli.ts';
import { collectMarket, collectSimulatedMarket } from '../generator/sources/collect.ts';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { loadSourcesConfig } from '../generator/sources/config.ts';
import { createReplayTransport } from '../generator/sources/recording/replay-transport.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { VENUE_IDS } from '../generator/sources/venues.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The audit's recording time, and the later time it was replayed for. */
const RECORDED = Date.parse('2026-03-10T12:05:00Z');
const LATER = Date.parse('2026-03-12T18:05:00Z');

/** A fetch answered by the simulated venues at `asOf` (no network, no port); `fail` URLs answer 503. */
function simulatedVenues(asOf: number, fail: (url: string) => boolean = () => false): typeof fetch {
  const venues = createSimulatedTransport({ seed: 42, asOf, listings: 'with-gaps' });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    if (fail(url)) return new Response('{"msg":"Service Unavailable"}', { status: 503 });
    const method = init?.method === 'POST' ? 'POST' : 'GET';
    const body = method === 'POST' ? String(init?.body) : undefined;
    const answer = await venues.fetch({ url, method, body });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  }) as typeof fetch;
}

const fast = (extra: SourcesConfigInput = {}): SourcesConfigInput => ({
  candleLimit: 48,
  http: { retries: 0, timeoutMs: 2_000, backoffMs: 5, maxBackoffMs: 20, requestsPerSecond: 1000 },
  ...extra,
});

/** A live-shaped run of BTC and ETH at `asOf`, its venues answering at `venuesAt`. */
const liveRun = (asOf: number, venuesAt: number, extra: Partial<Parameters<typeof collectFor>[1]> = {}) =>
  collectFor('live', {
    seed: 0,
    asOf,
    symbols: ['BTC', 'ETH'],
    env: {},
    config: fast(),
    fetch: simulatedVenues(venuesAt),
    ...extra,
  });

let dir: string;
let recording: string;
/** A configuration that sends every venue call to a closed local port: a live run that was not refused fails fast. */
let offline: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-stale-'));
  recording = join(dir, 'recording');
  await liveRun(RECORDED, RECORDED, { recordDir: recording });
  offline = join(dir, 'offline.json');
  const venues = Object.fromEntries(VENUE_IDS.map((v) => [v, { baseUrl: `http://127.0.0.1:18419/${v}` }]));
  await writeFile(offline, JSON.stringify({ sources: { venues, http: { retries: 0, timeoutMs: 1000 } } }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('A: --as-of a live or replayed run cannot describe is a usage error', () => {
  it('a live run describes the current minute only: the venues answer with the present', () => {
    const now = RECORDED + 3 * 24 * HOUR;
    expect(sourceFlagsProblem('live', { asOf: RECORDED, now })).toMatch(
      /^--as-of 2026-03-10T12:05:00\.000Z is not the current minute .*venues answer with their current prices/,
    );
    expect(sourceFlagsProblem('live', { asOf: now - 30_000, now })).toBeNull();
    expect(sourceFlagsProblem('live', { now })).toBeNull(); // no --as-of: the run takes the clock's minute
    expect(sourceFlagsProblem('sim', { asOf: RECORDED, now })).toBeNull(); // the simulator describes any time
  });

  it("a replay describes its recording's time only (index.json asOf), within a minute", () => {
    expect(sourceFlagsProblem('replay', { replayDir: recording, asOf: LATER })).toMatch(
      /^--as-of 2026-03-12T18:05:00\.000Z is not the time of the recording in .* \(2026-03-10T12:05:00\.000Z\)/,
    );
    expect(sourceFlagsProblem('replay', { replayDir: recording, asOf: RECORDED + 30_000 })).toBeNull();
    expect(sourceFlagsProblem('replay', { replayDir: recording })).toBeNull();
  });

  it('the run refuses too: generate (resolveSourceFlags) and a replay in code', async () => {
    await expect(resolveSourceFlags({ source: 'replay', replay: recording, asOf: LATER })).rejects.toThrow(
      /is not the time of the recording/,
    );
    await expect(resolveSourceFlags({ source: 'live', asOf: RECORDED }, LATER)).rejects.toThrow(
      /is not the current minute/,
    );
    await expect(resolveSourceFlags({ source: 'replay', replay: recording })).resolves.toMatchObject({
      asOf: RECORDED,
    });
    await expect(
      collectFor('replay', { seed: 0, asOf: LATER, symbols: ['BTC'], env: {}, replayDir: recording }),
    ).rejects.toThrow(/is not the time of the recording/);
  });

  it.each([
    ['replay', ['--source', 'replay', '--replay', '<recording>', '--as-of', '2026-03-12T18:05:00Z']],
    ['live', ['--source', 'live', '--as-of', '2026-03-10T12:05:00Z']],
  ])('emi generate --source %s with such an --as-of writes nothing', async (name, flags) => {
    const out = join(dir, `cli-${name}`);
    const args = flags.map((flag) => (flag === '<recording>' ? recording : flag));
    const folders = ['--out', join(out, 'site'), '--paid', join(out, 'paid'), '--state', join(out, 'var')];
    // The configuration hook ends a usage mistake with exit code 2; the run's own check throws.
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${String(code)}`);
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await expect(
        createProgram().parseAsync(['node', 'emi', 'generate', ...args, ...folders, '--config', offline]),
      ).rejects.toThrow(/is not the (time of the recording|current minute)|^exit 2$/);
    } finally {
      exit.mockRestore();
      stderr.mockRestore();
    }
    const written = await readdir(out, { recursive: true }).catch(() => []);
    expect(written.filter((f) => /\.(php|json)$/.test(String(f)))).toEqual([]);
  });
});

describe('A: a value whose venue time does not describe the run is not used as current', () => {
  const ticker: Ticker24h = { last: 100, change24h: 0, quoteVolume24h: 1e6, bid: null, ask: null };
  /** A ticker source whose values carry the venue time `at(asOf)`. */
  const tickerAt = (venue: string, at: (asOf: number) => number): SectionSource<'ticker'> => ({
    venue,
    batchSize: 10,
    fetch: async (symbols, context) => {
      const provenance: Provenance = { venue, asOf: at(context.asOf), mode: 'live', estimated: false };
      return new Map(symbols.map((symbol) => [symbol, { value: ticker, provenance }]));
    },
  });
  const collectTickers = (sources: SectionSource<'ticker'>[]) =>
    collectMarket({
      transport: createSimulatedTransport({ seed: 1, asOf: RECORDED }),
      symbols: ['BTC'],
      asOf: RECORDED,
      seed: null,
      plan: { ...buildPlan(SIMULATOR_ORDER), ticker: sources },
    });

  it('a ticker 10 minutes old is a source issue and the next venue is asked', async () => {
    const old = tickerAt('old-venue', (asOf) => asOf - 10 * MINUTE);
    const alone = await collectTickers([old]);
    expect(alone.assets[0]?.ticker).toBeNull();
    expect(alone.issues).toEqual([
      {
        venue: 'old-venue',
        symbol: 'BTC',
        section: 'ticker',
        message:
          "stale: the venue's ticker is from 2026-03-10T11:55:00.000Z, 10 min before the run's as-of " +
          '2026-03-10T12:05:00.000Z (at most 5 min allowed); not used as current data',
      },
    ]);
    const fallback = await collectTickers([old, tickerAt('fresh-venue', (asOf) => asOf - MINUTE)]);
    expect(fallback.assets[0]?.ticker?.provenance.venue).toBe('fresh-venue');
    expect(fallback.issues).toEqual([]);
  });

  it("a ticker from well after the run's as-of is not data for that time", async () => {
    const later = await collectTickers([tickerAt('later-venue', (asOf) => asOf + 2 * HOUR)]);
    expect(later.assets[0]?.ticker).toBeNull();
    expect(later.issues[0]?.message).toMatch(
      /, 2 h after the run's as-of .*; it does not describe that time$/,
    );
  });

  it('a recording answered for a later as-of: old ticker, candles and open interest become issues', async () => {
    // What the audit's replay did (the run now refuses it; the collector would not publish it as current either).
    const snapshot = await collectMarket({
      transport: await createReplayTransport(recording),
      symbols: ['BTC', 'ETH'],
      asOf: LATER,
      seed: null,
      plan: buildPlan(DEFAULT_LIVE_ORDER),
      candleLimit: 48, // as recorded (the URL carries it)
    });
    const btc = snapshot.assets[0]!;
    expect([btc.ticker, btc.candles, btc.openInterest, btc.funding]).toEqual([null, null, null, null]);
    const stale = (section: string) =>
      snapshot.issues.find(
        (i) => i.symbol === 'BTC' && i.section === section && i.venue.startsWith('binance'),
      );
    expect(stale('ticker')?.message).toMatch(/^stale: .*2026-03-10T12:0\d.*2 d 6 h before the run's as-of/);
    expect(stale('candles')?.message).toMatch(
      /^stale: the venue's last closed hourly bar .*at most 2 h allowed/,
    );
    expect(stale('openInterest')?.message).toMatch(/^stale: the venue's open interest /);
    // The audit's "$0 of longs and $0 of shorts": OKX's recorded window is not the later day's.
    expect(btc.liquidations).toBeNull();
    expect(snapshot.issues.find((i) => i.symbol === 'BTC' && i.section === 'liquidations')?.message).toMatch(
      /^stale: the venue's liquidation total is from 2026-03-10T12:05:00\.000Z/,
    );
  });

  it("a live run asked for a past as-of gets today's ticker: not published for that time", async () => {
    // Binance states its ticker's time; a venue that states none (Coinbase's stats) is stamped with the run's
    // as-of in a live run, which is why the run refuses an --as-of that is not the current minute.
    const today = Date.parse('2026-11-26T05:00:00Z');
    const snapshot = await liveRun(RECORDED, today, { config: fast({ order: SIMULATOR_ORDER }) });
    expect(snapshot.assets[0]?.ticker).toBeNull();
    const issue = snapshot.issues.find((i) => i.symbol === 'BTC' && i.section === 'ticker');
    expect(issue?.message).toMatch(/from 2026-11-26T0.*after the run's as-of 2026-03-10T12:05:00\.000Z/);
  });

  it('the default simulated run is untouched at any minute of the hour: no issue', async () => {
    for (const asOf of [Date.parse('2026-03-10T12:00:00Z'), Date.parse('2026-03-10T12:59:59.999Z')]) {
      const snapshot = await collectSimulatedMarket({ seed: 42, asOf, symbols: TRACKED_ASSETS });
      expect(snapshot.issues).toEqual([]);
    }
  });
});

describe('B: liquidations estimated from open interest', () => {
  const okxLiquidationsDown = (url: string) => url.includes('/api/v5/public/liquidation-orders');

  it('are off by default: a failed OKX leaves liquidations missing, the failure listed', async () => {
    expect((await loadSourcesConfig({ env: {} })).estimateLiquidations).toBe(false);
    const snapshot = await liveRun(RECORDED, RECORDED, {
      fetch: simulatedVenues(RECORDED, okxLiquidationsDown),
    });
    expect(snapshot.assets.map((a) => a.liquidations)).toEqual([null, null]);
    expect(snapshot.issues.filter((i) => i.symbol === 'BTC')).toEqual([
      { venue: 'okx', symbol: 'BTC', section: 'liquidations', message: expect.stringMatching(/^HTTP 503/) },
    ]);
  });

  it('when asked for: labelled estimated, credited to no venue, no hours counted as events', async () => {
    const snapshot = await liveRun(RECORDED, RECORDED, {
      fetch: simulatedVenues(RECORDED, okxLiquidationsDown),
      config: fast({ estimateLiquidations: true }),
    });
    const liquidations = snapshot.assets[0]?.liquidations;
    expect(liquidations?.provenance).toMatchObject({
      venue: 'estimate from binance-usdm open interest',
      estimated: true,
    });
    expect(VENUE_IDS as readonly string[]).not.toContain(liquidations?.provenance.venue);
    expect(liquidations?.value.longUsd24h ?? 0).toBeGreaterThan(0);
    expect(liquidations?.value.events).toBe(0);
  });
});
