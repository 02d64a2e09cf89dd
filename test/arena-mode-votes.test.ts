// Votes are split by data mode as rounds are: a live or replay file neither shows nor counts the synthetic crowd of
// the simulated market, and counts people's votes only in rounds of its own mode (or not called yet). The audit:
// after the default run and `emi backfill` on a state folder, a `--source live` run published statistics.php with
// mode "live", 0 resolved rounds and votes_total 2722 (2699 replayed), and a human-consensus.php whose
// simulated_crowd read "BULLISH" from 23 synthetic votes "that fill the arena in simulated mode".
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { SIMULATOR_ORDER } from '../generator/sources/adapters/plan.ts';
import {
  startReplayServer,
  transportHandler,
  type ReplayServer,
} from '../generator/sources/replay-server.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { importVotesJsonl } from '../generator/state/votes.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import type { HumanConsensusResponse, SharedIntelligenceResponse } from '../schemas/arena.ts';
import type { StatisticsResponse } from '../schemas/statistics.ts';
import { HOUR, MINUTE, step, T0, tempStore } from './arena-fixtures.ts';
import { marketClockInsideTheHour, writeLiveConfig } from './live-helpers.ts';
import { generateArgs, liveGenerateArgs, runEmi, type Finished } from './ops-cli.ts';

let server: ReplayServer | undefined;
let dir: string | undefined;
const stores: ArenaStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) if (s.db.open) s.close();
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ok = (run: Finished): void => expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
const json = async <T>(file: string): Promise<T> =>
  JSON.parse(await readFile(join(dir!, 'site', file), 'utf8')) as T;

describe('emi backfill and the default run, then a --source live run on the same state folder', () => {
  it('publishes no synthetic vote in the live files and counts the votes of other modes apart, named', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-mode-votes-'));
    // The next few seconds stay inside one UTC hour: the runs must share the open round.
    const now = Math.floor((await marketClockInsideTheHour(30_000)) / MINUTE) * MINUTE;
    const asOf = new Date(now).toISOString();
    // Live-shaped venues on loopback, answering with the simulated market of now.
    server = await startReplayServer(transportHandler(createSimulatedTransport({ seed: 4, asOf: now })));
    const config = await writeLiveConfig(dir, server, { order: SIMULATOR_ORDER, candleLimit: 60 });

    ok(await runEmi(dir, ['backfill', '--days', '1', '--as-of', asOf, '--state', 'var', '--out', 'site']));
    ok(await runEmi(dir, generateArgs(asOf)));
    // A person votes in a round no run has called yet: such a vote counts in every mode.
    const later = roundAt(now + 2 * HOUR);
    ok(
      await runEmi(dir, [
        'arena',
        'vote',
        '--asset',
        later.asset,
        '--prediction',
        'bullish',
        '--voter',
        'alice',
        '--round',
        later.id,
      ]),
    );
    const simulated = await json<StatisticsResponse>('api/statistics.php');
    expect(simulated.arena.vote_sources.replayed_votes).toBeGreaterThan(0);
    expect(simulated.arena.vote_sources.synthetic_votes).toBeGreaterThan(0);
    const simulatedRound = await json<HumanConsensusResponse>('api/human-consensus.php');
    const crowd = simulatedRound.simulated_crowd!.consensus.total;
    expect(crowd).toBeGreaterThanOrEqual(8);

    ok(await runEmi(dir, liveGenerateArgs(config)));
    const statistics = await json<StatisticsResponse>('api/statistics.php');
    expect(statistics.mode).toBe('live');
    expect(statistics.main_brain.public_performance.resolved_rounds).toBe(0);
    // Before: rounds_with_votes 25 and votes_total in the hundreds, the replayed synthetic crowd of the backfill.
    expect(statistics.arena).toMatchObject({
      rounds_with_votes: 1,
      rounds_with_human_votes: 1,
      votes_total: 1,
      distinct_human_voters: 1,
      vote_sources: {
        human_votes: 1,
        synthetic_votes: 0,
        replayed_votes: 0,
        // Every vote of the simulated files, written before alice voted: the backfill's and the open round's.
        other_mode_votes: simulated.arena.votes_total,
      },
    });
    expect(statistics.arena.vote_sources.synthetic_label).toMatch(
      new RegExp(`${simulated.arena.votes_total} votes of another data mode \\(simulated\\)`),
    );
    expect(statistics.developer_note).toMatch(/other_mode_votes/);

    // The open round: the simulated run's synthetic crowd is not shown, and the file says why.
    const round = await json<HumanConsensusResponse>('api/human-consensus.php');
    expect(round.round.round_id).toBe(simulatedRound.round.round_id);
    expect(round.simulated_crowd).toBeNull(); // before: label "simulated", consensus of 23 votes
    expect(round.vote_sources).toMatchObject({
      synthetic_votes: 0,
      replayed_votes: 0,
      other_mode_votes: crowd,
    });
    expect(round.human_status).toBe('No human votes yet in this round.');
    expect(round.developer_note).toMatch(/simulated_crowd is null outside simulated mode/);
    const shared = await json<SharedIntelligenceResponse>('arena/get_shared_intelligence.php');
    expect(shared.simulated_crowd).toBeNull();
    expect(shared.vote_sources.synthetic_votes).toBe(0);
    expect(shared.system_integrity.synthetic_votes_present).toBe(false);
    expect(shared.system_integrity.notes.join(' ')).toMatch(/votes of another data mode \(simulated\)/);

    const history = await json<{ rows: Array<Record<string, unknown>> }>(
      'api/history/human-consensus/latest.json',
    );
    // Before: synthetic_votes 23 in the live row.
    expect(history.rows.at(-1)).toMatchObject({ data_mode: 'live', human_votes: 0, synthetic_votes: 0 });
  }, 120_000);
});

