// `emi arena import FILE`, `emi arena vote ...` and `emi arena status`. Errors print as one line with a non-zero
// exit code, never as a stack trace.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { roundAt, roundInfo } from '../engines/arena/rounds.ts';
import { iso } from '../engines/clock.ts';
import { count, roundTally } from './repo.ts';
import { openArenaStore, schemaVersion, type ArenaStore } from './store.ts';
import { addHumanVotes, importVotesJsonl, VoteValidationError } from './votes.ts';
import { describeRepair, repairStore } from './repair.ts';
import { runOwner, withFileRunLock } from './lock.ts';
import { dirname, join } from 'node:path';

export interface ArenaCommandDeps {
  storePath: () => string;
  /** Wall clock; injectable for tests. */
  now?: () => number;
  /** Where lines go; defaults to the console. */
  out?: (line: string) => void;
  err?: (line: string) => void;
}

const withStore = <T>(deps: ArenaCommandDeps, fn: (store: ArenaStore) => T): T => {
  const store = openArenaStore(deps.storePath());
  try {
    return fn(store);
  } finally {
    store.close();
  }
};

/** Runs an action; any failure becomes one line on stderr and exit code 1. */
const guarded =
  <A extends unknown[]>(deps: ArenaCommandDeps, action: (...args: A) => void) =>
  (...args: A): void => {
    try {
      action(...args);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const prefix = error instanceof VoteValidationError ? 'nothing was written: ' : '';
      (deps.err ?? console.error)(`emi arena: ${prefix}${message.replace(/\s*\n\s*/g, ' ')}`);
      process.exitCode = 1;
    }
  };

const statusLines = (store: ArenaStore, now: number): string[] => {
  const round = roundAt(now);
  const info = roundInfo(round, now);
  const tally = roundTally(store.db, round.id);
  const n = (sql: string) => count(store.db, sql);
  const lock = store.db.prepare('SELECT owner, expires_at_ms FROM run_lock WHERE id = 1').get() as
    { owner: string; expires_at_ms: number } | undefined;
  return [
    `store: ${store.path} (schema version ${schemaVersion(store)})`,
    `open round: ${info.round_id} ${info.start} to ${info.end}, ${info.timer} left`,
    `votes in this round: ${tally.human} human, ${tally.synthetic} synthetic`,
    `brain calls: ${n('SELECT COUNT(*) AS n FROM brain_predictions')} ` +
      `(${n('SELECT COUNT(*) AS n FROM brain_predictions WHERE replayed = 1')} replayed)`,
    `outcomes: ${n("SELECT COUNT(*) AS n FROM outcomes WHERE status = 'resolved'")} resolved, ` +
      `${n("SELECT COUNT(*) AS n FROM outcomes WHERE status = 'voided'")} voided; ` +
      `lessons: ${n('SELECT COUNT(*) AS n FROM lessons')}`,
    `generator runs: ${n("SELECT COUNT(*) AS n FROM run_log WHERE status = 'ok'")} ok, ` +
      `${n("SELECT COUNT(*) AS n FROM run_log WHERE status = 'failed'")} failed`,
    lock ? `run lock: held by ${lock.owner} until ${iso(lock.expires_at_ms)}` : 'run lock: free',
  ];
};

export function registerArenaCommands(program: Command, deps: ArenaCommandDeps): void {
  const now = deps.now ?? Date.now;
  const out = deps.out ?? console.log;
  const arena = program
    .command('arena')
    .description('arena rounds and votes (stored in the arena SQLite store)');

  arena
    .command('import')
    .description(
      'import votes from a JSON Lines file: {"asset","prediction","voter","at"?} per line; all or none',
    )
    .argument('<file>', 'JSON Lines file')
    .action(
      guarded(deps, (file: string) => {
        const text = readFileSync(file, 'utf8');
        const written = withStore(deps, (store) => importVotesJsonl(store, text, now()));
        out(`imported ${written} votes from ${file}`);
      }),
    );

  arena
    .command('vote')
    .description("add one vote, received now, to the asset's next round (or --round)")
    .requiredOption('--asset <symbol>', 'BTC, ETH, XRP, SOL, ALGO, XLM or HBAR')
    .requiredOption('--prediction <value>', 'BULLISH, BEARISH or NEUTRAL')
    .requiredOption('--voter <id>', 'voter id (stored only as a salted hash)')
    .option('--round <id>', "round id, e.g. BTC-20250101T10Z; default the asset's round open to votes now")
    .action(
      guarded(deps, (o: { asset: string; prediction: string; voter: string; round?: string }) => {
        const raw = { asset: o.asset, prediction: o.prediction, voter: o.voter, round_id: o.round };
        const [written] = withStore(deps, (store) => addHumanVotes(store, [{ label: null, raw }], now()));
        out(`vote recorded for ${written!.roundId}`);
      }),
    );

  arena
    .command('repair')
    .description(
      'check the store; if damaged, save it aside and restore the newest daily backup, or start fresh',
    )
    .action(async () => {
      const file = deps.storePath();
      try {
        // Under the run lock a run takes when the store cannot be opened: no run writes while the file moves.
        const result = await withFileRunLock(join(dirname(file), 'run.lock'), runOwner(), () =>
          repairStore(file, now()),
        );
        out(describeRepair(file, result));
      } catch (error) {
        (deps.err ?? console.error)(`emi arena: repair failed: ${(error as Error).message}`);
        process.exitCode = 1;
      }
    });

  arena
    .command('status')
    .description('show the open round, counts and the run lock')
    .action(
      guarded(deps, () => {
        for (const line of withStore(deps, (store) => statusLines(store, now()))) out(line);
      }),
    );
}
