// `emi arena import FILE`, `emi arena vote ...` and `emi arena status`. Errors print as one line (a refused import:
// a count and its problems, one per line) with a non-zero exit code, never as a stack trace.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { USAGE_EXIT_CODE } from '../cli-options.ts';
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

/** Input the command refuses, as the lines to print: exit code 2, as other usage mistakes. */
class RefusedInput extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

/**
 * Runs an action; a refused input prints its lines and exits 2 (a refused vote: nothing was written), any other
 * failure becomes one line on stderr and exit code 1.
 */
const guarded =
  <A extends unknown[]>(deps: ArenaCommandDeps, action: (...args: A) => void) =>
  (...args: A): void => {
    const err = deps.err ?? console.error;
    try {
      action(...args);
    } catch (error) {
      if (error instanceof RefusedInput) {
        for (const line of error.lines) err(line);
        process.exitCode = USAGE_EXIT_CODE;
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      const refused = error instanceof VoteValidationError;
      err(`emi arena: ${refused ? 'nothing was written: ' : ''}${message.replace(/\s*\n\s*/g, ' ')}`);
      process.exitCode = refused ? USAGE_EXIT_CODE : 1;
    }
  };

/** The vote file's text; a file that cannot be read is refused in one line saying why. */
const readVoteFile = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a folder, not a file'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : message;
    throw new RefusedInput([`emi arena: cannot read ${file}: ${why}; nothing was imported`]);
  }
};

/** A refused import: one line for one problem, else a count and the problems one per line (the first 20). */
const importRefused = (file: string, error: VoteValidationError): RefusedInput => {
  const head = `emi arena: nothing imported from ${file}`;
  if (error.problems.length === 1) return new RefusedInput([`${head}: ${error.problems[0]}`]);
  return new RefusedInput([
    `${head}: ${error.problems.length} problems`,
    ...error.shown.map((problem) => `  ${problem}`),
  ]);
};

/** "simulated 13, replay 2": calls per recorded data mode (unknown: recorded before the store kept it). */
const callsByMode = (store: ArenaStore): string => {
  const rows = store.db
    .prepare(
      `SELECT COALESCE(data_mode, 'unknown') AS mode, COUNT(*) AS n FROM brain_predictions
       GROUP BY data_mode ORDER BY data_mode IS NULL, data_mode`,
    )
    .all() as Array<{ mode: string; n: number }>;
  return rows.length === 0 ? 'no data mode yet' : rows.map((r) => `${r.mode} ${r.n}`).join(', ');
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
      `(${n('SELECT COUNT(*) AS n FROM brain_predictions WHERE replayed = 1')} replayed; ${callsByMode(store)})`,
    `outcomes: ${n("SELECT COUNT(*) AS n FROM outcomes WHERE status = 'resolved'")} resolved, ` +
      `${n("SELECT COUNT(*) AS n FROM outcomes WHERE status = 'voided'")} voided; ` +
      `lessons: ${n('SELECT COUNT(*) AS n FROM lessons')}`,
    `generator runs: ${n("SELECT COUNT(*) AS n FROM run_log WHERE status = 'ok'")} ok, ` +
      `${n("SELECT COUNT(*) AS n FROM run_log WHERE status = 'failed'")} failed`,
    lock ? `run lock: held by ${lock.owner} until ${iso(lock.expires_at_ms)}` : 'run lock: free',
  ];
};

/**
 * The last run as recorded in the state folder's last-run.json, one line: a run that failed (a folder it may not
 * write to, a full disk) shows here even though it never reached the store's run log.
 */
export function lastRunLine(stateDir: string): string {
  const file = join(stateDir, 'last-run.json');
  let report: { status?: unknown; finished_at?: unknown; error?: unknown };
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as typeof report;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return `last run: ${missing ? 'none recorded' : 'unreadable'} (${file})`;
  }
  const error = typeof report.error === 'string' && report.error ? `: ${report.error}` : '';
  return `last run: ${String(report.status)}, finished ${String(report.finished_at)}${error}`;
}

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
        const text = readVoteFile(file);
        const written = withStore(deps, (store) => {
          try {
            return importVotesJsonl(store, text, now());
          } catch (error) {
            throw error instanceof VoteValidationError ? importRefused(file, error) : error;
          }
        });
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
    .description('show the last run, the open round, counts and the run lock')
    .action(
      guarded(deps, () => {
        // First, so that it shows even when the store cannot be opened.
        out(lastRunLine(dirname(deps.storePath())));
        for (const line of withStore(deps, (store) => statusLines(store, now()))) out(line);
      }),
    );
}