describe("a person's vote counts with its round", () => {
  const ROUND = roundAt(T0);

  it('is left out of a live file when the round was called in simulated mode, and named', () => {
    const s = tempStore();
    stores.push(s);
    const vote = { asset: ROUND.asset, prediction: 'BEARISH', voter: 'v1', round_id: ROUND.id };
    importVotesJsonl(s, JSON.stringify(vote), T0 - MINUTE);
    step(s, T0 + MINUTE, { mode: 'simulated' }); // records the round's call in simulated mode
    const synthetic = step(s, T0 + 2 * MINUTE, { mode: 'simulated' }).statistics.arena.vote_sources;
    expect(synthetic.human_votes).toBe(1);
    const live = step(s, T0 + 3 * MINUTE, { mode: 'live', seed: null }).statistics;
    expect(live.arena).toMatchObject({ rounds_with_votes: 0, rounds_with_human_votes: 0, votes_total: 0 });
    expect(live.arena.distinct_human_voters).toBe(0);
    expect(live.arena.vote_sources).toMatchObject({
      human_votes: 0,
      synthetic_votes: 0,
      other_mode_votes: 1 + synthetic.synthetic_votes,
    });
    expect(live.arena.vote_sources.synthetic_label).toMatch(/another data mode \(simulated\)/);
  });

  it('counts in every mode while no run has called the round, and synthetic votes in simulated mode only', () => {
    const s = tempStore();
    stores.push(s);
    const next = roundAt(T0 + HOUR);
    const vote = { asset: next.asset, prediction: 'BULLISH', voter: 'v2', round_id: next.id };
    importVotesJsonl(s, JSON.stringify(vote), T0);
    step(s, T0 + MINUTE, { mode: 'simulated' });
    for (const mode of ['live', 'replay'] as const) {
      const arena = step(s, T0 + 2 * MINUTE, { mode, seed: null }).statistics.arena;
      expect(arena).toMatchObject({ rounds_with_human_votes: 1, votes_total: 1 });
      expect(arena.vote_sources).toMatchObject({ human_votes: 1, synthetic_votes: 0 });
    }
  });
});
