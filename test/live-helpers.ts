// Shared by the live-source tests: fixture files served by the loopback replay server, and a live transport routed
// to it (never to the internet).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourcesConfigInput } from '../generator/sources/config.ts';
import { resolveConfig } from '../generator/sources/config.ts';
import { createConfiguredLiveTransport } from '../generator/sources/live.ts';
import type { ReplayServer, ServeHandler, ServedAnswer } from '../generator/sources/replay-server.ts';
import { venuesAt } from '../generator/sources/replay-server.ts';
import type { Transport } from '../generator/sources/transport.ts';

export const fixture = (path: string): string =>
  readFileSync(new URL(`fixtures/venues/${path}`, import.meta.url), 'utf8');

/** Routes "venue /path" (query ignored) to fixture files; anything else is a 404 like a venue's. */
export function fixtureHandler(routes: Record<string, string>): ServeHandler {
  return ({ venue, path }): ServedAnswer => {
    const file = routes[`${venue} ${path.split('?')[0]}`];
    return file ? { body: fixture(file) } : { status: 404, body: '{"msg":"not found"}' };
  };
}

/** Fast settings for tests: short timeouts and backoffs, every venue on the loopback server. */
export function testConfig(server: ReplayServer, extra: SourcesConfigInput = {}): SourcesConfigInput {
  return {
    ...extra,
    venues: { ...venuesAt(server), ...extra.venues },
    http: {
      timeoutMs: 2_000,
      retries: 0,
      backoffMs: 5,
      maxBackoffMs: 20,
      requestsPerSecond: 1000,
      ...extra.http,
    },
  };
}

export const liveTransportTo = (server: ReplayServer, extra: SourcesConfigInput = {}): Transport =>
  createConfiguredLiveTransport(resolveConfig(testConfig(server, extra)));

/** Writes `<dir>/emi.config.json` with testConfig's sources (every venue on the loopback server); returns its path. */
export async function writeLiveConfig(
  dir: string,
  server: ReplayServer,
  extra: SourcesConfigInput = {},
): Promise<string> {
  const config = join(dir, 'emi.config.json');
  await writeFile(config, JSON.stringify({ sources: testConfig(server, extra) }));
  return config;
}

const HOUR_MS = 3_600_000;

/**
 * The clock of a market that several real CLI runs read one after another: now, after waiting past the top of the
 * hour if fewer than `marginMs` of it are left. Each run takes its own minute as its as-of and keeps the bars closed
 * before it, so a run after the hour would read the simulator's forming bar as closed and its window a bar later.
 */
export async function marketClockInsideTheHour(marginMs: number): Promise<number> {
  const left = HOUR_MS - (Date.now() % HOUR_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
  return Date.now();
}
